/**
 * @zkrx/nestjs/terminus — the ZooKeeper health indicator for @nestjs/terminus (a separate entry:
 * @nestjs/terminus is an optional peer).
 */

export { ZkHealthIndicator } from './terminus/zk-health-indicator';
