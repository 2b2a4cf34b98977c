import { defineZkrxVitest } from '../../vitest.shared.ts';

export default defineZkrxVitest(import.meta.dirname);
