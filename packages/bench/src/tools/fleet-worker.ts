/**
 * One process of a `fleet-scale` run with `--processes` > 1: its members (a FleetHost), driven
 * by the scenario over the IPC channel. Each message in is `{ seq, command }`; each answer out
 * is `{ seq, value }` or `{ seq, error }`, and every assignment change is an event
 * (`{ event }`), sent in the order it happened.
 *
 *   (forked by scenarios/fleet-scale.ts with the settings as its one argument, JSON)
 */
import { type FleetCommand, FleetHost, type FleetHostSettings } from '../fleet-host';

const settings = JSON.parse(process.argv[2] as string) as FleetHostSettings;
const send = (message: unknown) => process.send?.(message);
const host = new FleetHost(settings, (event) => send({ event }));

process.on('message', (message: { seq: number; command: FleetCommand }) => {
  host.run(message.command).then(
    (value) => {
      send({ seq: message.seq, value });
      if (message.command.type === 'close') process.disconnect();
    },
    (error: unknown) => send({ seq: message.seq, error: String(error) }),
  );
});
process.on('disconnect', () => {
  void host.close().finally(() => process.exit(0));
});
