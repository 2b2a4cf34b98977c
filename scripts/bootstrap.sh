#!/usr/bin/env bash
# bootstrap.sh [--with-interop] — everything the two quick-start commands need, idempotently:
# the Node lines of scripts/runtimes.json (22, 24, 26: the official binaries, from npm, into
# ~/.cache/zkrx — node-lines.sh), pnpm 10 (not corepack: its signature check fails against this
# registry), ZooKeeper 3.8 from Debian (brings Java), tmux (the zkrx command's tests drive it in
# a terminal), chromium (the console's tests drive it headless), and with --with-interop Curator
# 5.4 and kazoo 2.8 for the interop tests; then the workspace's dependencies and a build, on the
# suite's line (Node 26), and the zookeeper binding compiled on the native line (Node 24:
# build-binding.sh). One line per step; what the steps print goes to .bootstrap.log
# (ZKRX_BOOTSTRAP_LOG), shown only when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lines.sh

LOG_FILE=${ZKRX_BOOTSTRAP_LOG:-$PWD/.bootstrap.log}
: >"$LOG_FILE"

log() { printf '\033[1;34m[bootstrap]\033[0m %s\n' "$*" >&2; }

# step "what" command...: one line saying what and how long it took; its output in the log,
# printed (the last 100 lines) if it fails.
step() {
  local what=$1 started=$SECONDS status=0
  shift
  printf '\033[1;34m[bootstrap]\033[0m %s ...' "$what" >&2
  { printf '\n==== %s: %s\n' "$what" "$*"; } >>"$LOG_FILE"
  "$@" >>"$LOG_FILE" 2>&1 || status=$?
  if [[ $status -ne 0 ]]; then
    printf ' failed (exit %s)\n' "$status" >&2
    printf -- '---- the last lines of %s ----\n' "$LOG_FILE" >&2
    tail -n 100 "$LOG_FILE" >&2
    exit "$status"
  fi
  printf ' done (%s s)\n' "$((SECONDS - started))" >&2
}

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "need root for: $*"; return 1
  fi
}

# The Node lines download (npm) while Debian's packages install; waited for before pnpm runs.
node_lines=$(runtime_pin .node.lines)
printf '\n==== installing Node %s (npm %s)\n' "$node_lines" "$(node_package)" >>"$LOG_FILE"
lines_started=$SECONDS
line_jobs=()
for version in $node_lines; do
  install_node_line "$version" >>"$LOG_FILE" 2>&1 &
  line_jobs+=($!)
done

if ! command -v pnpm >/dev/null 2>&1 || [[ $(pnpm --version 2>/dev/null) != 10.* ]]; then
  step "installing pnpm 10" npm install --global --no-fund --no-audit pnpm@10
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
command -v chromium >/dev/null 2>&1 || packages+=(chromium)
if [[ ${1:-} == --with-interop ]] && ! have_interop; then
  packages+=(libcurator-recipes-java python3-kazoo)
fi
if [[ ${#packages[@]} -gt 0 ]]; then
  step "updating Debian's package lists" as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  step "installing Debian packages: ${packages[*]}" \
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
fi
command -v java >/dev/null 2>&1 || { log "java is missing (apt-get install -y zookeeper brings it)"; exit 1; }

wait_for_lines() {
  local failed=0
  for job in "${line_jobs[@]}"; do wait "$job" || failed=1; done
  for version in $node_lines; do [[ -x $(node_home "$version")/bin/node ]] || failed=1; done
  return "$failed"
}
printf '\033[1;34m[bootstrap]\033[0m installing Node %s (npm %s, in %s) ...' \
  "${node_lines// /, }" "$(node_package)" "$ZKRX_CACHE_DIR" >&2
if ! wait_for_lines; then
  printf ' failed\n---- the last lines of %s ----\n' "$LOG_FILE" >&2
  tail -n 100 "$LOG_FILE" >&2
  exit 1
fi
printf ' done (%s s)\n' "$((SECONDS - lines_started))" >&2

# Everything from here on runs on the suite's line (pnpm is a `#!/usr/bin/env node` script).
use_node "$(runtime_pin .node.suite)"

step "installing dependencies" pnpm install --frozen-lockfile --reporter=append-only

step "building the zookeeper binding on Node $(runtime_pin .node.native)" ./scripts/build-binding.sh

step "building" env TURBO_TELEMETRY_DISABLED=1 pnpm exec turbo run build --output-logs=errors-only
