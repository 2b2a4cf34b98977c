/**
 * Test support shared by the zkrx packages' integration tests.
 */
export {
  childrenOf,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
  sleep,
} from './clients';
export { type HoldRecord, IntervalLog } from './intervals';
