#!/usr/bin/env bash
# A streaming replica of the 127.0.0.1:5432 cluster on 127.0.0.1:5433, for the replica
# router's tests (tests/replica). Idempotent: a replica already streaming is left alone;
# otherwise one is made afresh with `pg_basebackup -R` (which writes standby.signal and
# primary_conninfo) and started. A stopped copy is not reused: without a replication slot
# (which would hold the primary's WAL while the replica is away) it may never catch up.
#
#   .ci/start-replica.sh          start it (making it first)
#   .ci/start-replica.sh stop     stop it and remove its data directory
#
# The primary only gains one pg_hba line, `host replication postgres 127.0.0.1/32 trust`
# (and a reload), when it has none. The replica copies the whole cluster: databases the
# primary creates later (memoryhub_ci, pytest-django's test_*) reach it by streaming.
set -euo pipefail
PRIMARY_PORT=${PRIMARY_PORT:-5432}
REPLICA_PORT=${REPLICA_PORT:-5433}
PG_MAJOR=${PG_MAJOR:-$(ls /etc/postgresql | sort -n | tail -1)}
BIN=/usr/lib/postgresql/$PG_MAJOR/bin
DATA=${REPLICA_DATA:-/var/lib/postgresql/$PG_MAJOR/replica-$REPLICA_PORT}
LOG=$DATA/replica.log
PRIMARY="postgres://postgres@127.0.0.1:$PRIMARY_PORT/postgres"
REPLICA="postgres://postgres@127.0.0.1:$REPLICA_PORT/postgres"

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}
in_recovery() {
  [ "$(psql "$REPLICA" -qtAc 'SELECT pg_is_in_recovery()' 2>/dev/null)" = t ]
}
streaming() {
  [ "$(psql "$REPLICA" -qtAc 'SELECT status FROM pg_stat_wal_receiver' 2>/dev/null)" = streaming ]
}
stop() {
  if [ -f "$DATA/postmaster.pid" ]; then
    as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null || true
  fi
}

if [ "${1:-start}" = stop ]; then
  stop
  rm -rf "$DATA"
  echo "replica: stopped, $DATA removed"
  exit 0
fi

if in_recovery && streaming; then
  echo "replica: already streaming on port $REPLICA_PORT"
  exit 0
fi
stop

# pg_basebackup -R needs a replication connection; `all` in pg_hba does not match it.
HBA=$(psql "$PRIMARY" -qtAc 'SHOW hba_file')
if ! grep -Eq '^host[[:space:]]+replication[[:space:]]+postgres[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$HBA"; then
  echo "host replication postgres 127.0.0.1/32 trust" >>"$HBA"
  psql "$PRIMARY" -qtAc 'SELECT pg_reload_conf()' >/dev/null
  echo "replica: added the replication line to $HBA and reloaded the primary"
fi

rm -rf "$DATA"
install -d -o postgres -g postgres -m 700 "$DATA"
echo "replica: pg_basebackup from port $PRIMARY_PORT into $DATA"
as_postgres "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$DATA" \
  -R -X stream -c fast
# Debian keeps the configuration in /etc, so the copy has none. A hot standby needs these
# at least as large as the primary's.
settings=$(psql "$PRIMARY" -qtAc "SELECT string_agg(name || ' = ' || setting, E'\n')
  FROM pg_settings WHERE name IN ('max_connections', 'max_worker_processes',
  'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction')")
as_postgres tee "$DATA/postgresql.conf" >/dev/null <<EOF
port = $REPLICA_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
hot_standby = on
$settings
EOF
as_postgres tee "$DATA/pg_hba.conf" >/dev/null <<EOF
local all all trust
host all all 127.0.0.1/32 trust
EOF

as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null
for _ in $(seq 1 60); do
  in_recovery && streaming && break
  sleep 1
done
if ! in_recovery || ! streaming; then
  echo "replica: not streaming on port $REPLICA_PORT; its log, $LOG:" >&2
  tail -20 "$LOG" >&2 || true
  exit 1
fi
echo "replica: streaming on port $REPLICA_PORT ($DATA)"
