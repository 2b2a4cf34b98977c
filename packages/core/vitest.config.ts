import { readFileSync } from 'node:fs';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { defineZkrxVitest } from '../../vitest.shared.ts';

const config = defineZkrxVitest(import.meta.dirname);
const projects = config.test?.projects as TestProjectInlineConfiguration[];
const integration = projects.find((project) => project.test?.name === 'integration');
if (!integration) throw new Error('vitest.shared.ts has no integration project');

// The conformance suite: the same integration tests on the native transport (the stock
// `zookeeper` binding), after those on the default transport — on the Node lines where the
// binding builds (scripts/runtimes.json: 22 and 24). On the others (Node 26) nativeTransport()
// throws at once, which src/native/native-transport.test.ts checks there.
const runtimes = JSON.parse(
  readFileSync(new URL('../../scripts/runtimes.json', import.meta.url), 'utf8'),
) as { node: { bindingLines: string[] } };
const major = (version: string) => version.split('.')[0];
if (runtimes.node.bindingLines.some((line) => major(line) === major(process.versions.node))) {
  projects.push({
    ...integration,
    test: {
      ...integration.test,
      name: 'integration-native',
      env: { ZKRX_TRANSPORT: 'native' },
      sequence: { groupOrder: 1 },
    },
  });
}

export default config;
