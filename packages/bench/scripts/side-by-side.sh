#!/usr/bin/env bash
# side-by-side.sh — zkrx and Curator (and any other bench speaking the peers' CLI) in interleaved
# rounds against ONE fresh tmpfs ZooKeeper 3.8: every round runs each scenario once per
# implementation, the order rotated from round to round, so that load coming and going on a
# shared machine hits every implementation alike. Ratios are taken within a round.
#
#   cp -r /work/shared/peers /tmp/peers                     # a writable copy (zk-start.sh, CuratorBench.java)
#   pnpm --filter "@zkrx/bench..." build
#   PEERS=/tmp/peers packages/bench/scripts/side-by-side.sh [ROUNDS=3] [OUT=side-by-side-<date>.jsonl]
#
# Env: PEERS (required), PORT (default 2197), ZKRX_CURATOR_CLASSPATH (default: Debian's jars in
# /usr/share/java), IMPLS ("label=command;..."; "curator" alone is the peers' CuratorBench;
# default: curator and this checkout's zkrx, the forms users write — the mutex() observable and
# acquire with its signal read — and acquire with timeoutMs), SCENARIOS ("name:clients:ops[:args]
# ...", args given to every impl, commas for spaces, e.g. mutex-contended:32:2000:--one-client;
# default: the rows of issue 27). Each JSON line is the bench's own, plus impl_label, round, load1
# (the 1-minute load average as the run started), server_cpu_s (the ZooKeeper JVM's user+system CPU
# over the run, warm-up included) and client_cpu_s (the bench process's, start-up included).
# A table of medians goes to stdout at the end; progress to stderr.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${PEERS:?set PEERS to a writable copy of shared/peers}"
ROUNDS=${1:-3}
OUT=${2:-$PWD/side-by-side-$(date +%Y%m%d-%H%M%S).jsonl}
PORT=${PORT:-2197}
CONNECT=127.0.0.1:$PORT
ZKDIR=/dev/shm/zk-side-by-side-$$
ZKRX="node $HERE/../dist/cli.js"
IMPLS=${IMPLS:-"curator;zkrx=$ZKRX;zkrx-observable=$ZKRX --form observable;zkrx-signal=$ZKRX --form signal;zkrx-timeout=$ZKRX --timeout-ms 60000"}
SCENARIOS=${SCENARIOS:-"mutex-uncontended:1:2000 mutex-contended:8:2000 mutex-contended:32:2000 mutex-contended:8:2000:--one-client mutex-contended:32:2000:--one-client rwlock-mixed:32:1500 semaphore:32:1000"}
PY=/usr/bin/python3
# Curator's class path: ZKRX_CURATOR_CLASSPATH, else Debian's jars (@zkrx/interop's list).
CURATOR_CP=$(node "$HERE/../dist/tools/curator-classpath.js") ||
  { echo 'side-by-side.sh: no Curator class path (pnpm --filter "@zkrx/bench..." build first)' >&2; exit 1; }
CURATOR=(java -cp "$CURATOR_CP" "$PEERS/CuratorBench.java")

cleanup() { "$PEERS/zk-stop.sh" "$ZKDIR" >/dev/null 2>&1; rm -rf "$ZKDIR"; }
trap cleanup EXIT
"$PEERS/zk-start.sh" "$PORT" "$ZKDIR" >&2 || exit 1
# Untimed server warm-up, as run-peers.sh does.
"${CURATOR[@]}" --connect "$CONNECT" --scenario floor-create-delete --ops 3000 >/dev/null 2>&1
"${CURATOR[@]}" --connect "$CONNECT" --scenario mutex-contended --clients 8 --ops 500 >/dev/null 2>&1

