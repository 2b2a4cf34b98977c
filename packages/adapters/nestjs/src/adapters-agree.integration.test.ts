/**
 * The two adapters agree on what a lock is: by default Nest's `@Locked(path)` and Express's
 * `zkLock({ key: () => path })` take the same lock (the mutex), so they exclude each other —
 * and with `lock: 'read'` on either side, a reader still waits for the other's holder.
 */
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import { type LockChoice, zkLock } from '@zkrx/express';
import { connectedClient, lockPath } from '@zkrx/test-support';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { startApp } from '../test/nest-apps';
import { Locked } from './index';

function holdingService(path: string) {
  @Injectable()
  class Holder {
    release: () => void = () => {};
    private enter: () => void = () => {};
    readonly entered = new Promise<void>((resolve) => {
      this.enter = resolve;
    });

    @Locked(path)
    async hold(): Promise<void> {
      this.enter();
      await new Promise<void>((resolve) => {
        this.release = resolve;
      });
    }
  }
  return Holder;
}

async function expressApp(path: string, lock: LockChoice | undefined) {
  const client = await connectedClient();
  const app = express();
  app.post(
    '/work',
    zkLock({ client, key: () => path, wait: false, ...(lock ? { lock } : {}) }),
    (_request, response) => {
      response.json({ ran: true });
    },
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`;
  return {
    post: () => fetch(url, { method: 'POST' }).then((response) => response.status),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('@Locked and zkLock on one path', () => {
  it.each([undefined, 'mutex', 'read', 'write'] as const)(
    'exclude each other (Express lock: %s)',
    async (lock) => {
      const path = lockPath('shared');
      const Holder = holdingService(path);
      const nest = await startApp({ providers: [Holder] });
      const holder = nest.get(Holder);
      const http = await expressApp(path, lock);
      try {
        const running = holder.hold();
        await holder.entered;
        // Busy while the Nest method holds the lock (wait: false answers 409 at once).
        expect(await http.post()).toBe(409);
        holder.release();
        await running;
        // Free once it returned: the request runs (its release may take a round trip more).
        let status = await http.post();
        while (status === 409) status = await http.post();
        expect(status).toBe(200);
      } finally {
        holder.release();
        await http.close();
      }
    },
  );
});
