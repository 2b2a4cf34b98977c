import type { TestProjectInlineConfiguration } from 'vitest/config';
import { defineZkrxVitest } from '../../vitest.shared.ts';

const config = defineZkrxVitest(import.meta.dirname);
const projects = config.test?.projects as TestProjectInlineConfiguration[];
const integration = projects.find((project) => project.test?.name === 'integration');
if (!integration) throw new Error('vitest.shared.ts has no integration project');

// The conformance suite: the same integration tests on the native transport (the stock
// `zookeeper` binding), after those on the default transport.
projects.push({
  ...integration,
  test: {
    ...integration.test,
    name: 'integration-native',
    env: { ZKRX_TRANSPORT: 'native' },
    sequence: { groupOrder: 1 },
  },
});

export default config;
