#!/usr/bin/env bash
# Build pgvector for the local PostgreSQL from Debian trixie's source package.
# Debian 12 ships no binary pgvector; trixie's 0.8.0 source builds against
# postgresql-server-dev-15 in under a minute (see docs/deploy.md).
set -euo pipefail
PG_MAJOR=${PG_MAJOR:-$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)}
PG_MAJOR=${PG_MAJOR:-15}
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
if [ -f "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" ]; then
  echo "pgvector already installed for PostgreSQL $PG_MAJOR"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "postgresql-server-dev-$PG_MAJOR" dpkg-dev build-essential >/dev/null
cat > /etc/apt/sources.list.d/memoryhub-trixie-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt-get update -qq
work=$(mktemp -d)
cd "$work"
apt-get source -qq pgvector
cd pgvector-*/
# OPTFLAGS="" keeps the build portable (no -march=native).
make -s PG_CONFIG="$PG_CONFIG" OPTFLAGS="" -j"$(nproc)"
make -s PG_CONFIG="$PG_CONFIG" install
rm -f /etc/apt/sources.list.d/memoryhub-trixie-src.sources
apt-get update -qq || true
rm -rf "$work"
echo "pgvector installed for PostgreSQL $PG_MAJOR"
