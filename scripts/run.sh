#!/usr/bin/env bash
# Runs Podium on the embedded SQLite database with the bundled plugins:
#
#   scripts/run.sh [serve options]     # defaults: --listen 127.0.0.1:8080 --data-dir podium-data
#
# The admin token is written to podium-data/admin.token on first start (or set
# PODIUM_ADMIN_TOKEN before the first start).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
exec cargo run --locked --release -p podium -- serve "$@"
