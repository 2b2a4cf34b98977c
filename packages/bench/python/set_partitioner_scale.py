#!/usr/bin/env python3
"""kazoo's SetPartitioner at the sizes of zkrx's fleet-scale scenario
(packages/bench/src/scenarios/fleet-scale.ts), measured the same way.

M members (each its own KazooClient, connected before any clock starts, driven by a thread the
way kazoo's documentation loops) share N items. Steps: `cold` (every member creates its
SetPartitioner at once; the time until every member is ACQUIRED and their sets split the items,
balanced), `join` (one more member), `leave` (the first member calls finish()). For each: the
time, the items moved (owner changed) and interrupted (released by release_set, which every
member runs on every change), the server's packets (mntr zk_packets_received + sent) and
watches (zk_watch_count), and this process's CPU time (every thread).

Usage: set_partitioner_scale.py HOST:PORT MEMBERS ITEMS TIME_BOUNDARY [TIMEOUT_S]
Prints one JSON line.
"""
import json
import socket
import sys
import time
import uuid

from kazoo.client import KazooClient

# The member (a KazooClient and its SetPartitioner, driven by a thread), the owners of a fleet
# and when it has converged are fleet-rebalance's, in the script beside this one.
from set_partitioner import POLL_S, Member, owners
from set_partitioner import converged as balanced


def mntr(hosts):
    host, port = hosts.split(",")[0].split(":")
    with socket.create_connection((host, int(port))) as conn:
        conn.sendall(b"mntr")
        chunks = []
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    values = {}
    for line in b"".join(chunks).decode().splitlines():
        parts = line.split("\t")
        if len(parts) == 2:
            values[parts[0]] = parts[1]
    return {
        "packets": int(values["zk_packets_received"]) + int(values["zk_packets_sent"]),
        "watches": int(values["zk_watch_count"]),
    }


def main():
    hosts, count, items_count, time_boundary = (
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        float(sys.argv[4]),
    )
    timeout_s = float(sys.argv[5]) if len(sys.argv) > 5 else 600.0
    items = ["item-%05d" % index for index in range(items_count)]
    path = "/bench-kazoo-scale-%s" % uuid.uuid4().hex[:12]
    line = {"impl": "kazoo", "members": count, "items": items_count, "time_boundary_s": time_boundary}
    members = []
    try:
        for index in range(count + 1):
            members.append(Member(hosts, path, items, "member-%03d" % index, time_boundary))

        def step(name, live, act):
            before_owners = owners(members)
            interrupted = sum(member.interrupted for member in members)
            server = mntr(hosts)
            cpu = time.process_time()
            started = time.monotonic()
            act()
            deadline = started + timeout_s
            while not balanced(live, items):
                if time.monotonic() > deadline:
                    line[name + "_error"] = "not balanced within %s s" % timeout_s
                    return False
                time.sleep(POLL_S)
            line[name + "_ms"] = round((time.monotonic() - started) * 1000.0, 1)
            line[name + "_client_cpu_ms"] = round((time.process_time() - cpu) * 1000.0, 1)
            after = mntr(hosts)
            line[name + "_packets"] = after["packets"] - server["packets"]
            line[name + "_watches"] = after["watches"]
            now = owners(live)
            line[name + "_moved"] = sum(
                1 for item, owner in before_owners.items() if item in now and now[item] != owner
            )
            line[name + "_interrupted"] = (
                sum(member.interrupted for member in members) - interrupted
            )
            return True

        first = members[:count]
        if step("cold", first, lambda: [member.join() for member in first]):
            line["cold_packets_per_item"] = round(line["cold_packets"] / items_count, 2)
            newcomer = members[count]
            line["join_minimum"] = items_count // (count + 1)
            if step("join", first + [newcomer], newcomer.join):
                leaver = members[0]
                line["leave_minimum"] = len(leaver.owned or ())
                step("leave", first[1:] + [newcomer], leaver.leave)
    finally:
        for member in members:
            try:
                member.close()
            except Exception:  # noqa: BLE001 - closing what is left
                pass
        try:
            cleaner = KazooClient(hosts=hosts)
            cleaner.start()
            cleaner.delete(path, recursive=True)
            cleaner.stop()
            cleaner.close()
        except Exception:  # noqa: BLE001
            pass
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
