/**
 * The injection tokens of the ZooKeeper module: the client an application shares, and the
 * connection the method decorators find on the instances Nest makes.
 */
import { Inject } from '@nestjs/common';

// Symbol.for: every copy of this package (its ESM and CommonJS builds, each entry point) agrees.

/**
 * The injection token of the module's ZkClient.
 *
 * ## Example
 * ```ts
 * constructor(@Inject(ZK_CLIENT) private readonly client: ZkClient) {}
 * ```
 */
export const ZK_CLIENT: unique symbol = Symbol.for('@zkrx/nestjs:ZK_CLIENT');

/** The injection token of the module's connection (client, ownership, election settings). */
export const ZK_CONNECTION: unique symbol = Symbol.for('@zkrx/nestjs:ZK_CONNECTION');

/**
 * Injects the module's ZkClient: shorthand for `@Inject(ZK_CLIENT)`.
 *
 * ## Example
 * ```ts
 * @Injectable()
 * class Inventory {
 *   constructor(@InjectZkClient() private readonly client: ZkClient) {}
 * }
 * ```
 *
 * @return A parameter (or property) decorator.
 */
export function InjectZkClient(): PropertyDecorator & ParameterDecorator {
  return Inject(ZK_CLIENT);
}
