/**
 * Watching a group's live members without joining it: their ids (one children watch, nothing
 * per member), their nodes' details (one read of each member when it first shows), or — for a
 * partition's coordinator — each member's record, watched.
 */
import { isZkError, joinPath, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { Observable, type Subscription } from 'rxjs';
import { decodeMemberRecord, type MemberRecord } from './member-record';
import type { Member, MemberDetails } from './members';

/** Two member lists alike (what a new emission must differ in). */
export function sameMembers(a: readonly Member[], b: readonly Member[]): boolean {
  return (
    a.length === b.length &&
    a.every((member, index) => {
      const other = b[index] as Member;
      if (member.id !== other.id) return false;
      if (!('czxid' in member) || !('czxid' in other)) return true; // ids alone: alike
      const [x, y] = [member as MemberDetails, other as MemberDetails];
      return x.czxid === y.czxid && x.sessionId === y.sessionId && x.data === y.data;
    })
  );
}

/**
 * The live members under `path`, in id order, now and on every change, without joining: one
 * children watch on the path, nothing per member. A join or a leave costs each watcher one
 * notification and one listing. Every child of the path counts as a member.
 */
export function watchMemberIds(client: ZkClient, path: string): Observable<readonly Member[]> {
  return new Observable<readonly Member[]>((subscriber) => {
    // One object per listed id, kept while it is listed: a listing that did not change emits
    // nothing, and a 500-member listing allocates only for the names that are new.
    let known = new Map<string, Member>();
    let last: readonly Member[] | undefined;
    return client.watchChildren(path).subscribe({
      next: (names) => {
        const next = new Map<string, Member>();
        const found = names.map((id) => {
          const member = known.get(id) ?? { id };
          next.set(id, member);
          return member;
        });
        known = next;
        if (last && sameMembers(last, found)) return;
        last = found;
        subscriber.next(found);
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
  });
}

/**
 * The live members under `path` with their nodes' details, in id order, now and on every
 * change, without joining: one children watch on the path, and one read of each member node
 * when its name first appears (the reads of one listing go as one request with the client's
 * `batchReads`). No watch per member: a join costs each watcher one notification, one listing
 * and one read. Children that are not ephemeral are not members. Emits once every listed
 * member's node was read.
 *
 * A member that leaves and joins again under the same id faster than a watcher lists the path
 * again (the two changes fall between two of its listings, which then show the same names) is
 * not seen to: that watcher keeps its earlier node (session, join order) until the next change.
 */
export function watchMemberDetails(
  client: ZkClient,
  path: string,
): Observable<readonly MemberDetails[]> {
  return new Observable<readonly MemberDetails[]>((subscriber) => {
    /** Each listed name's member: `value` undefined while being read, null when not a member. */
    interface Entry {
      value: MemberDetails | null | undefined;
    }
    const entries = new Map<string, Entry>();
    let names: readonly string[] | undefined;
    let last: readonly MemberDetails[] | undefined;
    let stopped = false;
    /** Listed names still being read: the membership is emitted once there are none. */
    let unread = 0;
    const emit = () => {
      if (names === undefined || unread > 0 || subscriber.closed) return;
      const found: MemberDetails[] = [];
      for (const name of names) {
        const value = entries.get(name)?.value;
        if (value === undefined) return;
        if (value !== null) found.push(value);
      }
      if (last && sameMembers(last, found)) return;
      last = found;
      subscriber.next(found);
    };
    const read = (name: string, entry: Entry) => {
      // A read of a name that was dropped meanwhile (and maybe listed again: a new entry) is
      // not this entry's.
      const current = () => !stopped && entries.get(name) === entry;
      client.promises.get(joinPath(path, name)).then(
        (value) => {
          if (!current()) return;
          unread -= 1;
          entry.value =
            value.stat.ephemeralOwner === '0'
              ? null
              : {
                  id: name,
                  data: value.data.toString('utf8'),
                  sessionId: value.stat.ephemeralOwner,
                  joinedAt: value.stat.ctime,
                  czxid: value.stat.czxid,
                };
          emit();
        },
        (error: unknown) => {
          if (!current()) return;
          unread -= 1;
          // Gone between the listing and the read: the next listing drops it.
          if (isZkError(error, ZkErrorCode.NoNode)) {
            entry.value = null;
            emit();
            return;
          }
          if (isZkError(error, ZkErrorCode.ClientClosed) && client.isClosed) {
            subscriber.complete();
            return;
          }
          subscriber.error(error);
        },
      );
    };
    const children = client.watchChildren(path).subscribe({
      next: (listed) => {
        names = listed;
        dropUnlisted(entries, listed, (entry) => {
          // Dropped while being read: its read no longer counts.
          if (entry.value === undefined) unread -= 1;
        });
        for (const name of listed) {
          if (entries.has(name)) continue;
          const entry: Entry = { value: undefined };
          entries.set(name, entry);
          unread += 1;
          read(name, entry);
        }
        emit();
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
    return () => {
      stopped = true;
      children.unsubscribe();
      entries.clear();
    };
  });
}

/** Drops the entries of names no longer listed (each told to `dropped` first). */
function dropUnlisted<E>(
  entries: Map<string, E>,
  listed: readonly string[],
  dropped: (entry: E) => void,
): void {
  const now = new Set(listed);
  for (const [name, entry] of entries) {
    if (now.has(name)) continue;
    dropped(entry);
    entries.delete(name);
  }
}

/** A partition member as its coordinator sees it: its node, read and watched. */
export interface WatchedMember {
  readonly id: string;
  readonly record: MemberRecord;
  readonly sessionId: string;
  readonly czxid: number;
}

/**
 * The live members of a partition with what each states on its node (its item set), now and on
 * every change: one children watch on `path` and one data watch on each member's node (only the
 * coordinator keeps these: `m` watches, one notification for a member's change). Emits once
 * every listed member's node was read; children that are not ephemeral are not members.
 */
export function watchMemberRecords(
  client: ZkClient,
  path: string,
): Observable<ReadonlyMap<string, WatchedMember>> {
  return new Observable<ReadonlyMap<string, WatchedMember>>((subscriber) => {
    interface Entry {
      /** undefined: not read yet; null: not a member (gone, or not ephemeral). */
      value: WatchedMember | null | undefined;
      watch?: Subscription;
    }
    const entries = new Map<string, Entry>();
    let listed = false;
    // One emission per turn: the reads of a listing's new members come in one reply (a
    // thousand members joining at once would otherwise make a thousand emissions of all).
    let scheduled = false;
    const emit = () => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        emitNow();
      });
    };
    const emitNow = () => {
      if (!listed || subscriber.closed) return;
      const found = new Map<string, WatchedMember>();
      for (const [id, entry] of entries) {
        if (entry.value === undefined) return;
        if (entry.value !== null) found.set(id, entry.value);
      }
      subscriber.next(found);
    };
    const fail = (error: unknown) => {
      if (isZkError(error, ZkErrorCode.ClientClosed) && client.isClosed) subscriber.complete();
      else subscriber.error(error);
    };
    const children = client.watchChildren(path).subscribe({
      next: (names) => {
        listed = true;
        dropUnlisted(entries, names, (entry) => entry.watch?.unsubscribe());
        for (const id of names) {
          if (entries.has(id)) continue;
          const entry: Entry = { value: undefined };
          entries.set(id, entry);
          entry.watch = client.watchData(joinPath(path, id)).subscribe({
            next: (value) => {
              if (entries.get(id) !== entry) return;
              entry.value =
                value === null || value.stat.ephemeralOwner === '0'
                  ? null
                  : {
                      id,
                      record: decodeMemberRecord(value.data),
                      sessionId: value.stat.ephemeralOwner,
                      czxid: value.stat.czxid,
                    };
              emit();
            },
            error: fail,
          });
        }
        emit();
      },
      error: fail,
      complete: () => subscriber.complete(),
    });
    return () => {
      children.unsubscribe();
      for (const entry of entries.values()) entry.watch?.unsubscribe();
      entries.clear();
    };
  });
}
