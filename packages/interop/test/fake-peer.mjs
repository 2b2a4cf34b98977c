// A fake peer for the driver's unit tests: speaks the peer protocol with canned behaviour.
//   node fake-peer.mjs <mode>
// Modes: normal (replies; "acquire" of path "/slow" answers after the next one), crash-on-acquire
// (writes to stderr and exits 3), start-error (reports an error event instead of ready),
// silent (never ready), stubborn (ignores quit and stdin's end).
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'normal';
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

if (mode === 'start-error') {
  send({ event: 'error', message: 'cannot reach ZooKeeper' });
  process.exit(2);
}
if (mode !== 'silent') send({ event: 'ready', impl: 'fake', version: '0.0.1', pid: process.pid });
if (mode === 'stubborn') setInterval(() => {}, 1_000);

let held;
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const request = JSON.parse(line);
  if (request.cmd === 'quit') {
    send({ id: request.id, ok: true });
    if (mode !== 'stubborn') process.exit(0);
    return;
  }
  if (request.cmd === 'acquire' && mode === 'crash-on-acquire') {
    process.stderr.write('fake peer: crashing as asked\n');
    process.exit(3);
  }
  if (request.cmd === 'acquire' && request.path === '/slow') {
    held = request;
    return;
  }
  if (request.cmd === 'acquire' && request.timeoutMs !== undefined) {
    send({ id: request.id, ok: false, error: 'timeout', message: 'not acquired' });
    return;
  }
  if (request.cmd === 'acquire') {
    send({ id: request.id, ok: true, node: `${request.path}/n-${request.id}` });
    send({ event: 'connection', session: 'default', state: 'CONNECTED' });
    if (held) {
      send({ id: held.id, ok: true, node: `${held.path}/n-${held.id}` });
      held = undefined;
    }
    return;
  }
  send({ id: request.id, ok: true });
});
lines.on('close', () => {
  if (mode !== 'stubborn') process.exit(0);
});
