#!/usr/bin/env bash
# build-binding.sh [VERSION] — compiles the `zookeeper` binding (the stock npm package that
# @zkrx/core's native transport loads; a devDependency of core) for one Node line: by default
# the native line of scripts/runtimes.json, installed from npm into the cache (node-lines.sh).
# A NAN addon is built for one Node ABI: the line that builds it is the line that can load it.
# `pnpm install` leaves it unbuilt (ignoredBuiltDependencies: it does not build on Node 26, the
# suite's line); bootstrap.sh runs this. Quick when the build there already loads on that line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lines.sh
version=${1:-$(runtime_pin .node.native)}
install_node_line "$version"
use_node "$version"
dir=$(node -p "require('node:path').dirname(require.resolve('zookeeper/package.json', { paths: ['packages/core'] }))")
# The package's own install script: the C client (once), then node-gyp-build, which keeps a build
# that loads on this Node and compiles one otherwise (npm run puts npm's node-gyp on PATH).
(cd "$dir" && npm run install --silent)
node -e "require(require.resolve('node-gyp-build', { paths: [process.argv[1]] }))(process.argv[1])" "$dir"
echo "build-binding.sh: the zookeeper binding in $dir loads on Node $version"
