/**
 * `zkrx members <path>` and `zkrx partitions <path>`: a membership group or a partition of
 * @zkrx/fleet, printed once (a table, or JSON), and the lines of the live view's changes (found by
 * @zkrx/console's `fleetEvents`).
 */

import type { FleetEvent } from '@zkrx/console';
import type { ZkClient } from '@zkrx/core';
import { type InspectedFleet, type InspectedHold, inspectFleet } from '@zkrx/fleet';
import { alignedColumns, formatData, formatDuration, formatSession, type Paint } from './format';
import type { CliIo } from './io';

export type FleetCommand = 'members' | 'partitions';

export interface FleetRenderOptions {
  readonly command: FleetCommand;
  /** The time ages are counted to (ms since the epoch). */
  readonly now: number;
  readonly paint: Paint;
}

/** A table: its header (dimmed), then its rows, in aligned columns. */
function table(header: readonly string[], rows: readonly string[][], paint: Paint): string[] {
  const line = alignedColumns(header, rows);
  return [paint.dim(line(header)), ...rows.map(line)];
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** The title line of a fleet: its path, kind and counts. */
export function fleetTitle(fleet: InspectedFleet, paint: Paint): string {
  if (fleet.kind === 'members') {
    return `${paint.bold(fleet.path)}  membership · ${plural(fleet.members.length, 'member')}`;
  }
  const owned = fleet.items.filter((item) => item.owner !== undefined).length;
  const poisonCount = fleet.poisoned.length + fleet.poisonedUnlisted;
  const poison = poisonCount === 0 ? '' : ` · ${paint.red(`${poisonCount} poison`)}`;
  const balance =
    fleet.balanced === undefined
      ? ''
      : fleet.balanced
        ? ` · ${paint.green('balanced')}`
        : ` · ${paint.yellow('not balanced')}`;
  return `${paint.bold(fleet.path)}  partition · ${plural(fleet.members.length, 'member')} · ${plural(fleet.items.length, 'item')} (${owned} owned)${poison}${balance}`;
}

/** The lines of `zkrx members` (no trailing newline). */
export function renderMembers(fleet: InspectedFleet, options: FleetRenderOptions): string[] {
  const { paint, now } = options;
  const partition = fleet.kind === 'partition';
  const header = ['#', 'MEMBER', 'SESSION', 'DATA', 'JOINED', ...(partition ? ['ITEMS'] : [])];
  const rows = fleet.members.map((member, index) => [
    String(index + 1),
    member.id,
    formatSession(member.sessionId) + (member.ownSession ? ' (me)' : ''),
    formatData(member.data),
    `${formatDuration(now - member.joinedAt)} ago`,
    ...(partition ? [String(member.items.length)] : []),
  ]);
  return [fleetTitle(fleet, paint), ...table(header, rows, paint)];
}

function holder(hold: InspectedHold): string {
  return hold.member ?? `not a member (${formatData(hold.data, 16)})`;
}

/** The lines of `zkrx partitions` (no trailing newline). */
export function renderPartitions(fleet: InspectedFleet, options: FleetRenderOptions): string[] {
  const { paint, now } = options;
  const poisoned = new Map(fleet.poisoned.map((entry) => [entry.item, entry]));
  // A poison item has no lock path when nobody could make one: it gets a row all the same.
  const listed = new Set(fleet.items.map((item) => item.item));
  const items = [
    ...fleet.items,
    ...fleet.poisoned
      .filter((entry) => !listed.has(entry.item))
      .map((entry) => ({ item: entry.item, owner: undefined, waiting: [] })),
  ].sort((a, b) => (a.item < b.item ? -1 : a.item > b.item ? 1 : 0));
  const rows = items.map((item) => {
    const owner = item.owner;
    const waiting =
      item.waiting.length === 0 ? '-' : item.waiting.map((hold) => holder(hold)).join(', ');
    const poison = poisoned.get(item.item);
    if (!owner && poison) {
      return [
        item.item,
        paint.red(`poison: ${poison.code} (${poison.member})`),
        '-',
        '-',
        '-',
        waiting,
      ];
    }
    if (!owner) return [item.item, paint.yellow('free'), '-', '-', '-', waiting];
    return [
      item.item,
      owner.member === undefined ? paint.yellow(holder(owner)) : owner.member,
      String(owner.fencingToken),
      formatSession(owner.sessionId),
      `held ≤${formatDuration(now - owner.createdAt)}`,
      waiting,
    ];
  });
  const lines = [fleetTitle(fleet, paint)];
  if (rows.length > 0) {
    lines.push(...table(['ITEM', 'OWNER', 'TOKEN', 'SESSION', 'SINCE', 'WAITING'], rows, paint));
  }
  if (fleet.members.length > 0) {
    lines.push(
      `  ${paint.dim('owned:')} ${fleet.members.map((member) => `${member.id} ${member.items.length}`).join(' · ')}`,
    );
  }
  if (fleet.coordinator !== undefined) {
    lines.push(`  ${paint.dim('coordinator:')} ${fleet.coordinator}`);
  } else if (fleet.members.length > 0) {
    lines.push(
      `  ${paint.dim('coordinator:')} ${paint.red('none')} (no member holds ${fleet.path}/coordinator: nothing new is taken)`,
    );
  }
  // A rolling deploy: members of two versions state two item sets (each is assigned from its own).
  const sets = new Map<string, { size: number; members: string[] }>();
  for (const member of fleet.members) {
    if (!member.itemSet) continue;
    const entry = sets.get(member.itemSet.digest) ?? { size: member.itemSet.size, members: [] };
    entry.members.push(member.id);
    sets.set(member.itemSet.digest, entry);
  }
  if (sets.size > 1) {
    for (const [digest, entry] of sets) {
      lines.push(
        `  ${paint.dim('item set:')} ${digest.slice(0, 8)} (${plural(entry.size, 'item')}): ${entry.members.join(', ')}`,
      );
    }
  }
  for (const member of fleet.members) {
    for (const problem of member.problems) {
      const what =
        problem.task === 'join'
          ? `joined again after ${plural(problem.count, 'failure')} in a row`
          : `${problem.task}${problem.count > 1 ? ` ×${problem.count}` : ''}`;
      lines.push(
        `  ${paint.dim('problem:')} ${member.id}: ${paint.yellow(what)}, last ${formatDuration(now - problem.at)} ago: ${problem.message}`,
      );
    }
  }
  for (const entry of fleet.poisoned) {
    lines.push(
      `  ${paint.dim('poison:')} ${entry.item}: ${entry.message} (delete ${entry.node} to try it again)`,
    );
  }
  if (fleet.poisonedUnlisted > 0) {
    lines.push(
      `  ${paint.dim('poison:')} ${paint.red(`${plural(fleet.poisonedUnlisted, 'report')} not listed`)}: more than one reply of this client's maxFrameBytes holds (${fleet.path}/poison)`,
    );
  }
  return lines;
}

/** What a listing found nothing of, in words. */
function nothingFound(command: FleetCommand, path: string, fleet: InspectedFleet | null): string {
  if (!fleet)
    return `No ${command === 'members' ? 'members' : 'partition'} at ${path} (${path} does not exist).`;
  return `No partition at ${path}: it is a membership group of ${plural(fleet.members.length, 'member')} (zkrx members ${path}).`;
}

/** Prints the members or the partition at `path`; resolves the exit code. */
export async function listFleet(
  client: ZkClient,
  path: string,
  options: { command: FleetCommand; json: boolean; paint: Paint; io: CliIo },
): Promise<number> {
  const { command, io } = options;
  const fleet = await inspectFleet(client, path);
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ path, fleet }, null, 2)}\n`);
    return 0;
  }
  if (!fleet || (command === 'partitions' && fleet.kind !== 'partition')) {
    io.stdout.write(`${nothingFound(command, path, fleet)}\n`);
    return 0;
  }
  const render = command === 'members' ? renderMembers : renderPartitions;
  io.stdout.write(
    `${render(fleet, { command, now: Date.now(), paint: options.paint }).join('\n')}\n`,
  );
  return 0;
}

/** One line of the live view's recent changes. */
export function fleetEventLine(event: FleetEvent, clock: (at: number) => string): string {
  const start = `${clock(event.at)}  `;
  switch (event.kind) {
    case 'joined':
      return `${start}${event.member} joined`;
    case 'left':
      return `${start}${event.member} left`;
    case 'taken':
      return `${start}${event.item} taken by ${event.to} (token ${event.token})`;
    case 'moved':
      return `${start}${event.item} moved: ${event.from} → ${event.to} (token ${event.token})`;
    default:
      return `${start}${event.item} free (was ${event.from})`;
  }
}
