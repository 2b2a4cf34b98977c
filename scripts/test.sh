#!/usr/bin/env bash
# test.sh — the whole test suite, as CI runs it (.ci/run), on the Node lines of
# scripts/runtimes.json (installed from npm by bootstrap.sh, into ~/.cache/zkrx): lint, typecheck,
# package checks and every package's unit and integration tests against real ZooKeeper servers
# (plus Curator and kazoo for the interop tests) on the suite's line (Node 26); core's
# native-transport tests on the native line (Node 24: the stock binding does not build on 26);
# each package's `test:lines` (what rests on behaviour that changed between Node lines) on the
# other lines; and every published package packed as a release would publish it and installed
# alone with npm in a fresh project, on Node 22, 24 and 26, Bun and Deno (pack-install, run beside
# the tests: it waits on npm and servers more than it computes). Sets itself up on a fresh
# machine (see bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lines.sh
suite=$(runtime_pin .node.suite)
native=$(runtime_pin .node.native)
lines=$(runtime_pin .node.lines)
echo "test.sh: the suite on Node $suite, core's native transport on Node $native, test:lines and pack-install on Node ${lines// /, } (npm $(node_package), in $ZKRX_CACHE_DIR), Bun $(runtime_pin .bun), Deno $(runtime_pin .deno)"
started=$SECONDS
./scripts/bootstrap.sh --with-interop
use_node "$suite"
echo "test.sh: runtime $(command -v node) $(node --version), pnpm $(pnpm --version), $(pnpm exec tsc --version) (typecheck)"
export TURBO_TELEMETRY_DISABLED=1
start=$SECONDS
timed() { # timed "what" command...: runs it, says how long it took, and returns its status
  local what=$1 began=$SECONDS status=0
  shift
  "$@" || status=$?
  if [[ $status -eq 0 ]]; then echo "test.sh: $what: $((SECONDS - began)) s"
  else echo "test.sh: $what: FAILED (exit $status) after $((SECONDS - began)) s"
  fi
  return "$status"
}

timed lint pnpm exec biome ci .
timed "typecheck and package checks" \
  pnpm exec turbo run typecheck check:package --output-logs=errors-only
# Each published package from its tarball, alone, as users install it (RELEASING.md), on every
# runtime: in the background from here, beside the tests (they wait on servers more than they compute;
# the checks above do not), its output in its own log.
pack_log=${ZKRX_PACK_INSTALL_LOG:-$PWD/.pack-install.log}
# Its own process group (setsid), ended with everything it started if a step here fails.
setsid bash -c 'began=$SECONDS; node scripts/pack-install/main.mjs && s=0 || s=$?
  echo "test.sh: pack-install: $((SECONDS - began)) s"; exit $s' >"$pack_log" 2>&1 </dev/null &
pack_pid=$!
trap 'kill -- "-$pack_pid" 2>/dev/null || true' EXIT
echo "test.sh: pack-install runs beside the tests (pid $pack_pid, log $pack_log)"

# One package at a time: integration tests time failovers on 2 cores.
timed "tests on Node $suite" pnpm exec turbo run test --concurrency=1 --output-logs=full
# The native transport where the stock binding builds (build-binding.sh built it for this line),
# then what changed between the lines under zkrx (async context, address selection, timers and
# signals, socket reads) on the other lines: each line in a process of its own, the lines at
# once (two servers, two processes: the machine's two cores), each line's output printed whole.
line_steps() { # line_steps VERSION: what runs on that line
  local line=$1
  echo "test.sh: on Node $line"
  if [[ $line == "$native" ]]; then
    timed "core's native-transport tests on Node $line" \
      pnpm --filter @zkrx/core exec vitest run --project integration-native || return
  fi
  timed "test:lines on Node $line" pnpm exec turbo run test:lines --concurrency=1 --output-logs=full
}
line_pids=()
for line in $lines; do
  [[ $line == "$suite" ]] && continue
  ( use_node "$line" && line_steps "$line" ) >".lines-$line.log" 2>&1 </dev/null &
  line_pids+=("$!:$line")
done
lines_status=0
for entry in "${line_pids[@]}"; do
  wait "${entry%%:*}" || { lines_status=1; echo "test.sh: Node ${entry#*:} FAILED"; }
  cat ".lines-${entry#*:}.log"
done
[[ $lines_status -eq 0 ]] || exit 1

pack_status=0
wait "$pack_pid" || pack_status=$?
trap - EXIT
cat "$pack_log"
if [[ $pack_status -ne 0 ]]; then
  echo "test.sh: pack-install FAILED (exit $pack_status; log above and in $pack_log)"
  exit "$pack_status"
fi
echo "test.sh: all green in $((SECONDS - start)) s after setup, $((SECONDS - started)) s in all"
