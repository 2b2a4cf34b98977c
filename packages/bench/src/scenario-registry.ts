/**
 * Every scenario by name, in the order of the matrix.
 */
import type { ScenarioName } from './options';
import type { Scenario } from './scenario';
import { fleetBoot } from './scenarios/fleet-boot';
import { fleetMembers } from './scenarios/fleet-members';
import { fleetRollout } from './scenarios/fleet-rollout';
import { fleetScale } from './scenarios/fleet-scale';
import { floorCreateDelete, floorGetChildren } from './scenarios/floor';
import { herd } from './scenarios/herd';
import { leaderFailover } from './scenarios/leader-failover';
import { memory } from './scenarios/memory';
import { mutexContended } from './scenarios/mutex-contended';
import { mutexUncontended } from './scenarios/mutex-uncontended';
import { pipelinedGet } from './scenarios/pipelined-get';
import { rwlockMixed } from './scenarios/rwlock-mixed';
import { semaphore } from './scenarios/semaphore';

export const scenarios: Readonly<Record<ScenarioName, Scenario>> = {
  'floor-create-delete': floorCreateDelete,
  'floor-getchildren': floorGetChildren,
  'pipelined-get': pipelinedGet,
  'mutex-uncontended': mutexUncontended,
  'mutex-contended': mutexContended,
  'rwlock-mixed': rwlockMixed,
  semaphore,
  'leader-failover': leaderFailover,
  herd,
  memory,
  'fleet-scale': fleetScale,
  'fleet-members': fleetMembers,
  'fleet-rollout': fleetRollout,
  'fleet-boot': fleetBoot,
};
