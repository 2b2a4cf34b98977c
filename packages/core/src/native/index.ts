/**
 * @zkrx/core/native — the opt-in transport over Apache's C client (the `zookeeper` npm binding,
 * an optional peer dependency): `createClient({ connect, transport: nativeTransport() })`.
 */

export { nativeTransport } from './native-transport';
