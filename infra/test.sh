#!/usr/bin/env bash
# The test command (README, .ci/run): set-up, then every tier. Integration and end-to-end tests
# run against a fresh test stack (real Temporal, Kafka and Postgres) on its own data folder and
# ports; the stack is taken down at the end, pass or fail.
# Two lanes run side by side, since they share nothing: the tiers that need no stack (unit,
# engine; its output printed whole when it ends), and the stack's (live): first the tests that
# disrupt the stack (kill -9, stack down/up, engine restart: each needs the stack to itself), then
# the other integration and end-to-end tests, one file at a time, and last those that may share the
# stack, two files at a time (by then the other lane has ended). Runners' summary lines are
# printed, with each lane's wall time, each test file's time (test/support/fileTimes.mjs) and
# pytest's slowest tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash infra/setup.sh
export PATH="$root/node_modules/.bin:$PATH"  # the project's Node and tools (infra/setup.sh)

source infra/test-env.sh
echo; echo "== test stack in $TANDEM_DATA_DIR"
node bin/tandem.js stack down >/dev/null 2>&1 || true
rm -rf "$TANDEM_DATA_DIR"
logs="$(mktemp -d)"  # each lane's output
trap 'node bin/tandem.js stack down || true; rm -rf "$logs"; echo "== the test command: $SECONDS s wall, set-up included"' EXIT
node bin/tandem.js stack up

disruptive=(test/e2e/faults.e2e.test.ts test/e2e/resume.e2e.test.ts test/e2e/long-responses.e2e.test.ts test/integration/stack-processes.integration.test.ts)
# Integration tests that need no stack (the sandbox; an engine and its client; a policy worker that
# stops at start; agent turns against an engine, their producer never connecting): they run in the
# no-stack lane, off the stack's, the longer one.
stackless=(test/integration/sandbox.integration.test.ts test/integration/engine-client.integration.test.ts test/integration/policy-worker.integration.test.ts
  test/integration/agent-turn.integration.test.ts)
# End-to-end tests that may share the stack with one other such file: they only start runs and read
# them, start no worker on a shared task queue (it would take other files' turns; async's worker
# has a queue and an update lock of its own), kill nothing, and assert nothing of the stack's shared counters, topics or whole event store
# (audit's projector rebuild compares every read model with the live projection: alone).
shared=(test/e2e/realmodel.e2e.test.ts test/e2e/lifecycle.e2e.test.ts test/e2e/async.e2e.test.ts
  test/e2e/evaluation.e2e.test.ts test/e2e/replay.e2e.test.ts test/e2e/training.e2e.test.ts test/e2e/specialisation.e2e.test.ts
  test/e2e/report.e2e.test.ts)
# The test runner and its test processes start with infra/node/v8Flags.js (Node's exit deadlock,
# nodejs/node#54918).
run_tests() {
  node --import ./infra/node/v8Flags.js --import tsx --test --test-reporter=tap --test-reporter-destination=stdout \
    --test-reporter=./test/support/fileTimes.mjs --test-reporter-destination=stdout "$@"
}
# `timed NAME CMD...`: runs CMD, then prints the lane's wall time (whether it passed or not).
timed() {
  local name="$1" t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "== $name: $((SECONDS - t0)) s wall$([ "$rc" = 0 ] || echo ", FAILED")"
  return "$rc"
}
node_test() { run_tests --test-concurrency=1 --test-timeout=900000 "$@"; }
# The lane that needs no stack runs in the background, its output printed when it ends: unit
# tests, the integration tests that need no stack, engine tests (torch on one thread: beside the
# stack's lane, a tiny model's matmuls on two threads of a 2-core machine ran 8x slower), the GPU
# check's smoke mode, lint.
(
  export TANDEM_TORCH_THREADS="${TANDEM_TORCH_THREADS:-1}"
  echo "== unit tests"
  timed "unit tests" run_tests test/unit/*.unit.test.ts
  echo; echo "== integration tests that need no stack: ${stackless[*]}"
  timed "integration tests that need no stack" node_test "${stackless[@]}"
  echo; echo "== engine tests (pytest)"
  timed "engine tests" .venv/bin/python -m pytest services/engine/tests -q --durations=15
  echo; echo "== GPU check in smoke mode (bench/gpu/check.py --smoke: its every stage, tiny, on the CPU)"
  timed "GPU check smoke" .venv/bin/python -m pytest bench/gpu -q
  echo; echo "== Python lint of the code environment (ruff: syntax errors, pyflakes)"
  .venv/bin/ruff check --no-cache --select E9,F envs/code
) > "$logs/no-stack.log" 2>&1 &
no_stack=$!

# The stack's lane, in the foreground: first the tests that disrupt the stack, one file at a time
# (each needs the stack to itself), then the other integration and end-to-end tests.
status=0
echo; echo "== tests that disrupt the stack: ${disruptive[*]}"
if timed "tests that disrupt the stack" node_test "${disruptive[@]}"; then
  rest=()
  for f in test/integration/*.integration.test.ts test/e2e/*.e2e.test.ts; do
    [[ " ${disruptive[*]} ${stackless[*]} ${shared[*]} " == *" $f "* ]] || rest+=("$f")
  done
  echo; echo "== integration and end-to-end tests, one file at a time"
  timed "integration and end-to-end tests, one file at a time" node_test "${rest[@]}" || status=1
  echo; echo "== end-to-end tests that share the stack, two files at a time: ${shared[*]}"
  timed "end-to-end tests, two files at a time" run_tests --test-concurrency=2 --test-timeout=900000 "${shared[@]}" || status=1
else
  status=1
  echo "== the other integration and end-to-end tests did not run: a disruptive test failed"
fi
wait "$no_stack" || status=1
echo; cat "$logs/no-stack.log"
[ "$status" = 0 ] || { echo "== a lane failed (see above)"; exit 1; }
