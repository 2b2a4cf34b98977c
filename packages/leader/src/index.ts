/**
 * @zkrx/leader — leader election for worker fleets as RxJS observables: one leader, fast
 * failover, work that stops when leadership ends; Curator LeaderLatch/LeaderSelector compatible.
 */

export type { Election } from './candidacy';
export { elect, leadership } from './candidacy';
export type { LeaderInfo } from './leader-info';
export { leader$ } from './leader-info';
export type { CandidateOptions } from './options';
export type { LeaderTerm, WhileLeaderOptions } from './while-leader';
export { whileLeader } from './while-leader';
