#!/usr/bin/env bash
# Installs what a fresh machine lacks to build Podium: the wasm32-wasip2 Rust target (the
# plugins are components built by the normal build), and, for the tests, the Debian packages
# and Python venvs of the real peers. Idempotent and quiet when everything is there.
#
#   scripts/install-deps.sh          # build prerequisites only
#   scripts/install-deps.sh --tests  # and the test peers (sushy-tools, PostgreSQL)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: cargo is not installed; install Rust with rustup first" >&2
    exit 1
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi
for c in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
        rustup component add "$c"
    fi
done

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        echo "install-deps: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

if [[ "${1:-}" == "--tests" ]]; then
    # mtools and blkid read config drive images back, independently of the writer; unshare,
    # nsenter (util-linux), ip (iproute2) and curl give the TLS tests a network namespace of
    # their own.
    apt_install python3-venv postgresql-client mtools util-linux iproute2 curl
    # --ironic: unmodified OpenStack Ironic drives claimed hosts through Podium's Redfish
    # service in the tests (and is measured beside Podium in the benchmarks).
    "$ROOT/scripts/setup-peers.sh" --ironic
    "$ROOT/scripts/postgres.sh"
fi
