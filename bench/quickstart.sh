#!/usr/bin/env bash
# Times `npm run quickstart` (issue 54's targets: at most 10 minutes on a fresh machine, at most 4
# with the set-up done) on a clean clone of HEAD, twice:
#   1. cold: nothing cached (an empty set-up cache, no pip cache, an empty npm cache), so every
#      download and build is in the figure; a fresh machine's, except the Debian packages
#      (PostgreSQL, Java, the sandbox tools), which stay installed on this one;
#   2. set up: the same clone again, its stack down first.
# With --ci, instead: `CI=true bash .ci/run` once, cold (the target: at most 25 minutes; its test
# stack is infra/test-env.sh's, ports 17233 and up); --ci --warm: the same with this machine's
# set-up cache (`$TANDEM_CACHE_DIR`, default ~/.cache/tandem) and pip and npm caches, as a CI with
# its caches restored (the target: at most 15 minutes).
# The clone's stack is its own (data folder in the clone, every port moved by --port-offset,
# default 500), so a developer's stack on the default ports is not touched; the machine should
# otherwise be idle (pause or stop other runs first). The clone and its caches are removed at the
# end (--keep leaves them under the printed folder).
#   bash bench/quickstart.sh [--ci [--warm]] [--port-offset N] [--keep]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
offset=500 keep=0 ci=0 warm=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port-offset) offset="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --ci) ci=1; shift ;;
    --warm) warm=1; shift ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
[ "$warm" = 0 ] || [ "$ci" = 1 ] || { echo "--warm goes with --ci (the quickstart's second run is the warm one)" >&2; exit 2; }
work="$(mktemp -d /tmp/tandem-quickstart.XXXXXX)"
chmod 755 "$work"  # the stack runs postgres as the postgres user when root: it must enter the clone
clone="$work/tandem"
git clone -q "$root" "$clone"
[ "$warm" = 1 ] || export TANDEM_CACHE_DIR="$work/cache" npm_config_cache="$work/npm-cache" PIP_NO_CACHE_DIR=1
export TANDEM_TEMPORAL_PORT=$((7233 + offset)) TANDEM_TEMPORAL_UI_PORT=$((8233 + offset))
export TANDEM_KAFKA_PORT=$((9092 + offset)) TANDEM_KAFKA_CONTROLLER_PORT=$((9093 + offset))
export TANDEM_PG_PORT=$((5433 + offset)) TANDEM_CPU_WORKER_METRICS_PORT=$((9464 + offset))
export TANDEM_POLICY_WORKER_METRICS_PORT=$((9465 + offset))
export TANDEM_DATABASE_URL="postgres://tandem@127.0.0.1:${TANDEM_PG_PORT}/tandem"
cd "$clone"
stack_down() { [ ! -x node_modules/.bin/node ] || node_modules/.bin/node bin/tandem.js stack down > /dev/null 2>&1 || true; }
cleanup() {
  stack_down
  if [ "$keep" = 1 ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "== bench/quickstart: $(git rev-parse --short HEAD) in $clone ($(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | xargs) model $(grep -m1 '^model' /proc/cpuinfo | cut -d: -f2 | xargs))"
t0=$SECONDS
if [ "$ci" = 1 ]; then
  set +e
  CI=true bash .ci/run < /dev/null 2>&1 | tee "$work/ci.log"
  rc=${PIPESTATUS[0]} s=$((SECONDS - t0))
  set -e
  printf '\n== bench/quickstart: %s CI=true bash .ci/run: exit %d in %d s (%d min %d s)\n' "$([ "$warm" = 1 ] && echo warm || echo cold)" \
    "$rc" "$s" $((s / 60)) $((s % 60))
  grep -E '^== (setup: done|.*wall)' "$work/ci.log" || true
  exit "$rc"
fi
npm run quickstart 2>&1 | tee "$work/cold.log"
cold=$((SECONDS - t0))
stack_down
t0=$SECONDS
npm run quickstart 2>&1 | tee "$work/setup-done.log"
done_s=$((SECONDS - t0))
held_out() { grep -E 'held-out|evaluation' "$1" | tail -3 | tr '\n' ' '; }
printf '\n== bench/quickstart: cold (nothing cached): %d s (%d min %d s); set-up done, stack down: %d s (%d min %d s)\n' \
  "$cold" $((cold / 60)) $((cold % 60)) "$done_s" $((done_s / 60)) $((done_s % 60))
grep -E '^== setup: (python engine|done)' "$work/cold.log" || true
echo "cold held-out: $(held_out "$work/cold.log")"
echo "set-up-done held-out: $(held_out "$work/setup-done.log")"
