#!/usr/bin/env python3
"""kazoo's SetPartitioner through a 3 -> 4 -> 3 membership change, measured as
packages/bench/src/tools/fleet-rebalance.ts measures @zkrx/fleet's partition.

Each member is its own KazooClient (connected before the clock starts) and SetPartitioner,
driven by a thread the way kazoo's documentation loops (release_set when asked, wait while
allocating). The clock starts when the change starts (the SetPartitioner of the member that
joins is created; finish() of the member that leaves is called) and stops once every live
member is ACQUIRED and their sets split the items exactly. Prints one JSON line per change:
{impl, items, round, change, members, convergeMs, moved, minimum, interrupted}.

Usage: set_partitioner.py HOST:PORT ITEMS ROUNDS TIME_BOUNDARY
"""
import json
import sys
import threading
import time
import uuid

from kazoo.client import KazooClient

POLL_S = 0.002


class Member:
    def __init__(self, hosts, path, items, ident, time_boundary):
        self.ident = ident
        self.client = KazooClient(hosts=hosts, timeout=10.0)
        self.client.start()
        self.path = path
        self.items = items
        self.time_boundary = time_boundary
        self.owned = None  # frozenset while ACQUIRED, else None
        self.interrupted = 0  # items given up (released) so far
        self.stopping = False
        self.partitioner = None
        self.thread = None

    def join(self):
        self.partitioner = self.client.SetPartitioner(
            self.path,
            set=self.items,
            identifier=self.ident,
            time_boundary=self.time_boundary,
        )
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        p = self.partitioner
        while not self.stopping:
            if p.failed:
                self.owned = None
                return
            if p.release:
                if self.owned is not None:
                    self.interrupted += len(self.owned)
                self.owned = None
                p.release_set()
            elif p.acquired:
                self.owned = frozenset(p)
            elif p.allocating:
                self.owned = None
                p.wait_for_acquire(timeout=POLL_S)
            time.sleep(POLL_S)

    def leave(self):
        # The driving thread stops first: finish() and release_set() must not run at once (both
        # release the member's locks, and kazoo 2.8 does not guard that list).
        self.stopping = True
        self.thread.join()
        if self.owned is not None:
            self.interrupted += len(self.owned)
        self.owned = None
        self.partitioner.finish()

    def close(self):
        self.client.stop()
        self.client.close()


def converged(members, items):
    sets = [member.owned for member in members]
    if any(owned is None for owned in sets):
        return False
    union = set()
    for owned in sets:
        if union & owned:
            return False
        union |= owned
    if union != set(items):
        return False
    low = len(items) // len(members)
    return all(len(owned) in (low, low + 1) for owned in sets)


def owners(members):
    found = {}
    for member in members:
        for item in member.owned or ():
            found[item] = member.ident
    return found


def wait_converged(members, items, timeout_s=120.0):
    deadline = time.monotonic() + timeout_s
    while not converged(members, items):
        if time.monotonic() > deadline:
            raise RuntimeError("kazoo SetPartitioner did not converge within %s s" % timeout_s)
        time.sleep(POLL_S)


def change(members, live, items, how, act, count_round, label):
    before = owners(members)  # every member's items before (the leaver's included)
    interrupted_before = sum(member.interrupted for member in members)
    started = time.monotonic()
    act()
    wait_converged(live, items)
    elapsed_ms = (time.monotonic() - started) * 1000.0
    after = owners(live)
    moved = sum(1 for item, owner in before.items() if item in after and after[item] != owner)
    interrupted = sum(member.interrupted for member in members) - interrupted_before
    return {
        "impl": "kazoo",
        "items": len(items),
        "round": count_round,
        "change": how,
        "members": label,
        "convergeMs": round(elapsed_ms, 1),
        "moved": moved,
        "interrupted": interrupted,
    }


def main():
    hosts, count, rounds, time_boundary = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(
        sys.argv[4]
    )
    items = ["item-%03d" % index for index in range(count)]
    for count_round in range(1, rounds + 1):
        path = "/bench-kazoo-partitioner-%s" % uuid.uuid4().hex[:12]
        members = [Member(hosts, path, items, "member-%d" % index, time_boundary) for index in range(4)]
        try:
            first = members[:3]
            for member in first:
                member.join()
            wait_converged(first, items)
            live = list(first)
            newcomer = members[3]
            # The member with the most items leaves afterwards (the minimum is its count).
            joined = change(
                members, live + [newcomer], items, "join", newcomer.join, count_round, "3->4"
            )
            joined["minimum"] = len(items) // 4
            joined["timeBoundaryS"] = time_boundary
            print(json.dumps(joined), flush=True)
            live = live + [newcomer]
            leaver = live[1]
            leaving_count = len(leaver.owned or ())
            remaining = [member for member in live if member is not leaver]
            left = change(members, remaining, items, "leave", leaver.leave, count_round, "4->3")
            left["minimum"] = leaving_count
            left["timeBoundaryS"] = time_boundary
            print(json.dumps(left), flush=True)
            for member in remaining:
                member.leave()
        finally:
            for member in members:
                member.close()


if __name__ == "__main__":
    main()
