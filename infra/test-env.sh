# The test stack's settings: its own data folder and ports, so it never touches a developer's
# stack (.data/ on the default ports). Sourced by infra/test.sh.
export TANDEM_DATA_DIR="${TANDEM_TEST_DATA_DIR:-.data/test}"
export TANDEM_TEMPORAL_PORT=17233
export TANDEM_TEMPORAL_UI_PORT=18233
export TANDEM_KAFKA_PORT=19092
export TANDEM_KAFKA_CONTROLLER_PORT=19093
export TANDEM_PG_PORT=15433
export TANDEM_DATABASE_URL="postgres://tandem@127.0.0.1:${TANDEM_PG_PORT}/tandem"
