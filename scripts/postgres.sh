#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers for the tests, and prints nothing when one does.
# On this project's machines one already runs on 127.0.0.1:5432 (trust auth); where it is
# installed but stopped it is started, and where it is missing it is installed and started.
# The tests connect with $PODIUM_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail

ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
ready && exit 0

if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    echo "postgres: installing PostgreSQL"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    version="$(ls /etc/postgresql | head -n1)"
    # Trust local TCP connections: this server exists only for the tests on this machine.
    hba="/etc/postgresql/$version/main/pg_hba.conf"
    sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/; s/^(host\s+all\s+all\s+::1\/128\s+)\S+/\1trust/' "$hba"
fi
version="$(ls /etc/postgresql | head -n1)"
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
for _ in $(seq 1 30); do
    ready && exit 0
    sleep 1
done
echo "postgres: PostgreSQL did not come up on 127.0.0.1:5432" >&2
exit 1
