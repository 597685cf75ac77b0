#!/usr/bin/env bash
# Builds the boot test's two ISOs from Debian's packages and caches them, each keyed by its
# inputs (this script, the files of tests/boot/ it packs, the kernel package's version and the
# live image's package list); prints where they are:
#
#   tests/boot/images.sh     # ramdisk=~/.cache/podium/vm-images/ramdisk-<key>.iso
#                            # live=~/.cache/podium/vm-images/live-<key>.iso
#
# - ramdisk.iso stands for the deploy ramdisk (Ironic's IPA, Metal3's preprovisioning image): a
#   busybox initramfs whose init finds the `config-2` drive, applies its network_data.json
#   statically (it has no DHCP client at all) and prints its addresses, routes and the documents
#   it read to the serial console, then stays up as a ramdisk does until it is power cycled.
# - live.iso stands for the tenant's image: a debootstrapped bookworm with cloud-init
#   (ConfigDrive only) in a squashfs; its first boot prints its hostname, addresses, routes, DNS
#   servers and what the user data left to the serial console.
#
# Both boot with BIOS GRUB, the kernel on the serial console. The cache folder is
# $PODIUM_VM_CACHE, else $XDG_CACHE_HOME/podium/vm-images, else ~/.cache/podium/vm-images; a
# build goes to a scratch folder first, so an interrupted one leaves nothing half made. Safe to
# run from several processes at once (flock).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${PODIUM_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podium/vm-images}"
MIRROR="${PODIUM_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
# The packages of the live image, beside debootstrap's minbase. python3-cffi-backend is one
# debootstrap cannot resolve itself; net-tools gives a clean cloud-init run (its ENI renderer
# uses `route`); resolvconf makes ifupdown apply the DNS servers cloud-init writes.
LIVE_PACKAGES=systemd-sysv,udev,cloud-init,ifupdown,iproute2,python3-cffi-backend,net-tools,resolvconf
# Modules each initramfs loads: the disks, the CD and floppy and their file systems, the NIC.
RAMDISK_MODULES="ata_piix ahci sr_mod isofs floppy vfat nls_cp437 nls_ascii nls_utf8 nls_iso8859_1 virtio_pci virtio_net"
LIVE_MODULES="ata_piix ahci sr_mod isofs floppy loop squashfs overlay virtio_pci virtio_net nls_cp437 nls_ascii vfat"

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

KPKG="$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')"
KVER="$(apt-cache policy "$KPKG" | awk '/Candidate:/ {print $2}')"
key() { (cat "${BASH_SOURCE[0]}" "$@"; echo "$KPKG $KVER $SUITE $LIVE_PACKAGES") | sha256sum | cut -c1-16; }
RAMDISK="$CACHE/ramdisk-$(key "$HERE/ramdisk-init.sh").iso"
LIVE="$CACHE/live-$(key "$HERE/live-init.sh" "$HERE/live-report.sh").iso"
report() { printf 'ramdisk=%s\nlive=%s\n' "$RAMDISK" "$LIVE"; }
if [[ -f "$RAMDISK" && -f "$LIVE" ]]; then
    report
    exit 0
fi

log() { echo "images: $*" >&2; }
W="$(mktemp -d "$CACHE/.build.XXXXXX")"
trap 'rm -rf "$W"' EXIT
t0=$SECONDS

# --- the kernel: Debian's, unpacked ----------------------------------------------------------
log "kernel $KPKG $KVER"
(cd "$W" && apt-get download -qq -o APT::Sandbox::User=root "$KPKG=$KVER" >/dev/null)
dpkg-deb -x "$W"/"$KPKG"_*.deb "$W/kernel"
KV="$(ls "$W/kernel/lib/modules/")"
busybox depmod -b "$W/kernel" "$KV"

