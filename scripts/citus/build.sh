#!/usr/bin/env bash
# Builds and installs Citus into the local PostgreSQL from a Citus source directory you provide
# (a checkout or release archive of citusdata/citus; the newest release for PostgreSQL 15 is
# 13.2.2). Fetches no source: Citus is not in Debian's archive. Installs the headers the server's
# headers include (Debian packages) and needs postgresql-server-dev-<major> and a C toolchain
# (scripts/install-pgvector.sh installs both); root for apt-get and `make install`.
# Does nothing when the extension is already installed. Usage: scripts/citus/build.sh SRC_DIR
set -euo pipefail

src=${1:?usage: scripts/citus/build.sh CITUS_SOURCE_DIR}
pg_config=${PG_CONFIG:-$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1)}
sharedir=$("$pg_config" --sharedir)
if [ -f "$sharedir/extension/citus.control" ]; then
  echo "citus: already installed ($(grep default_version "$sharedir/extension/citus.control"))"
  exit 0
fi
echo "citus: building $(grep -m1 AC_INIT "$src/configure.ac" | sed 's/.*\[\(.*\)\])/\1/') against $("$pg_config" --version)"

export DEBIAN_FRONTEND=noninteractive
# PostgreSQL's pg_config.h says it was built with zstd, lz4, GSSAPI and OpenSSL: their headers.
apt-get install -y -qq --no-install-recommends libzstd-dev liblz4-dev libkrb5-dev libssl-dev >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$src/." "$work/"
cd "$work"
# PostgreSQL 15.20 exports have_createdb_privilege(), which Citus 13.2.2's compatibility header
# also defines (static) for PostgreSQL 15: rename Citus's copy, so the call uses PostgreSQL's.
if grep -q '^have_createdb_privilege(void)$' src/include/pg_version_compat.h \
  && grep -q 'extern bool have_createdb_privilege' "$("$pg_config" --includedir-server)/commands/dbcommands.h"; then
  sed -i 's/^have_createdb_privilege(void)$/citus_have_createdb_privilege(void)/' src/include/pg_version_compat.h
fi
# Keep configure newer than configure.ac, or make would run autoreconf (not installed).
touch configure
./configure PG_CONFIG="$pg_config" --without-libcurl >/dev/null
make -s -j"$(nproc)" >/dev/null
make -s install >/dev/null
echo "citus: installed $(grep default_version "$sharedir/extension/citus.control")"
