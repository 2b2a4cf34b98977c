#!/usr/bin/env bash
# test.sh — the whole test suite, as CI runs it (.ci/run): lint, typecheck, package checks, and
# every package's unit and integration tests against real ZooKeeper servers (plus Curator and
# kazoo for the interop tests), then every published package packed as a release would publish
# it and installed alone with npm in a fresh project. Sets itself up on a fresh machine (see
# bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh --with-interop
export TURBO_TELEMETRY_DISABLED=1
start=$SECONDS
pnpm exec biome ci .
pnpm exec turbo run typecheck check:package --output-logs=errors-only
# One package at a time: integration tests time failovers on 2 cores.
pnpm exec turbo run test --concurrency=1 --output-logs=full
# Each published package from its tarball, alone, as users install it (RELEASING.md).
node scripts/pack-install/main.mjs
echo "test.sh: all green in $((SECONDS - start)) s (after setup)"