IFS=';' read -ra PAIRS <<<"$IMPLS"
count=${#PAIRS[@]}
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
for ((round = 1; round <= ROUNDS; round++)); do
  for scenario in $SCENARIOS; do
    IFS=: read -r name clients ops extra <<<"$scenario"
    read -ra extra_args <<<"${extra//,/ }"
    for ((i = 0; i < count; i++)); do
      pair=${PAIRS[$(((i + round - 1) % count))]}
      if [[ $pair == curator ]]; then label=curator; cmd=("${CURATOR[@]}")
      else label=${pair%%=*}; read -ra cmd <<<"${pair#*=}"; fi
      load=$(cut -d' ' -f1 /proc/loadavg)
      zk=$(cat "$ZKDIR/zk.pid"); before=$(cpu_of "$zk")
      times=$(mktemp)
      line=$(/usr/bin/time -f '%U %S' -o "$times" "${cmd[@]}" --connect "$CONNECT" --scenario "$name" \
        --clients "$clients" --ops "$ops" "${extra_args[@]}" 2>>"$OUT.log")
      rc=$?
      after=$(cpu_of "$zk"); client=$(tail -1 "$times" | awk '{ print $1 + $2 }'); rm -f "$times"
      [[ $rc -ne 0 || $line != \{* ]] &&
        line="{\"impl\":\"$label\",\"scenario\":\"$name\",\"clients\":$clients,\"ops\":$ops,\"error\":\"exit $rc (see $OUT.log)\"}"
      $PY -c 'import json, sys
row = json.loads(sys.argv[1])
row.update(impl_label=sys.argv[2], round=int(sys.argv[3]), load1=float(sys.argv[4]),
           server_cpu_s=(float(sys.argv[6]) - float(sys.argv[5])) / 100, client_cpu_s=float(sys.argv[7] or "nan"),
           args=sys.argv[8])
print(json.dumps(row))' "$line" "$label" "$round" "$load" "$before" "$after" "$client" "${extra_args[*]}" >>"$OUT"
      tail -1 "$OUT" >&2
    done
  done
done

$PY - "$OUT" <<'PYTHON'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
keys = list(dict.fromkeys((r["scenario"], r["clients"], r.get("args", "")) for r in rows))
labels = list(dict.fromkeys(r["impl_label"] for r in rows))
print("| scenario | C | args | impl | ops/s (median) | p50 ms (median) | srv pkts/op | ops/s ÷ Curator's (per round: median, min–max) | p50 ÷ Curator's (median) | server CPU µs/op | load1 |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for scenario, clients, args in keys:
    group = [r for r in rows if (r["scenario"], r["clients"], r.get("args", "")) == (scenario, clients, args)]
    curator = {r["round"]: r for r in group if r["impl_label"] == "curator" and "error" not in r}
    for label in labels:
        mine = [r for r in group if r["impl_label"] == label and "error" not in r]
        errors = [r for r in group if r["impl_label"] == label and "error" in r]
        if not mine:
            if errors: print(f"| {scenario} | {clients} | {args} | {label} | failed: {errors[0]['error']} |||||||")
            continue
        ratios = [r["ops_per_s"] / curator[r["round"]]["ops_per_s"] for r in mine if r["round"] in curator]
        p50s = [r["p50_ms"] / curator[r["round"]]["p50_ms"] for r in mine if r["round"] in curator]
        # Warm-up ops count too (the JVM's CPU covers the whole run): max(20, N/4) of them.
        cpu = [1e6 * r["server_cpu_s"] / (r["ops"] + max(20, r["ops"] // 4)) for r in mine]
        loads = [r["load1"] for r in mine]
        ratio = f"{median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})" if ratios else ""
        p50 = f"{median(p50s):.2f}" if p50s else ""
        print(f"| {scenario} | {clients} | {args} | {label} | {median([r['ops_per_s'] for r in mine]):.0f} | "
              f"{median([r['p50_ms'] for r in mine]):.3f} | {median([r['server_packets_sent_per_op'] for r in mine])} | "
              f"{ratio} | {p50} | {median(cpu):.0f} | {min(loads)}–{max(loads)} |")
print(f"\n{len(rows)} runs, {sys.argv[1]}")
PYTHON
