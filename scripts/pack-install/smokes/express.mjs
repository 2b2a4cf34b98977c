/** @zkrx/express from its tarball: an Express app with a locked route and a health route. */
import { readFileSync } from 'node:fs';

export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { leaseOf, zkHealth, zkLock } = await load('@zkrx/express');
  const expressModule = await load('express');
  const express = expressModule.default ?? expressModule;
  const client = createClient({ connect });
  await client.connected();
  const app = express();
  app.get('/health', zkHealth({ client }));
  app.post(
    '/orders/:id',
    zkLock({ client, path: (request) => `${root}/${request.params.id}` }),
    (_request, response) => {
      response.json({ fencingToken: leaseOf(response).fencingToken });
    },
  );
  const server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const health = await fetch(`${base}/health`);
    if (health.status !== 200) throw new Error(`health answered ${health.status}`);
    const order = await fetch(`${base}/orders/42`, { method: 'POST' });
    const body = await order.json();
    if (order.status !== 200 || typeof body.fencingToken !== 'number') {
      throw new Error(`POST answered ${order.status} ${JSON.stringify(body)}`);
    }
    return `@zkrx/express on express ${installedVersion('express')}: health 200, a request under a lock (token ${body.fencingToken})`;
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await client.promises.delete(root).catch(() => {});
    await client.close();
  }
}

function installedVersion(name) {
  return JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version;
}
