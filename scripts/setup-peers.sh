#!/usr/bin/env bash
# Installs the real third-party peers that the tests talk to (see tests/peers/).
#
#   scripts/setup-peers.sh
#
# Creates .venv-peers at the repo root with sushy-tools (the Redfish BMC emulator
# that Ironic and Metal3 use), bcrypt (to hash the emulator's htpasswd file) and two Redfish
# clients for Podium's own Redfish service (DMTF's `redfish`, its redfish-utilities scripts and
# redfish-protocol-validator, and OpenStack's `sushy`), cloud-init in
# .peers/cloud-init, and the OpenAPI tools in .peers/api-tools; with --ironic, OpenStack Ironic
# in .peers/ironic too (standalone Ironic: it drives claimed hosts through Podium's Redfish
# service in the tests, and is measured beside Podium by the latency benchmark).
# Idempotent: when the stamp file matches, it returns at once and prints nothing.
# Safe to run from several processes at once (flock on .venv-peers.lock).
# Prints nothing on success; on failure it prints what failed and the pip log.
set -euo pipefail

SUSHY_TOOLS_VERSION=2.2.0
BCRYPT_VERSION=5.0.0
# Redfish clients nobody here wrote, pointed at Podium's own Redfish service.
DMTF_REDFISH_VERSION=3.4.2
DMTF_UTILITIES_VERSION=3.5.2
DMTF_PROTOCOL_VALIDATOR_VERSION=1.3.2
SUSHY_VERSION=5.14.0
# sushy-tools' libvirt driver (the boot test) needs libvirt's Python binding, built against the
# machine's libvirt (install-deps.sh installs libvirt-dev first); none where libvirt is absent.
LIBVIRT_PYTHON_VERSION="$(pkg-config --modversion libvirt 2>/dev/null || true)"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-peers"
STAMP="$VENV/.podium-peers-stamp"
PYTHON="${PYTHON:-python3}"

want_stamp() {
    printf 'sushy-tools==%s bcrypt==%s redfish==%s redfish-utilities==%s \
redfish-protocol-validator==%s sushy==%s libvirt-python==%s\n' "$SUSHY_TOOLS_VERSION" \
        "$BCRYPT_VERSION" "$DMTF_REDFISH_VERSION" "$DMTF_UTILITIES_VERSION" \
        "$DMTF_PROTOCOL_VALIDATOR_VERSION" "$SUSHY_VERSION" "$LIBVIRT_PYTHON_VERSION"
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
            "redfish==$DMTF_REDFISH_VERSION" "redfish-utilities==$DMTF_UTILITIES_VERSION" \
            "redfish-protocol-validator==$DMTF_PROTOCOL_VALIDATOR_VERSION" \
            "sushy==$SUSHY_VERSION" \
            ${LIBVIRT_PYTHON_VERSION:+"libvirt-python==$LIBVIRT_PYTHON_VERSION"} \
            >>"$log" 2>&1; then
        echo "setup-peers: installing sushy-tools into $VENV failed:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    want_stamp >"$STAMP"
}

# --- cloud-init: the reader of network_data.json ------------------------------
# Debian's cloud-init package, unpacked (not installed: that would add boot-time units) into
# .peers/cloud-init/root, with a venv of its Python dependencies in .peers/cloud-init/venv.
# tests/src/cloud_init.rs runs its `devel net-convert` on what Podium renders.
CI_DIR="$ROOT/.peers/cloud-init"
CI_STAMP="$CI_DIR/.podium-stamp"
CI_PIP="PyYAML==6.0.2 Jinja2==3.1.6 jsonschema==4.23.0 configobj==5.0.9 requests==2.32.3 oauthlib==3.2.2 jsonpatch==1.33 netifaces==0.11.0"

cloud_init_stamp() {
    printf 'cloud-init netplan.io libnetplan0 debs + %s\n' "$CI_PIP"
}

cloud_init_ok() {
    [[ -f "$CI_STAMP" && -x "$CI_DIR/venv/bin/python" ]] \
        && [[ "$(cat "$CI_STAMP")" == "$(cloud_init_stamp)" ]] \
        && [[ -d "$CI_DIR/root/usr/lib/python3/dist-packages/cloudinit" ]] \
        && [[ -x "$CI_DIR/root/usr/libexec/netplan/generate" ]] \
        && "$CI_DIR/venv/bin/python" -c '' 2>/dev/null
}

