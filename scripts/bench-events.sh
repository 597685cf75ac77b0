#!/usr/bin/env bash
# What events cost and how fast they arrive, against a `podium serve` binary on fresh SQLite
# databases:
#   1. writes that record an event: `POST /v1/claims` (a pending claim each: one row, one event),
#      `wrk` with one thread and 8 keep-alive connections for 10 s, on a database with the event
#      triggers and on one whose triggers were dropped (the same binary), three runs each, in turn;
#   2. delivery: 200 claims created one after another while a watcher follows `GET /v1/events`,
#      the time from each creation's answer to its event (p50, p99, max);
#   3. idle watchers: the server's CPU over 10 s with 200 streams open and nothing changing,
#      and what those 200 streams hold of its memory (resident set before and after).
#
#   cargo build --release -p podium-tests --bin podium-under-test
#   scripts/bench-events.sh target/release/podium-under-test
set -euo pipefail
BIN=${1:?usage: scripts/bench-events.sh PODIUM_BINARY}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
TOKEN=pdm_bench-admin-token-0123456789abcdef
DIR=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start NAME: serves DIR/NAME on a free port; sets PORT and PID.
start() {
  PORT=$(free_port)
  PODIUM_ADMIN_TOKEN=$TOKEN PODIUM_LOG=warn "$BIN" serve --listen "127.0.0.1:$PORT" \
    --data-dir "$DIR/$1" --event-streams-per-token 1000 >/dev/null 2>&1 &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$PORT/livez" >/dev/null && break; sleep 0.3; done
}
api() { curl -sf -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
  "http://127.0.0.1:$PORT$1" ${3:+-d "$3"}; }
# setup: a pod manager nobody answers, a tenant granted it; prints the tenant's token.
setup() {
  local pm tenant
  pm=$(api /v1/pod_managers "$TOKEN" '{"name":"site","url":"http://127.0.0.1:9"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
  tenant=$(api /v1/tenants "$TOKEN" '{"name":"bench"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  api /v1/grants "$TOKEN" "{\"tenant\":\"$tenant\",\"pod_manager\":\"$pm\"}" >/dev/null
  api "/v1/tenants/$tenant/tokens" "$TOKEN" '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'
  echo "$pm"
}

echo "== writes: POST /v1/claims"
declare -A TOKENS PMS
for db in triggers dropped; do
  start "$db"
  { read -r TOKENS[$db]; read -r PMS[$db]; } < <(setup)
  cat > "$DIR/claims-$db.lua" <<LUA
wrk.headers["Content-Type"] = "application/json"
local body = '{"pod_manager":"${PMS[$db]}","image":{"url":"http://127.0.0.1:9/os.iso"},"online":false}'
request = function() return wrk.format("POST", "/v1/claims", nil, body) end
LUA
  kill "$PID"; wait "$PID" 2>/dev/null || true
done
python3 - "$DIR/dropped/podium.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
    db.execute(f"DROP TRIGGER {name}")
db.commit()
PY
for run in 1 2 3; do
  for db in triggers dropped; do
    start "$db"
    printf '%-9s run %s: ' "$db" "$run"
    wrk -t1 -c8 -d10s --latency -H "Authorization: Bearer ${TOKENS[$db]}" -s "$DIR/claims-$db.lua" \
      "http://127.0.0.1:$PORT" | awk '/Requests\/sec/ {r=$2} / 50%/ {p50=$2} / 99%/ {p99=$2} /Non-2xx/ {bad=$0} END {printf "%s req/s, p50 %s, p99 %s %s\n", r, p50, p99, bad}'
    kill "$PID"; wait "$PID" 2>/dev/null || true
  done
done

echo "== delivery and idle watchers"
start triggers
python3 - "$PORT" "$TOKEN" "${TOKENS[triggers]}" "${PMS[triggers]}" "$PID" <<'PY'
import http.client, json, os, socket, sys, threading, time
port, admin, tenant, pm, pid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

def stream(token):
    c = http.client.HTTPConnection("127.0.0.1", int(port))
    c.request("GET", "/v1/events?kind=claim", headers={"Authorization": f"Bearer {token}"})
    r = c.getresponse()
    assert r.status == 200, r.status
    return c, r

arrived = {}
def follow(r):
    data = None
    for line in r:
        line = line.decode().rstrip("\n")
        if line.startswith("data:"):
            data = json.loads(line[5:])
        elif line == "" and data is not None:
            if data.get("claim"):
                arrived[data["claim"]["id"]] = time.monotonic()
            data = None

conn, r = stream(admin)
threading.Thread(target=follow, args=(r,), daemon=True).start()
body = json.dumps({"pod_manager": pm, "image": {"url": "http://127.0.0.1:9/os.iso"}, "online": False})
lat, rtt = [], []
api = http.client.HTTPConnection("127.0.0.1", int(port))
for _ in range(200):
    sent = time.monotonic()
    api.request("POST", "/v1/claims", body, {"Authorization": f"Bearer {tenant}", "Content-Type": "application/json"})
    resp = api.getresponse()
    claim = json.loads(resp.read())
    rtt.append((time.monotonic() - sent) * 1000)
    while claim["id"] not in arrived:
        time.sleep(0.0002)
    lat.append((arrived[claim["id"]] - sent) * 1000)
def pct(xs):
    xs = sorted(xs)
    return f"p50 {xs[len(xs)//2]:.1f} ms, p99 {xs[int(len(xs)*0.99)-1]:.1f} ms, max {xs[-1]:.1f} ms"
print(f"request sent to its event at the watcher: {pct(lat)}; to its answer: {pct(rtt)} (200 claims)")

def cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
def rss():
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
time.sleep(1)
rss_before = rss()
held = [stream(admin) for _ in range(200)]
time.sleep(1)
rss_after = rss()
print(f"200 open streams: resident set {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after "
      f"({(rss_after - rss_before) / 200:.1f} KiB a stream)")
before, t0 = cpu(), time.monotonic()
time.sleep(10)
used, wall = cpu() - before, time.monotonic() - t0
print(f"200 idle watchers: server CPU {used:.2f} s over {wall:.1f} s ({100*used/wall:.1f} % of a core)")
PY