# Copies the modules named (and what they depend on) into an initramfs tree.
add_modules() {
    local root=$1 dep="$W/kernel/lib/modules/$KV/modules.dep" m line f
    shift
    : >"$W/mods.txt"
    for m in "$@"; do
        line="$(grep -E "(^|/)${m//_/[_-]}\.ko(\.[a-z]+)?:" "$dep" || true)"
        [[ -n "$line" ]] || { log "no module $m in $KV"; exit 1; }
        echo "$line" | tr ' :' '\n\n' | grep . >>"$W/mods.txt"
    done
    sort -u "$W/mods.txt" | while read -r f; do
        mkdir -p "$root/lib/modules/$KV/$(dirname "$f")"
        cp "$W/kernel/lib/modules/$KV/$f" "$root/lib/modules/$KV/$f"
    done
    busybox depmod -b "$root" "$KV"
}

# Copies a dynamically linked program and the libraries it loads into an initramfs tree.
add_program() {
    local root=$1 prog=$2 lib
    mkdir -p "$root/bin"
    cp "$prog" "$root/bin/"
    for lib in $(ldd "$prog" | grep -o '/[^ ]*'); do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# Packs an initramfs tree and the kernel into a BIOS-bootable ISO with GRUB on the serial
# console.
make_iso() {
    local tree=$1 iso=$2 volid=$3 entry=$4 cmdline=$5
    mkdir -p "$tree/boot/grub"
    cp "$W/kernel/boot/vmlinuz-$KV" "$tree/boot/vmlinuz"
    cat >"$tree/boot/grub/grub.cfg" <<GRUB
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
set timeout=1
set default=0
menuentry "$entry" {
  linux /boot/vmlinuz console=tty0 console=ttyS0,115200n8 panic=10 $cmdline
  initrd /boot/initrd.gz
}
GRUB
    grub-mkrescue -o "$iso" "$tree" -- -volid "$volid" >"$W/mkrescue.log" 2>&1 \
        || { cat "$W/mkrescue.log" >&2; exit 1; }
}

# --- ramdisk.iso -----------------------------------------------------------------------------
if [[ ! -f "$RAMDISK" ]]; then
log "ramdisk"
R="$W/ramdisk"
mkdir -p "$R"/{bin,dev,etc,proc,sys,mnt/cfg,tmp}
cp /bin/busybox "$R/bin/busybox"
add_program "$R" "$(command -v jq)"
add_modules "$R" $RAMDISK_MODULES
cp "$HERE/ramdisk-init.sh" "$R/init"
sed -i "s/@MODULES@/$RAMDISK_MODULES/" "$R/init"
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -6 >"$W/ramdisk-initrd.gz")
mkdir -p "$W/ramdisk-iso/boot"
mv "$W/ramdisk-initrd.gz" "$W/ramdisk-iso/boot/initrd.gz"
make_iso "$W/ramdisk-iso" "$W/ramdisk.iso" PODIUMRAMDISK "podium test ramdisk" "printk.time=1"
mv "$W/ramdisk.iso" "$RAMDISK"
fi

# --- live.iso --------------------------------------------------------------------------------
if [[ ! -f "$LIVE" ]]; then
log "live image: debootstrap $SUITE"
ROOTFS="$W/rootfs"
debootstrap --variant=minbase --include="$LIVE_PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" \
    >"$W/debootstrap.log" 2>&1 || { tail -30 "$W/debootstrap.log" >&2; exit 1; }
echo podium-live >"$ROOTFS/etc/hostname"
cat >"$ROOTFS/etc/cloud/cloud.cfg.d/90-podium.cfg" <<'CFG'
datasource_list: [ ConfigDrive, None ]
# The default (en_US.UTF-8) is not generated in this image; C.UTF-8 is built in.
locale: C.UTF-8
CFG
install -m 0755 "$HERE/live-report.sh" "$ROOTFS/usr/local/sbin/podium-report"
cat >"$ROOTFS/etc/systemd/system/podium-report.service" <<'UNIT'
[Unit]
Description=Podium boot test: report what cloud-init did on the serial console
# Without default dependencies: multi-user.target would otherwise be ordered after this unit,
# which comes after cloud-final, which comes after multi-user.target.
DefaultDependencies=no
After=cloud-final.service cloud-init.target networking.service
Wants=cloud-final.service
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/podium-report
StandardOutput=tty
TTYPath=/dev/ttyS0
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/podium-report.service \
    "$ROOTFS/etc/systemd/system/multi-user.target.wants/podium-report.service"
# No login prompt on the serial console: the log holds only the boot and the report.
ln -sf /dev/null "$ROOTFS/etc/systemd/system/serial-getty@ttyS0.service"
rm -f "$ROOTFS/etc/machine-id"
: >"$ROOTFS/etc/machine-id"
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
mkdir -p "$W/live-iso/live" "$W/live-initrd"/{bin,dev,proc,sys,run,newroot}
log "live image: squashfs"
mksquashfs "$ROOTFS" "$W/live-iso/live/root.sfs" -comp zstd -Xcompression-level 6 \
    -no-progress -quiet -no-xattrs -e proc sys dev run tmp
cp /bin/busybox "$W/live-initrd/bin/busybox"
add_modules "$W/live-initrd" $LIVE_MODULES
cp "$HERE/live-init.sh" "$W/live-initrd/init"
sed -i "s/@MODULES@/$LIVE_MODULES/" "$W/live-initrd/init"
chmod +x "$W/live-initrd/init"
mkdir -p "$W/live-iso/boot"
(cd "$W/live-initrd" && find . | cpio -o -H newc --quiet | gzip -6 >"$W/live-iso/boot/initrd.gz")
make_iso "$W/live-iso" "$W/live.iso" PODIUMLIVE "podium test live image" "loglevel=4 net.ifnames=1"

mv "$W/live.iso" "$LIVE"
fi

log "built in $((SECONDS - t0)) s: $(du -h "$RAMDISK" | cut -f1) ramdisk, $(du -h "$LIVE" | cut -f1) live"
# Older builds go: only the current inputs' images are kept.
find "$CACHE" -mindepth 1 -maxdepth 1 ! -name .lock ! -name '.build.*' \
    ! -path "$RAMDISK" ! -path "$LIVE" -exec rm -rf {} +
report
