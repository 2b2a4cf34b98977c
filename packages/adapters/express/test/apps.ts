/**
 * Test support for the Express adapter: the same suites on Express 5 and Express 4, real HTTP
 * servers on loopback, and requests a test can abort mid-handler.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import { afterEach } from 'vitest';

/** One Express major version: the suites run once per flavour. */
export interface Flavour {
  readonly name: string;
  /** Creates an app (typed with Express 5's types; Express 4's behaves the same at run time). */
  readonly create: () => express5.Express;
}

export const flavours: readonly Flavour[] = [
  { name: 'Express 5', create: () => express5() },
  { name: 'Express 4', create: () => (express4 as unknown as typeof express5)() },
];

const servers = new Set<http.Server>();

afterEach(async () => {
  const open = [...servers];
  servers.clear();
  await Promise.all(
    open.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** Listens on a free loopback port (closed after the test); returns the base URL. */
export async function listen(app: express5.Express): Promise<string> {
  const server = http.createServer(app);
  servers.add(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A request the test can abort (the client goes away mid-request). */
export interface OpenRequest {
  /** Resolves with the status once answered; rejects if aborted. */
  readonly response: Promise<number>;
  /** Destroys the request's socket: the server sees the connection close. */
  abort(): void;
}

/** Sends a request with a plain `http.request` (no keep-alive), abortable. */
export function openRequest(url: string, method = 'POST'): OpenRequest {
  const request = http.request(url, { method, agent: false });
  const response = new Promise<number>((resolve, reject) => {
    request.on('response', (incoming) => {
      incoming.resume();
      incoming.on('end', () => resolve(incoming.statusCode ?? 0));
    });
    request.on('error', reject);
  });
  response.catch(() => {});
  request.end();
  return { response, abort: () => request.destroy() };
}

/** A promise the test resolves by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
