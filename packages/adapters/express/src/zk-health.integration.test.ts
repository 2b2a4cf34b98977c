/**
 * zkHealth on real Express apps (5 and 4): up while the session is usable, down (503) when
 * the connection is lost or the client is closed.
 */
import { connectedClient } from '@zkrx/test-support';
import { startProxy, testZooKeeper } from '@zkrx/testing';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { flavours } from '../test/apps';
import { type ZkHealthOptions, zkHealth } from './index';

describe.each(flavours)('zkHealth on $name', (flavour) => {
  it('answers 200 up with the session id while connected', async () => {
    const client = await connectedClient();
    const app = flavour.create();
    app.get('/health', zkHealth({ client }));
    const response = await request(app).get('/health');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      status: 'up',
      state: 'connected',
      sessionId: client.sessionId,
    });
  });

  it('answers 503 down while the connection is lost, up again once reconnected', async () => {
    const { connectString } = await testZooKeeper();
    const proxy = await startProxy(connectString);
    try {
      const client = await connectedClient({ connect: proxy.connectString });
      const app = flavour.create();
      app.get('/health', zkHealth({ client }));
      proxy.refuse(true);
      proxy.cut();
      await vi.waitUntil(() => client.state === 'suspended');
      const down = await request(app).get('/health');
      expect(down.status).toBe(503);
      expect(down.body).toEqual({ status: 'down', state: 'suspended' });
      proxy.refuse(false);
      await vi.waitUntil(() => client.state === 'reconnected', { timeout: 5_000 });
      const up = await request(app).get('/health');
      expect(up.status).toBe(200);
      expect(up.body).toMatchObject({ status: 'up', state: 'reconnected' });
    } finally {
      await proxy.close();
    }
  });

  it('answers 503 down once the client is closed', async () => {
    const client = await connectedClient();
    const app = flavour.create();
    app.get('/health', zkHealth({ client }));
    await client.close();
    const response = await request(app).get('/health');
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: 'down', state: 'closed' });
  });
});

describe('zkHealth options', () => {
  it('need a client', () => {
    expect(() => zkHealth(undefined as unknown as ZkHealthOptions)).toThrow(
      /zkHealth: expected an options object/,
    );
    expect(() => zkHealth({} as ZkHealthOptions)).toThrow(/zkHealth: client must be a ZkClient/);
  });
});
