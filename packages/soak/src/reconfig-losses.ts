/**
 * Which sessions a `reconfig` fault lost: the promise is none, and the soak fails otherwise.
 */
import type { FaultKind, FaultRecord } from './history';

/**
 * The expiries that only a `reconfig` fault can explain: during one (from its start to a
 * session timeout after it ended), with no other fault that can expire a session around — an
 * `expire`, a `blackhole` or a `stall` on that worker, a server fault — in the two session
 * timeouts before.
 */
export function lostToReconfig(
  expiries: readonly { worker: number; at: number }[],
  faults: readonly FaultRecord[],
  sessionTimeoutMs: number,
): { worker: number; at: number }[] {
  const around = (fault: FaultRecord, at: number, before: number, after: number) =>
    at >= fault.start - before && at <= (fault.healedAt ?? fault.start) + after;
  const expiring = new Set<FaultKind>(['expire', 'blackhole', 'stall']);
  const servers = new Set<FaultKind>(['server-restart', 'leader-stop', 'quorum-loss']);
  return expiries.filter(
    ({ worker, at }) =>
      faults.some((fault) => fault.kind === 'reconfig' && around(fault, at, 0, sessionTimeoutMs)) &&
      !faults.some(
        (fault) =>
          ((expiring.has(fault.kind) && fault.target === worker) || servers.has(fault.kind)) &&
          around(fault, at, 0, 2 * sessionTimeoutMs),
      ),
  );
}
