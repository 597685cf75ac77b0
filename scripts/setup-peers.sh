#!/usr/bin/env bash
# Installs the real third-party peers that the tests talk to (see tests/peers/).
#
#   scripts/setup-peers.sh
#
# Creates .venv-peers at the repo root with sushy-tools (the Redfish BMC emulator
# that Ironic and Metal3 use) and bcrypt (to hash the emulator's htpasswd file).
# Idempotent: when the stamp file matches, it returns at once and prints nothing.
# Safe to run from several processes at once (flock on .venv-peers.lock).
# Prints nothing on success; on failure it prints what failed and the pip log.
set -euo pipefail

SUSHY_TOOLS_VERSION=2.2.0
BCRYPT_VERSION=5.0.0

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-peers"
STAMP="$VENV/.podium-peers-stamp"
PYTHON="${PYTHON:-python3}"

want_stamp() {
    printf 'sushy-tools==%s bcrypt==%s\n' "$SUSHY_TOOLS_VERSION" "$BCRYPT_VERSION"
}

venv_ok() {
    # The venv's python must still run: a venv whose base interpreter is gone is redone.
    [[ -f "$STAMP" && -x "$VENV/bin/python" ]] \
        && [[ "$(cat "$STAMP")" == "$(want_stamp)" ]] \
        && "$VENV/bin/python" -c '' 2>/dev/null
}

setup_sushy() {
    if venv_ok; then
        return 0
    fi
    local log
    log="$(mktemp)"
    # A venv from another interpreter, or one whose python is gone, is remade.
    if [[ -d "$VENV" ]] && ! "$VENV/bin/python" -c '' 2>/dev/null; then
        rm -rf "$VENV"
    fi
    if [[ -f "$STAMP" ]]; then
        rm -f "$STAMP"
        rm -rf "$VENV"
    fi
    if ! { [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"; } >"$log" 2>&1 \
        || ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input "sushy-tools==$SUSHY_TOOLS_VERSION" "bcrypt==$BCRYPT_VERSION" \
            >>"$log" 2>&1; then
        echo "setup-peers: installing sushy-tools into $VENV failed:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    want_stamp >"$STAMP"
}

# --- cloud-init (to be added) ------------------------------------------------
# setup_cloud_init() { ... }   # unpack Debian's cloud-init (and netplan) without
#                              # installing them; see shared notes test-peers.md.
#                              # Give it its own stamp and call it below.
# ------------------------------------------------------------------------------

main() {
    # Fast path: everything already there, no lock needed.
    # (cloud-init: add its stamp check here too, and call it after setup_sushy.)
    if venv_ok; then
        return 0
    fi
    exec 9>"$ROOT/.venv-peers.lock"
    flock 9
    setup_sushy
}

main "$@"
