#!/usr/bin/env bash
# Writes under load: `POST /v1/tenants` (a new tenant each: one row, and one audit event) against
# a `podium serve` binary on a fresh SQLite database, driven by `wrk` (one thread, 8 keep-alive
# connections, 10 seconds), three runs. Prints requests per second and p50 / p99 latency.
#
#   cargo build --release -p podium-tests --bin podium-under-test
#   scripts/bench-writes.sh target/release/podium-under-test
set -euo pipefail
BIN=${1:?usage: scripts/bench-writes.sh PODIUM_BINARY}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
TOKEN=pdm_bench-admin-token-0123456789abcdef
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DIR=$(mktemp -d)
trap 'kill "$PID" 2>/dev/null || true; rm -rf "$DIR"' EXIT
PODIUM_ADMIN_TOKEN=$TOKEN PODIUM_LOG=warn "$BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$DIR/data" >/dev/null 2>&1 &
PID=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$PORT/livez" >/dev/null && break; sleep 0.3; done
cat > "$DIR/tenants.lua" <<'LUA'
-- Headers given to wrk.format replace those of -H: add to them instead.
wrk.headers["Content-Type"] = "application/json"
-- Names unique across runs on one database: the run's start time, then a counter.
local run = os.time()
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "/v1/tenants", nil, string.format('{"name":"t-%d-%d"}', run, i))
end
LUA
for run in 1 2 3; do
  echo "run $run"
  wrk -t1 -c8 -d10s --latency -H "Authorization: Bearer $TOKEN" -s "$DIR/tenants.lua" \
    "http://127.0.0.1:$PORT" | grep -E "Requests/sec| 50%| 99%|Non-2xx"
done
