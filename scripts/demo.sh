#!/usr/bin/env bash
# demo.sh — the main job: a fleet of worker processes electing a leader on an embedded ZooKeeper;
# the leader hands out jobs, workers run each under its own lock; the demo kills leaders and
# prints the failover timeline. Sets itself up on a fresh machine (see bootstrap.sh) and runs on
# the suite's Node line (scripts/runtimes.json: Node 26, from npm, in ~/.cache/zkrx).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lines.sh
./scripts/bootstrap.sh
use_node "$(runtime_pin .node.suite)"
echo "demo.sh: on $(command -v node) $(node --version)" >&2
exec node examples/worker-fleet/dist/demo.js "$@"
