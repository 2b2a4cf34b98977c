/**
 * @zkrx/leader — leader election for worker fleets as RxJS observables: one leader, fast
 * failover, work that stops when leadership ends; Curator LeaderLatch/LeaderSelector compatible.
 */

export type { CandidateOptions, Election, LeaderInfo, WhileLeaderOptions } from './leader';
export { elect, leader$, leadership, whileLeader } from './leader';
