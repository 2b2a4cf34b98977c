#!/usr/bin/env bash
# test.sh — the whole test suite, as CI runs it (.ci/run), on the Node lines of
# scripts/runtimes.json (installed from npm by bootstrap.sh, into ~/.cache/zkrx): lint, typecheck,
# package checks and every package's unit and integration tests against real ZooKeeper servers
# (plus Curator and kazoo for the interop tests) on the suite's line (Node 26); core's
# native-transport tests on the native line (Node 24: the stock binding does not build on 26);
# each package's `test:lines` (what rests on behaviour that changed between Node lines) on the
# other lines; and every published package packed as a release would publish it and installed
# alone with npm in a fresh project, on Node 22, 24 and 26, Bun and Deno (pack-install). All but
# lint and the suite run beside the suite, one step at a time (see beside_steps). Sets itself up
# on a fresh machine (see bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lines.sh
suite=$(runtime_pin .node.suite)
native=$(runtime_pin .node.native)
lines=$(runtime_pin .node.lines)
started=$SECONDS
if [[ ${1:-} != --beside ]]; then
  echo "test.sh: the suite on Node $suite, core's native transport on Node $native, test:lines and pack-install on Node ${lines// /, } (npm $(node_package), in $ZKRX_CACHE_DIR), Bun $(runtime_pin .bun), Deno $(runtime_pin .deno)"
  ./scripts/bootstrap.sh --with-interop
fi
use_node "$suite"
[[ ${1:-} == --beside ]] ||
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

# What runs beside the suite (`test.sh --beside`, from below): typecheck and the package checks
# with pack-install, then the tests of the beside packages, then the native transport and
# test:lines on the other lines — one step after another, so one stream of tests beside the
# suite at any moment (the suite's tests wait on servers more than they compute; pack-install
# already ran beside them, and the two lines' tests beside each other). Every step runs,
# whatever failed before it; the steps fail if one did. `--only`: bootstrap built everything, and
# a build replayed from turbo's cache would rewrite the dist/ that the CLI, bench, soak and
# pack-install run.
line_steps() { # line_steps VERSION: what runs on that line
  local line=$1
  echo "test.sh: on Node $line"
  if [[ $line == "$native" ]]; then
    timed "core's native-transport tests on Node $line" \
      pnpm --filter @zkrx/core exec vitest run --project integration-native || return
  fi
  timed "test:lines on Node $line" pnpm exec turbo run test:lines --concurrency=1 --output-logs=full
}
# The packages whose tests run beside the suite rather than in it: the examples, the adapters,
# the README examples and the built CLI and bench — small suites of what is built on the recipes
# (the suite keeps the protocol, the recipes, testing, interop and the soak), which like every
# test here wait for events, never for a time. They shorten the suite by as much as they
# lengthen the steps beside it, which had the time.
beside_packages=(@zkrx/bench @zkrx/cli @zkrx/docs @zkrx/express @zkrx/nestjs
  @zkrx/example-express-app @zkrx/example-nestjs-app @zkrx/example-worker-fleet)
beside_steps() {
  local status=0 began=$SECONDS pack_pid
  # Each published package from its tarball, alone, as users install it (RELEASING.md), on every
  # runtime: it waits on npm and servers more than it computes, so beside typecheck (which
  # computes and tests nothing), its output in a log of its own, printed once it ends.
  local pack_log=$PWD/.pack-install.log
  timed pack-install node scripts/pack-install/main.mjs >"$pack_log" 2>&1 </dev/null &
  pack_pid=$!
  timed "typecheck and package checks" \
    pnpm exec turbo run typecheck check:package --only --concurrency=1 --output-logs=errors-only ||
    status=1
  wait "$pack_pid" || status=1
  cat "$pack_log"
  timed "tests of ${beside_packages[*]} on Node $suite" pnpm exec turbo run test --concurrency=1 \
    --output-logs=full "${beside_packages[@]/#/--filter=}" || status=1
  # The native transport where the stock binding builds (build-binding.sh built it for this
  # line), then what changed between the lines under zkrx (async context, address selection,
  # timers and signals, socket reads) on the other lines: each line in a process of its own.
  local line
  for line in $lines; do
    [[ $line == "$suite" ]] && continue
    ( use_node "$line" && line_steps "$line" ) </dev/null || { status=1; echo "test.sh: Node $line FAILED"; }
  done
  echo "test.sh: beside the suite: $((SECONDS - began)) s"
  return "$status"
}
if [[ ${1:-} == --beside ]]; then beside_steps; exit; fi

timed lint pnpm exec biome ci .
# The steps beside the suite, in their own process group (setsid), ended with everything they
# started if a step here fails; their output in their own log, printed once they end.
beside_log=${ZKRX_BESIDE_LOG:-$PWD/.beside.log}
setsid ./scripts/test.sh --beside >"$beside_log" 2>&1 </dev/null &
beside_pid=$!
trap 'kill -- "-$beside_pid" 2>/dev/null || true' EXIT
echo "test.sh: typecheck, package checks, the tests of ${beside_packages[*]}, pack-install and the other Node lines run beside the suite, one after another (pid $beside_pid, log $beside_log)"

# One package at a time: integration tests time failovers on 2 cores. Every package runs, whatever
# failed before it (the steps beside the suite take as long anyway): one failure hides no other.
suite_status=0
timed "tests on Node $suite" pnpm exec turbo run test --concurrency=1 --continue=always \
  --output-logs=full "${beside_packages[@]/#/--filter=!}" || suite_status=1

beside_status=0
wait "$beside_pid" || beside_status=$?
trap - EXIT
cat "$beside_log"
if [[ $beside_status -ne 0 ]]; then
  echo "test.sh: beside the suite: FAILED (exit $beside_status; log above and in $beside_log)"
fi
[[ $suite_status -eq 0 && $beside_status -eq 0 ]] || exit 1
echo "test.sh: all green in $((SECONDS - start)) s after setup, $((SECONDS - started)) s in all"
