/**
 * Access control lists: permission bits and the three standard ACLs of ZooKeeper.
 */

/** Permission bits of an ACL entry (ZooDefs.Perms). */
export const Permission = {
  Read: 1,
  Write: 2,
  Create: 4,
  Delete: 8,
  Admin: 16,
  All: 31,
} as const;

/** One ACL entry: who (`scheme`:`id`) may do what (`permissions`). */
export interface Acl {
  readonly permissions: number;
  readonly scheme: string;
  readonly id: string;
}

/** Anyone can do anything (ZooKeeper's default). */
export const OPEN_ACL_UNSAFE: readonly Acl[] = [
  { permissions: Permission.All, scheme: 'world', id: 'anyone' },
];

/** Anyone can read. */
export const READ_ACL_UNSAFE: readonly Acl[] = [
  { permissions: Permission.Read, scheme: 'world', id: 'anyone' },
];

/** Everything for the authenticated creator only (needs `auth`). */
export const CREATOR_ALL_ACL: readonly Acl[] = [
  { permissions: Permission.All, scheme: 'auth', id: '' },
];
