/**
 * `zkrx members --watch` and `zkrx partitions --watch`: the fleet at the path, read again on
 * every change under it (watch-screen.ts), with the joins, leaves and moves seen between two
 * reads.
 */

import { type FleetEvent, fleetEvents } from '@zkrx/console';
import type { ZkClient } from '@zkrx/core';
import { type InspectedFleet, inspectFleet } from '@zkrx/fleet';
import { type FleetCommand, fleetEventLine, renderMembers, renderPartitions } from './fleet';
import { formatClock } from './format';
import { type WatchScreenOptions, watchScreen } from './watch-screen';

/** Lines of recent changes kept (fewer shown on a short terminal). */
const RECENT_LINES = 10;

/** The live view of `members` and `partitions` (see watch-screen.ts). */
export function fleetView(
  client: ZkClient,
  path: string,
  options: WatchScreenOptions & { readonly command: FleetCommand },
): Promise<number> {
  const { command, paint } = options;
  let fleet: InspectedFleet | null | undefined;
  let events: FleetEvent[] = [];

  const read = async () => {
    const found = await inspectFleet(client, path);
    const at = Date.now();
    return () => {
      const changes = fleetEvents(fleet, found, at);
      fleet = found;
      events = [...events, ...changes].slice(-100);
      return { at, path, fleet: found, events: changes };
    };
  };

  const frame = (now: number) => {
    const body =
      fleet === undefined
        ? ['reading…']
        : fleet === null || (command === 'partitions' && fleet.kind !== 'partition')
          ? [
              `No ${command === 'members' ? 'members' : 'partition'} at ${path} yet. Waiting for changes.`,
            ]
          : (command === 'members' ? renderMembers : renderPartitions)(fleet, {
              command,
              now,
              paint,
            });
    const recent = events
      .slice(-RECENT_LINES)
      .reverse()
      .map((event) => `  ${fleetEventLine(event, formatClock)}`);
    return { top: [], body, recentTitle: `Recent changes (${path})`, recent };
  };

  return watchScreen(client, path, options, { read, maxTornReads: 0, frame });
}
