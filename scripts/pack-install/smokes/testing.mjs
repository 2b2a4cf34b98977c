/**
 * @zkrx/testing from its tarball, no vitest installed (it declares none): a server started,
 * asked `ruok` and stopped, and the vitest global setup run by hand.
 */
export default async function smoke(load) {
  const { startZooKeeper, testZooKeeper, TEST_CONNECT_ENV } = await load('@zkrx/testing');
  const server = await startZooKeeper();
  const answer = await server.fourLetterWord('ruok');
  await server.close();
  if (answer !== 'imok') throw new Error(`ruok answered ${answer}`);

  const globalSetup = await load('@zkrx/testing/vitest-global-setup');
  const setup = globalSetup.default ?? globalSetup;
  const provided = {};
  delete process.env[TEST_CONNECT_ENV];
  const teardown = await setup({ provide: (key, value) => (provided[key] = value) });
  const { connectString } = await testZooKeeper();
  if (connectString !== provided.zookeeper?.connectString) throw new Error('not provided');
  await teardown();
  return `@zkrx/testing: a server answered ${answer}; the global setup provided ${connectString}`;
}
