/**
 * @zkrx/console — a live web console for ZooKeeper coordination: who holds which lock, who
 * waits, who leads, who owns which fleet item (zkrx's, Curator's and kazoo's layouts), pushed
 * by watches, read-only by default. Also what `zkrx locks|members --watch` remember between
 * reads (`LiveState`, `fleetEvents`) and read with (`CoalescedRead`), and the node lookup of
 * `zkrx release|revoke`.
 */
export type { Authorize, ConsoleUser } from './access';
export type { CoalescedReadOptions, CoalescedTarget } from './coalesced-read';
export { CoalescedRead } from './coalesced-read';
export { ConsoleError, ConsoleErrorCode } from './errors';
export type { FleetEvent } from './fleet-events';
export { fleetEvents, itemEvents } from './fleet-events';
export type { AuditEntry, ConsoleHandler, ConsoleOptions } from './handler';
export { consoleHandler } from './handler';
export type { HistoryEntry } from './history';
export type { LiveEvent, LiveEventKind } from './live-state';
export { LiveState, sessionEnded } from './live-state';
export type { FoundNode } from './lock-node';
export { findLockNode, releaseNode, revokeNode } from './lock-node';
export type { RunningConsole, StartConsoleOptions } from './server';
export { startConsole } from './server';
