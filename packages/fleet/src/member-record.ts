/**
 * What a partition member's node holds: the member's `data`, the digest and size of the item
 * set it states (what the coordinator assigns it from), and the problems it is going through
 * (so that `inspectFleet` and `zkrx partitions` show them). Pure: encode and decode.
 */
import { errorSummary, type PartitionTask } from './errors';

/** A problem a member states on its node. */
export interface MemberProblem {
  /**
   * What failed: `join` — the member's earlier attempts to stay in the partition (it joined
   * again after `count` failures in a row, the last one this) — or a task it goes on through
   * (`count` of them open, the latest this).
   */
  readonly task: 'join' | PartitionTask;
  /** The error's code (`NoAuth`, `ReleaseTimeout`, ...). */
  readonly code: string;
  /** The error's message (at most 200 characters). */
  readonly message: string;
  /** When it came, ms since the epoch by the member's clock. */
  readonly at: number;
  readonly count: number;
}

/** A partition member's node, decoded. */
export interface MemberRecord {
  /** The member's `data` (empty when none was given). */
  readonly data: string;
  /** The item set it states: its digest (`<path>/sets/<digest>`) and size; undefined: none yet. */
  readonly set: { readonly digest: string; readonly size: number } | undefined;
  /**
   * The czxid of its assignment node (`<path>/assignments/<id>`, made by the member once it
   * joined): the coordinator writes a member's share once it is there, and reads it again when
   * it is made again. Undefined: not made yet.
   */
  readonly assignment: number | undefined;
  /** Its problems now, one a task (empty when all is well). */
  readonly problems: readonly MemberProblem[];
}

const VERSION = 1;
const MESSAGE_CHARACTERS = 200;

/** A problem from an error. */
export function problemOf(
  task: MemberProblem['task'],
  error: unknown,
  count: number,
  at = Date.now(),
): MemberProblem {
  // The code of what was met (a problem's cause: NoAuth, ReplyTooLarge...), and its message.
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  const { code, message } = errorSummary(error, MESSAGE_CHARACTERS, cause);
  return { task, code, message, at, count };
}

/** The data of a partition member's node. */
export function encodeMemberRecord(record: MemberRecord): Buffer {
  const value: Record<string, unknown> = { v: VERSION, data: record.data };
  if (record.set) value.set = record.set;
  if (record.assignment !== undefined) value.assignment = record.assignment;
  if (record.problems.length > 0) value.problems = record.problems;
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/**
 * A partition member's node decoded; a node of another shape (a member of a plain group, or
 * written by hand) is its data as text, with no problems.
 */
export function decodeMemberRecord(data: Buffer): MemberRecord {
  if (data.length > 0 && data[0] === 0x7b) {
    try {
      const value = JSON.parse(data.toString('utf8')) as {
        v?: unknown;
        data?: unknown;
        set?: { digest?: unknown; size?: unknown };
        assignment?: unknown;
        problems?: unknown;
      };
      if (value.v === VERSION && typeof value.data === 'string') {
        const problems = Array.isArray(value.problems)
          ? value.problems.filter(isProblem)
          : ([] as MemberProblem[]);
        const set =
          typeof value.set?.digest === 'string' && typeof value.set.size === 'number'
            ? { digest: value.set.digest, size: value.set.size }
            : undefined;
        const assignment = typeof value.assignment === 'number' ? value.assignment : undefined;
        return { data: value.data, set, assignment, problems };
      }
    } catch {
      // not a record
    }
  }
  return { data: data.toString('utf8'), set: undefined, assignment: undefined, problems: [] };
}

function isProblem(value: unknown): value is MemberProblem {
  const problem = value as Partial<MemberProblem> | null;
  return (
    typeof problem?.task === 'string' &&
    typeof problem.code === 'string' &&
    typeof problem.message === 'string' &&
    typeof problem.at === 'number' &&
    typeof problem.count === 'number'
  );
}