extract_debs() {
    local deb
    for deb in "$CI_DIR"/deb/*.deb; do
        dpkg-deb -x "$deb" "$CI_DIR/root" || return 1
    done
}

setup_cloud_init() {
    if cloud_init_ok; then
        return 0
    fi
    local log
    log="$(mktemp)"
    rm -rf "$CI_DIR"
    mkdir -p "$CI_DIR/deb"
    # netplan's generator (netplan.io, libnetplan0) is the stricter second reader of what
    # cloud-init writes; its libraries (glib, libyaml, libuuid) are on the base system.
    local debs="cloud-init netplan.io libnetplan0"
    if ! (cd "$CI_DIR/deb" && { apt-get download $debs >>"$log" 2>&1 \
            || { apt-get update -qq >>"$log" 2>&1 && apt-get download $debs >>"$log" 2>&1; }; }) \
        || ! extract_debs >>"$log" 2>&1 \
        || ! "$PYTHON" -m venv "$CI_DIR/venv" >>"$log" 2>&1 \
        || ! "$CI_DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input $CI_PIP >>"$log" 2>&1; then
        echo "setup-peers: setting up cloud-init in $CI_DIR failed:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    cloud_init_stamp >"$CI_STAMP"
}

# --- clients of the JSON API nobody here wrote ---------------------------------
# openapi-spec-validator checks /openapi.json, Schemathesis fuzzes the API from it, and
# openapi-python-client generates a client from it (tests/all/contract.rs); prometheus-client's
# OpenMetrics parser reads /metrics (tests/all/metrics.rs).
API_DIR="$ROOT/.peers/api-tools"
API_STAMP="$API_DIR/.podium-stamp"
API_PIP="openapi-spec-validator==0.9.0 schemathesis==4.32.5 openapi-python-client==0.29.1 prometheus-client==0.26.0"

api_tools_ok() {
    [[ -f "$API_STAMP" && -x "$API_DIR/bin/python" ]] \
        && [[ "$(cat "$API_STAMP")" == "$API_PIP" ]] \
        && "$API_DIR/bin/python" -c '' 2>/dev/null
}

setup_api_tools() {
    if api_tools_ok; then
        return 0
    fi
    local log
    log="$(mktemp)"
    rm -rf "$API_DIR"
    if ! "$PYTHON" -m venv "$API_DIR" >"$log" 2>&1 \
        || ! "$API_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input $API_PIP >>"$log" 2>&1; then
        echo "setup-peers: installing the API tools into $API_DIR failed:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    echo "$API_PIP" >"$API_STAMP"
}

# --- OpenStack Ironic, standalone (only with --ironic) ---------------------------
IRONIC_DIR="$ROOT/.peers/ironic"
IRONIC_STAMP="$IRONIC_DIR/.podium-stamp"
IRONIC_PIP="ironic==39.0.0"

ironic_ok() {
    [[ -f "$IRONIC_STAMP" && -x "$IRONIC_DIR/bin/python" ]] \
        && [[ "$(cat "$IRONIC_STAMP")" == "$IRONIC_PIP" ]] \
        && "$IRONIC_DIR/bin/python" -c '' 2>/dev/null
}

setup_ironic() {
    if ironic_ok; then
        return 0
    fi
    local log
    log="$(mktemp)"
    rm -rf "$IRONIC_DIR"
    if ! "$PYTHON" -m venv "$IRONIC_DIR" >"$log" 2>&1 \
        || ! "$IRONIC_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input $IRONIC_PIP >>"$log" 2>&1; then
        echo "setup-peers: installing Ironic into $IRONIC_DIR failed:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    echo "$IRONIC_PIP" >"$IRONIC_STAMP"
}

# --- the web console's checkers: TypeScript, openapi-typescript, Playwright, axe-core -------
# From tests/console/package-lock.json into tests/console/node_modules, with the machine's npm;
# Playwright drives Debian's chromium (install-deps.sh), so no browser is downloaded.
CONSOLE_DIR="$ROOT/tests/console"
CONSOLE_STAMP="$CONSOLE_DIR/node_modules/.podium-stamp"

console_tools_ok() {
    [[ -f "$CONSOLE_STAMP" ]] \
        && [[ "$(cat "$CONSOLE_STAMP")" == "$(sha256sum <"$CONSOLE_DIR/package-lock.json")" ]]
}

setup_console_tools() {
    if console_tools_ok; then
        return 0
    fi
    local log
    log="$(mktemp)"
    if ! (cd "$CONSOLE_DIR" && npm ci --no-audit --no-fund --ignore-scripts) >"$log" 2>&1; then
        echo "setup-peers: npm ci in $CONSOLE_DIR failed:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    sha256sum <"$CONSOLE_DIR/package-lock.json" >"$CONSOLE_STAMP"
}

main() {
    local ironic=false
    [[ "${1:-}" == "--ironic" ]] && ironic=true
    # Fast path: everything already there, no lock needed.
    if venv_ok && cloud_init_ok && api_tools_ok && console_tools_ok \
        && { ! $ironic || ironic_ok; }; then
        return 0
    fi
    mkdir -p "$ROOT/.peers"
    exec 9>"$ROOT/.venv-peers.lock"
    flock 9
    setup_sushy
    setup_cloud_init
    setup_api_tools
    setup_console_tools
    if $ironic; then
        setup_ironic
    fi
}

main "$@"
