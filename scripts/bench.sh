#!/usr/bin/env bash
# Runs Podium's benchmark suite and writes the figures into BENCHMARKS.md, between the
# `<!-- bench:NAME -->` markers of each section, with the machine and the commit they ran on.
#
#   scripts/bench.sh            # everything (about 80 minutes on 2 cores, after the build)
#   scripts/bench.sh api ipam   # some: plugin_call, ipam, api, scale, latency, latency_postgres,
#                               # shared_service, ironic_redfish, bmc_sim, latency_simulator,
#                               # scale_simulator
#
# Installs what it needs first (the test peers: sushy-tools, PostgreSQL, and Ironic for the
# latency benchmark), like scripts/test.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

scripts/install-deps.sh --tests >/dev/null
if ! command -v wrk >/dev/null 2>&1; then # the API benchmark's load generator
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi

which=("$@")
[ ${#which[@]} -eq 0 ] && which=(plugin_call ipam api scale latency latency_postgres shared_service ironic_redfish bmc_sim latency_simulator scale_simulator)
out="$(mktemp -d)"

machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), \
$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); \
$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)"

# The PostgreSQL benchmarks run on a server of their own with PostgreSQL's defaults: this
# machine's shared server is set up for tests (autovacuum off), and a queue without vacuum
# slows as dead rows pile up (docs/operations.md), which is not what a deployment sees.
pg_cluster=""
cleanup() { # the private PostgreSQL server, if started, and the scratch output
  [ -n "$pg_cluster" ] && runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_cluster/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$pg_cluster" "$out"
}
trap cleanup EXIT
private_postgres() { # starts it once, and points the benchmarks at it
  [ -n "$pg_cluster" ] && return
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
  pg_cluster="$(mktemp -d)"
  chown postgres "$pg_cluster"
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  runuser -u postgres -- "$pg_bin/initdb" -D "$pg_cluster/data" -A trust -U postgres >/dev/null
  runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_cluster/data" -l "$pg_cluster/log" -w \
    -o "-p $port -k $pg_cluster -c listen_addresses=127.0.0.1" start >/dev/null
  export PODIUM_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
}

run() { # NAME COMMAND...: runs a benchmark, its output into $out/NAME
  local name="$1"; shift
  printf '\n=== %s\n' "$*" >&2
  "$@" | tee "$out/$name"
}

for b in "${which[@]}"; do
  case "$b" in
    plugin_call)
      rm -rf target/criterion/driver_call target/criterion/render
      run plugin_call.raw cargo bench -q -p podium-tests --bench plugin_call >/dev/null
      python3 scripts/criterion_table.py target/criterion >"$out/plugin_call"
      cat "$out/plugin_call" ;;
    ipam)
      private_postgres
      run ipam.sqlite cargo bench -q -p podium-tests --bench ipam -- 10000 >/dev/null
      PODIUM_TEST_DATABASE=postgres run ipam.postgres cargo bench -q -p podium-tests --bench ipam -- 5000 >/dev/null
      { cat "$out/ipam.sqlite"; echo; cat "$out/ipam.postgres"; } >"$out/ipam" ;;
    api) run api cargo bench -q -p podium-tests --bench api >/dev/null ;;
    scale) run scale cargo bench -q -p podium-tests --bench scale >/dev/null ;;
    # 1,000 hosts, each with its own BMC at 500 ms, over ten emulator processes.
    # Then OpenStack Ironic in the same run, against the same emulators and proxies.
    latency)
      scripts/setup-peers.sh --ironic
      PODIUM_BENCH_IRONIC=1 run latency cargo bench -q -p podium-tests --bench latency -- 1000 500 0 100 >/dev/null ;;
    # The same on PostgreSQL: one Podium process, then two sharing the work.
    latency_postgres)
      private_postgres
      PODIUM_TEST_DATABASE=postgres run latency_postgres.one cargo bench -q -p podium-tests --bench latency -- 1000 500 0 100 1 1 >/dev/null
      PODIUM_TEST_DATABASE=postgres run latency_postgres.two cargo bench -q -p podium-tests --bench latency -- 1000 500 0 100 1 2 >/dev/null
      { cat "$out/latency_postgres.one"; echo; cat "$out/latency_postgres.two"; } >"$out/latency_postgres" ;;
    # The same 1,000 hosts behind one shared Redfish service.
    shared_service) run shared_service cargo bench -q -p podium-tests --bench shared_service -- 1000 500 >/dev/null ;;
    # What the BMC simulator costs a request, over HTTP and HTTPS.
    bmc_sim) run bmc_sim cargo bench -q -p podium-tests --bench bmc_sim >/dev/null ;;
    # 10,000 hosts, each with its own simulated BMC at 500 ms, over HTTP and then HTTPS.
    latency_simulator)
      PODIUM_BENCH_BMCS=simulator run latency_simulator.http cargo bench -q -p podium-tests --bench latency -- 10000 500 0 100 1 1 >/dev/null
      PODIUM_BENCH_BMCS=simulator PODIUM_BENCH_BMC_TLS=1 run latency_simulator.https cargo bench -q -p podium-tests --bench latency -- 10000 500 0 100 1 1 >/dev/null
      { cat "$out/latency_simulator.http"; echo; cat "$out/latency_simulator.https"; } >"$out/latency_simulator" ;;
    # 100 pod managers of 1,000 simulated systems each at 500 ms a request, each letting a call
    # send 256 requests at once: SQLite, then PostgreSQL with two processes.
    scale_simulator)
      private_postgres
      PODIUM_BENCH_BMCS=simulator run scale_simulator.sqlite cargo bench -q -p podium-tests --bench scale -- 100 1000 1000 500 1 0 256 >/dev/null
      PODIUM_TEST_DATABASE=postgres PODIUM_BENCH_BMCS=simulator run scale_simulator.postgres cargo bench -q -p podium-tests --bench scale -- 100 1000 1000 500 2 0 256 >/dev/null
      { cat "$out/scale_simulator.sqlite"; echo; cat "$out/scale_simulator.postgres"; } >"$out/scale_simulator" ;;
    # Ironic's manage and power on of 20 nodes, straight at the BMC and through Podium's Redfish service.
    ironic_redfish) run ironic_redfish cargo bench -q -p podium-tests --bench ironic_redfish -- 20 >/dev/null ;;
    *) echo "unknown benchmark: $b (plugin_call, ipam, api, scale, latency, latency_postgres, shared_service, ironic_redfish, bmc_sim, latency_simulator, scale_simulator)" >&2; exit 2 ;;
  esac
  python3 - "$b" "$out/$b" "$machine" <<'EOF'
import re, sys
name, path, machine = sys.argv[1:]
body = open(path).read().strip()
doc = open("BENCHMARKS.md").read()
begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
if begin not in doc or end not in doc:
    sys.exit(f"BENCHMARKS.md has no {begin} ... {end} section")
block = f"{begin}\n_Measured by `scripts/bench.sh {name}` on {machine}._\n\n{body}\n{end}"
doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
open("BENCHMARKS.md", "w").write(doc)
EOF
done
printf '\nBENCHMARKS.md updated: %s\n' "${which[*]}" >&2
