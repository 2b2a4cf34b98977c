#!/usr/bin/env bash
# bootstrap.sh [--with-interop] — everything the two quick-start commands need, idempotently:
# pnpm 10 (not corepack: its signature check fails against this registry), ZooKeeper 3.8 from
# Debian (brings Java), tmux (the zkrx command's tests drive it in a terminal), and with
# --with-interop Curator 5.4 and kazoo 2.8 for the interop tests; then the workspace's
# dependencies (pnpm compiles the zookeeper binding) and a build.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1;34m[bootstrap]\033[0m %s\n' "$*" >&2; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "need root for: $*"; return 1
  fi
}

if ! command -v pnpm >/dev/null 2>&1 || [[ $(pnpm --version 2>/dev/null) != 10.* ]]; then
  log "installing pnpm 10"
  npm install --global --no-fund --no-audit pnpm@10 >&2
fi

have_zookeeper() {
  [[ -n ${ZOOKEEPER_HOME:-} && -d ${ZOOKEEPER_HOME} ]] || [[ -f /usr/share/java/zookeeper.jar ]] ||
    command -v zkServer.sh >/dev/null 2>&1
}
have_interop() {
  [[ -f /usr/share/java/curator-recipes.jar ]] && /usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1
}

packages=()
have_zookeeper || packages+=(zookeeper)
command -v tmux >/dev/null 2>&1 || packages+=(tmux)
if [[ ${1:-} == --with-interop ]] && ! have_interop; then
  packages+=(libcurator-recipes-java python3-kazoo)
fi
if [[ ${#packages[@]} -gt 0 ]]; then
  log "installing Debian packages: ${packages[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2
fi
command -v java >/dev/null 2>&1 || { log "java is missing (apt-get install -y zookeeper brings it)"; exit 1; }

log "installing dependencies"
pnpm install --frozen-lockfile --reporter=append-only >&2

log "building"
TURBO_TELEMETRY_DISABLED=1 pnpm exec turbo run build --output-logs=errors-only >&2
