/**
 * What a ZkTestingModule application is started with, what the test reads of it (its guarded
 * writes), and what its stand-ins share.
 */
import type { TransactionOp, TransactionResult } from '@zkrx/core';

/** How a ZkTestingModule application starts. */
export interface ZkTestingOptions {
  /** This application's id (as ZkModule's `id`). Default `test`. */
  id?: string;
  /** Leads every election it joins, at once (default true); false: only after `lead(path)`. */
  leading?: boolean;
  /** Owns every item of every partition it joins (default true); false: only `assign(...)`. */
  owningAll?: boolean;
}

/** Every write a lease, a term or an owned item guarded: the test reads them. */
export interface GuardedWrite {
  /** The lock, election or item path whose holder wrote. */
  readonly path: string;
  readonly ops: readonly TransactionOp[];
}

/**
 * What the stand-ins of one application share: its options, its fencing tokens (one counter for
 * every lock, term and item) and its record of guarded writes.
 */
export interface TestLedger {
  readonly options: ZkTestingOptions;
  nextToken(): number;
  guard(path: string, ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
}
