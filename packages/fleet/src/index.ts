/**
 * @zkrx/fleet — worker fleets on ZooKeeper as RxJS observables: live membership, and a sticky,
 * cooperative work partitioner where no item is ever owned twice.
 */

export type { OwnershipEndedReason, PartitionTask } from './errors';
export {
  DuplicateMemberError,
  OwnershipEndedError,
  PartitionProblemError,
  ReleaseTimeoutError,
} from './errors';
export type {
  InspectedFleet,
  InspectedHold,
  InspectedItem,
  InspectedMember,
  InspectedPoison,
} from './inspect';
export { inspectFleet, readMemberNode } from './inspect';
export type {
  JoinPartitionOptions,
  PartitionFailure,
  PartitionMembership,
} from './join-partition';
export { defaultMemberId, joinPartition } from './join-partition';
export type { MemberProblem } from './member-record';
export type { Member, MemberDetails, MembersOptions } from './members';
export { members } from './members';
export type { PartitionOptions } from './options';
export { validatePartition } from './options';
export type { OwnedItem } from './owned-item';
export type { Assignment } from './partition';
export { partition } from './partition';
export type { PoisonedItem } from './poison';
