/**
 * The console alone in a process, for the bench to measure its memory: `console-process.ts
 * <connect>` prints its URL, and serves until SIGTERM.
 */
import { createClient } from '@zkrx/core';
import { startConsole } from '../src/index';

const client = createClient({ connect: process.argv[2] as string });
await client.connected();
const running = await startConsole({ client });
process.stdout.write(`${running.url}\n`);
process.on('SIGTERM', () => {
  void running
    .close()
    .then(() => client.close())
    .then(() => process.exit(0));
});
