#!/usr/bin/env bash
# One LoCoMo run through the HTTP API, on a new store of one backend:
#
#   bench/locomo_run.sh sqlite|postgres OUT.json [bench/locomo.py options]
#
# Starts the web service (gunicorn, 2 workers x 8 threads) and one Celery worker
# (concurrency 1) on that backend (SQLite with the filesystem broker; or PostgreSQL +
# pgvector in database memoryhub_locomo, recreated, with Redis db 14/15 as broker and cache),
# ingests the dev conversations into new agents, runs the store's maintenance once all is
# embedded (VACUUM ANALYZE on PostgreSQL, `database_optimize` on SQLite: what autovacuum
# and the hourly beat task do), then asks the questions; stops both at the end. The load
# average is printed with every figure. Work files: /tmp/memoryhub-locomo-<backend>.
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:?sqlite or postgres}
out=${2:?output JSON path}
shift 2
work="/tmp/memoryhub-locomo-$backend"
rm -rf "$work" && mkdir -p "$work"
export MEMORYHUB_DATA_DIR="$work/data"
case "$backend" in
  sqlite)
    unset DATABASE_URL CELERY_BROKER_URL CACHE_URL
    port=8925
    maintenance=".venv/bin/python manage.py shell -c 'from apps.core.services import database_optimize; database_optimize()'"
    ;;
  postgres)
    pg=postgres://postgres@127.0.0.1:5432
    psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS memoryhub_locomo" -c "CREATE DATABASE memoryhub_locomo"
    export DATABASE_URL="$pg/memoryhub_locomo" CELERY_BROKER_URL=redis://127.0.0.1:6379/14 \
      CACHE_URL=redis://127.0.0.1:6379/15
    redis-cli -n 14 flushdb >/dev/null && redis-cli -n 15 flushdb >/dev/null
    port=8924
    maintenance="psql '$DATABASE_URL' -qc 'VACUUM ANALYZE'"
    ;;
  *) echo "backend: sqlite or postgres" >&2; exit 2 ;;
esac
.venv/bin/python manage.py migrate -v 0
.venv/bin/gunicorn memoryhub.wsgi --bind "127.0.0.1:$port" --workers 2 --threads 8 \
  >"$work/web.log" 2>&1 &
.venv/bin/celery -A memoryhub worker -l warning --concurrency 1 >"$work/worker.log" 2>&1 &
trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT
for _ in $(seq 1 60); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break
  sleep 1
done
.venv/bin/python bench/locomo.py --url "http://127.0.0.1:$port" --create-agents \
  --prefix "lc-$backend" --after-ingest "$maintenance" --out "$out" "$@"
