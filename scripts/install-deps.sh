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

# The boot test (tests/boot/): QEMU and libvirt behind sushy-tools' libvirt driver, and what
# builds its two ISOs from Debian's packages (tests/boot/images.sh). The machine's qemu-utils
# comes from bookworm-backports, so QEMU and libvirt must come from there too: a plain install
# of qemu-system-x86 conflicts with it.
vm_packages() {
    local list=/etc/apt/sources.list.d/podium-backports.sources
    local pin=/etc/apt/preferences.d/podium-backports
    if [[ ! -f "$list" ]] && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
        printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$list"
    fi
    if [[ ! -f "$pin" ]]; then
        printf 'Package: qemu-* libvirt* seabios libnss-libvirt\nPin: release n=bookworm-backports\nPin-Priority: 990\n' >"$pin"
    fi
    apt_install qemu-system-x86 libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients \
        libvirt-dev pkg-config xorriso grub-pc-bin mtools busybox-static cpio jq \
        debootstrap squashfs-tools tcpdump
}

if [[ "${1:-}" == "--tests" ]]; then
    # mtools and blkid read config drive images back, independently of the writer; unshare,
    # nsenter (util-linux), ip (iproute2) and curl give the TLS tests a network namespace of
    # their own.
    apt_install python3-venv postgresql-client mtools util-linux iproute2 curl
    # The web console's browser tests: Debian's Chromium, driven by Playwright (setup-peers.sh).
    apt_install chromium
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    vm_packages
    # --ironic: unmodified OpenStack Ironic drives claimed hosts through Podium's Redfish
    # service in the tests (and is measured beside Podium in the benchmarks).
    "$ROOT/scripts/setup-peers.sh" --ironic
    "$ROOT/scripts/postgres.sh"
fi
