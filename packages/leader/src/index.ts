/**
 * @zkrx/leader — leader election for worker fleets as RxJS observables: one leader, fast
 * failover, work that stops when leadership ends; Curator LeaderLatch/LeaderSelector compatible.
 */

export { joinElection, leadership } from './candidacy';
export type { CandidateOptions, ElectionOptions } from './candidate-options';
export type { Election } from './election';
export type { LeaderInfo } from './leader-info';
export { watchLeader } from './leader-info';
export type { LeaderTerm, WhileLeaderOptions } from './while-leader';
export { whileLeader } from './while-leader';
