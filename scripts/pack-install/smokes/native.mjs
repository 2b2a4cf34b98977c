/**
 * `@zkrx/core/native` from its tarball, beside the stock `zookeeper` binding: `expect: 'native'`
 * writes and reads a node through the C client; `expect: 'unavailable'` (no binding for this
 * runtime) checks that `nativeTransport()` throws at once — before any client exists — the
 * ZkError of `@zkrx/core` that names the default transport.
 */
export default async function smoke(load, { connect, root, expect }) {
  const { createClient, ZkError } = await load('@zkrx/core');
  const { nativeTransport } = await load('@zkrx/core/native');
  if (expect === 'unavailable') {
    let thrown;
    try {
      nativeTransport();
    } catch (error) {
      thrown = error;
    }
    if (!thrown) throw new Error('nativeTransport() did not throw');
    if (!ZkError.isInstance(thrown) || thrown.code !== 'SystemError') {
      throw new Error(`nativeTransport() threw something else: ${thrown}`);
    }
    if (!thrown.message.includes('the default transport')) {
      throw new Error(
        `nativeTransport()'s error does not name the default transport: ${thrown.message}`,
      );
    }
    return `nativeTransport() throws at once: ${thrown.message.split(';')[0].replace('nativeTransport(): ', '')}`;
  }
  const client = createClient({ connect, transport: nativeTransport() });
  try {
    await client.connected();
    if (client.transportName !== 'native') throw new Error(`transport ${client.transportName}`);
    const { path } = await client.promises.create(`${root}/native`, 'through the C client', {
      parents: 'persistent',
    });
    const { data } = await client.promises.get(path);
    if (data.toString() !== 'through the C client') throw new Error(`read back ${data}`);
    await client.promises.delete(path);
    await client.promises.delete(root);
  } finally {
    await client.close();
  }
  return `@zkrx/core/native: a node written and read through the stock zookeeper binding`;
}
