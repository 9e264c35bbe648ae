#!/usr/bin/env bash
# A local Citus cluster for tests and benches: a coordinator and two workers on loopback, each a
# PostgreSQL of its own with Citus and pgvector, trust auth. Needs Citus installed
# (scripts/citus/build.sh) and pgvector (scripts/install-pgvector.sh). Runs as the postgres user.
#
#   scripts/citus/cluster.sh start [DIR]   # creates the clusters under DIR on first use, starts them
#   scripts/citus/cluster.sh stop [DIR]
#
# Ports: CITUS_PORT (coordinator, default 9700) and the next two for the workers. Prints the
# coordinator's URL, the CITUS_URL the tests and `lattice citus distribute` take.
set -euo pipefail

action=${1:?usage: scripts/citus/cluster.sh start|stop [DIR]}
dir=${2:-${CITUS_DIR:-/tmp/lattice-citus}}
port=${CITUS_PORT:-9700}
bindir=$(dirname "${PG_CONFIG:-$(ls -d /usr/lib/postgresql/*/bin/pg_config | sort -V | tail -1)}")
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
nodes=(coordinator worker1 worker2)

case "$action" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    for i in 0 1 2; do
      node=${nodes[$i]} p=$((port + i))
      if [ ! -f "$dir/$node/PG_VERSION" ]; then
        as_pg "$bindir/initdb" -D "$dir/$node" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
        echo "include 'lattice.conf'" >> "$dir/$node/postgresql.conf"
      fi
      # Rewritten on every start (a running node takes it at its next restart). Each database has a
      # Citus maintenance worker: tests that make a database per file need many.
      cat > "$dir/$node/lattice.conf" <<CONF
port = $p
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'citus'
max_connections = 300
max_worker_processes = 64
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
citus.enable_unsafe_triggers = on
CONF
      [ "$(id -u)" = 0 ] && chown postgres "$dir/$node/lattice.conf"
      if ! as_pg "$bindir/pg_ctl" -D "$dir/$node" status >/dev/null 2>&1; then
        as_pg "$bindir/pg_ctl" -D "$dir/$node" -l "$dir/$node.log" -w start >/dev/null
      fi
    done
    psql_at() { psql -h 127.0.0.1 -p "$1" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtAc "$2"; }
    for i in 0 1 2; do psql_at $((port + i)) 'CREATE EXTENSION IF NOT EXISTS citus' >/dev/null; done
    psql_at "$port" "SELECT citus_set_coordinator_host('127.0.0.1', $port)" >/dev/null
    for i in 1 2; do
      psql_at "$port" "SELECT 1 FROM pg_dist_node WHERE nodeport = $((port + i))" | grep -q 1 || psql_at "$port" "SELECT citus_add_node('127.0.0.1', $((port + i)))" >/dev/null
    done
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    for node in "${nodes[@]}"; do
      [ -f "$dir/$node/postmaster.pid" ] && as_pg "$bindir/pg_ctl" -D "$dir/$node" -m fast -w stop >/dev/null || true
    done
    ;;
  *) echo "usage: scripts/citus/cluster.sh start|stop [DIR]" >&2; exit 2 ;;
esac
