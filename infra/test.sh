#!/usr/bin/env bash
# The test command (README, .ci/run): set-up, unit tests, engine tests, then integration and
# end-to-end tests against a fresh test stack (real Temporal, Kafka and Postgres) on its own
# data folder and ports. The stack is taken down at the end, pass or fail.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash infra/setup.sh

echo; echo "== unit tests"
node --import tsx --test test/unit/*.unit.test.ts

echo; echo "== engine tests (pytest)"
.venv/bin/python -m pytest services/engine/tests -q

source infra/test-env.sh
echo; echo "== test stack in $TANDEM_DATA_DIR"
node bin/tandem.js stack down >/dev/null 2>&1 || true
rm -rf "$TANDEM_DATA_DIR"
trap 'node bin/tandem.js stack down || true' EXIT
node bin/tandem.js stack up

echo; echo "== integration and end-to-end tests"
node --import tsx --test --test-concurrency=1 --test-timeout=900000 test/integration/*.integration.test.ts test/e2e/*.e2e.test.ts
