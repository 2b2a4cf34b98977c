/** @zkrx/core from its tarball: connect, create, read, a typed error, delete, close. */
export default async function smoke(load, { connect, root }) {
  const { createClient, isZkError } = await load('@zkrx/core');
  const { firstValueFrom } = await load('rxjs');
  const client = createClient({ connect });
  try {
    await client.connected();
    const { path } = await client.promises.create(`${root}/node`, 'hello', {
      parents: 'persistent',
    });
    const { data } = await firstValueFrom(client.get(path));
    if (data.toString() !== 'hello') throw new Error(`read back ${data}`);
    const again = await client.promises.create(path).catch((error) => error);
    if (!isZkError(again, 'NodeExists')) throw new Error(`a second create gave ${again}`);
    await client.promises.delete(path);
    await client.promises.delete(root);
  } finally {
    await client.close();
  }
  return `@zkrx/core: session ${client.sessionId ?? 'closed'}, a node created, read and deleted`;
}
