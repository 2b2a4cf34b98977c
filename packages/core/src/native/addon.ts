/**
 * The `zookeeper` binding's addon as zkrx sees it: the C client's calls and records, typed, and
 * how the addon is loaded (once, without the binding's own JavaScript wrapper).
 */
import { createRequire } from 'node:module';
import path from 'node:path';

/** A znode's metadata as the binding reports it. */
export interface NativeStat {
  czxid: number;
  mzxid: number;
  pzxid: number;
  ctime: Date | number;
  mtime: Date | number;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: string;
  dataLength: number;
  numChildren: number;
}

/** An ACL entry in the binding's shape. */
export interface NativeAcl {
  perm: number;
  scheme: string;
  auth: string;
}

/**
 * An ACL entry as the binding reports it from `a_get_acl`: the permissions are `perms` there,
 * while the calls that take ACLs read `perm`.
 */
export interface NativeAclRead {
  perms: number;
  scheme: string;
  auth: string;
}

export type Code = number;
export type VoidCallback = (rc: Code, error: string) => void;

export interface NativeZooKeeper {
  emit: (event: string, self: unknown, arg?: unknown) => void;
  init(options: NativeInitOptions): void;
  close(): void;
  a_create(
    path: string,
    data: Buffer,
    flags: number,
    cb: (rc: Code, e: string, p: string) => void,
  ): Code;
  a_create_ttl(
    path: string,
    data: Buffer,
    flags: number,
    ttl: number,
    cb: (rc: Code, e: string, p: string) => void,
  ): Code;
  a_create2?: (
    path: string,
    data: Buffer | null,
    flags: number,
    ttl: number,
    acl: NativeAcl[] | null,
    cb: (rc: Code, e: string, p: string, stat: NativeStat | null) => void,
  ) => Code;
  a_exists(
    path: string,
    watch: boolean,
    cb: (rc: Code, e: string, stat: NativeStat | null) => void,
  ): Code;
  a_get(
    path: string,
    watch: boolean,
    cb: (rc: Code, e: string, stat: NativeStat | null, data: Buffer | null) => void,
  ): Code;
  a_get_children(
    path: string,
    watch: boolean,
    cb: (rc: Code, e: string, children: string[]) => void,
  ): Code;
  a_get_children2(
    path: string,
    watch: boolean,
    cb: (rc: Code, e: string, children: string[], stat: NativeStat | null) => void,
  ): Code;
  a_set(
    path: string,
    data: Buffer,
    version: number,
    cb: (rc: Code, e: string, stat: NativeStat | null) => void,
  ): Code;
  a_delete_(path: string, version: number, cb: VoidCallback): Code;
  a_sync(path: string, cb: (rc: Code, e: string, value: string) => void): Code;
  a_get_acl(
    path: string,
    cb: (rc: Code, e: string, acl: NativeAclRead[], stat: NativeStat) => void,
  ): Code;
  a_set_acl(path: string, version: number, acl: NativeAcl[], cb: VoidCallback): Code;
  a_getconfig?: (
    watch: boolean,
    cb: (rc: Code, e: string, stat: NativeStat | null, data: Buffer | null) => void,
  ) => Code;
  add_auth(scheme: string, auth: string, cb: VoidCallback): Code;
  take_log?: () => string[];
  readonly state: number;
  readonly client_id: string;
  readonly client_password: string;
  readonly timeout: number;
}

export interface NativeInitOptions {
  connect: string;
  timeout: number;
  debug_level: number;
  host_order_deterministic: boolean;
  data_as_buffer: boolean;
  response_counter_limit?: number;
  client_id?: string;
  client_password?: string;
}

export type NativeConstructor = new () => NativeZooKeeper;

let nativeConstructor: NativeConstructor | undefined;

/** Loads the binding's addon (once); throws when `zookeeper` is not installed or not built. */
export function loadNative(): NativeConstructor {
  if (nativeConstructor) return nativeConstructor;
  const here = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
  const packageJson = here.resolve('zookeeper/package.json');
  // The binding's own JavaScript wrapper formats every call for its logger; load the addon itself.
  const nodeGypBuild = createRequire(packageJson)('node-gyp-build') as (dir: string) => {
    ZooKeeper: NativeConstructor;
  };
  nativeConstructor = nodeGypBuild(path.dirname(packageJson)).ZooKeeper;
  return nativeConstructor;
}
