#!/usr/bin/env bash
# Builds and installs the pgvector extension for the local PostgreSQL from Debian's `pgvector`
# source package (trixie), against postgresql-server-dev-<major>. Does nothing when the extension
# is already available. Needs root (apt-get, make install).
set -euo pipefail

PSQL="psql -h ${PGHOST:-127.0.0.1} -U ${PGUSER:-postgres} -d postgres -tAc"
if $PSQL "select 1 from pg_available_extensions where name = 'vector'" 2>/dev/null | grep -q 1; then
  echo "pgvector: already available"
  exit 0
fi

major=$($PSQL "show server_version_num" | cut -c1-2)
echo "pgvector: building for PostgreSQL ${major}"

if [ ! -f /etc/apt/sources.list.d/trixie-src.sources ]; then
  cat > /etc/apt/sources.list.d/trixie-src.sources <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "postgresql-server-dev-${major}" build-essential dpkg-dev >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -qq --download-only pgvector >/dev/null
dpkg-source -x --no-check ./pgvector_*.dsc src >/dev/null
cd src
make -s PG_CONFIG="/usr/lib/postgresql/${major}/bin/pg_config" OPTFLAGS="" >/dev/null
make -s PG_CONFIG="/usr/lib/postgresql/${major}/bin/pg_config" install >/dev/null

$PSQL "select 1 from pg_available_extensions where name = 'vector'" | grep -q 1
echo "pgvector: installed $($PSQL "select default_version from pg_available_extensions where name = 'vector'")"
