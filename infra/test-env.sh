# The test stack's settings: its own data folder and ports, so it never touches a developer's
# stack (.data/ on the default ports). Sourced by infra/test.sh. TANDEM_TEST_PORT_OFFSET moves
# every port at once, so two test stacks can run side by side (e.g. offset 100 with its own
# TANDEM_TEST_DATA_DIR).
offset="${TANDEM_TEST_PORT_OFFSET:-0}"
export TANDEM_DATA_DIR="${TANDEM_TEST_DATA_DIR:-.data/test}"
export TANDEM_TEMPORAL_PORT=$((17233 + offset))
export TANDEM_TEMPORAL_UI_PORT=$((18233 + offset))
export TANDEM_KAFKA_PORT=$((19092 + offset))
export TANDEM_KAFKA_CONTROLLER_PORT=$((19093 + offset))
export TANDEM_PG_PORT=$((15433 + offset))
export TANDEM_DATABASE_URL="postgres://tandem@127.0.0.1:${TANDEM_PG_PORT}/tandem"
export TANDEM_CPU_WORKER_METRICS_PORT=$((19464 + offset))
export TANDEM_POLICY_WORKER_METRICS_PORT=$((19465 + offset))
