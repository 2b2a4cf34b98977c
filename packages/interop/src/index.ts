/**
 * @zkrx/interop — Curator (Java) and kazoo (Python) peers driven from vitest, to prove that zkrx
 * recipes share ZooKeeper paths with them. Private: a test harness, never published.
 */

export type {
  InteropLocations,
  PeerAvailability,
  PeerSupport,
} from './availability';
export {
  CURATOR_JARS,
  interopLocations,
  MIN_JAVA_RELEASE,
  peerAvailability,
} from './availability';
export type { PeerKind } from './errors';
export { InteropUnavailableError, PeerError, PeerErrorCode } from './errors';
export type { JavaFollowers, JavaFollowersReport } from './java-followers';
export { JAVA_FOLLOWERS_SOURCE, startJavaFollowers } from './java-followers';
export type { PeerCommand, PeerCommandOptions } from './launch';
export { JAVA_PEER_SOURCE, PYTHON_PEER_SOURCE, peerCommand } from './launch';
export type {
  LatchStatus,
  Peer,
  PeerAcquireOptions,
  PeerEvent,
  PeerHold,
  PeerParticipants,
  PeerRecipe,
  PeerSessionCredentials,
  StartPeerOptions,
} from './peer';
export { startPeer } from './peer';
