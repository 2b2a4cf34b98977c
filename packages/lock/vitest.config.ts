import { defineZkrxVitest } from '../../vitest.shared';

export default defineZkrxVitest(import.meta.dirname);
