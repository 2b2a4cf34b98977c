#!/usr/bin/env bash
# demo.sh — the main job: a fleet of worker processes electing a leader on an embedded ZooKeeper;
# the leader hands out jobs, workers run each under its own lock; the demo kills leaders and
# prints the failover timeline. Sets itself up on a fresh machine (see bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
exec node examples/worker-fleet/dist/demo.js "$@"
