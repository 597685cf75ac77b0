#!/usr/bin/env bash
# Builds the boot tests' two ISOs from Debian's packages (and the deploy agent from PyPI) and
# caches them, each keyed by its inputs (this script, the files of tests/boot/ it packs, the
# kernel package's version, the package lists and the agent's versions); prints where they are:
#
#   tests/boot/images.sh     # ramdisk=~/.cache/podium/vm-images/ramdisk-<key>.iso
#                            # live=~/.cache/podium/vm-images/live-<key>.iso
#                            # disk=~/.cache/podium/vm-images/live-<key>.qcow2
#
# - ramdisk.iso is the deploy ramdisk, built as Metal3's and Ironic's users build theirs: a
#   debootstrapped bookworm with OpenStack's Ironic Python Agent and glean from PyPI, unmodified,
#   in a venv. glean brings the network up from the `config-2` drive's network_data.json (there
#   is no DHCP client at all); the agent reads its settings (`api_url`: where Podium answers it)
#   from the drive's `etc/ironic-python-agent.d/` as IPA does from virtual media
#   (ramdisk-agent-pre.sh, which also prints the network on the serial console).
# - live.iso stands for the tenant's image: a debootstrapped bookworm with cloud-init
#   (ConfigDrive only) in a squashfs; its first boot prints its hostname, addresses, routes, DNS
#   servers and what the user data left to the serial console. The same image as a qcow2
#   (live-<key>.qcow2) is the tenant's disk image: the ISO is a hybrid, bootable from a disk by
#   the GRUB in its MBR, and its initramfs finds its root by label on a CD or a virtio disk.
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
# The deploy ramdisk's packages: what IPA 13 shells out to (lsblk, wipefs, blockdev, findmnt:
# util-linux; sgdisk: gdisk; parted, partprobe; qemu-img; lshw, without which its inventory and
# so its lookup fail; hexdump: bsdextrautils; fuser: psmisc; ip; udevadm), its Python (3.11: IPA
# 13 needs 3.11 or later) and ifupdown, which glean writes for.
RAMDISK_PACKAGES=systemd-sysv,udev,kmod,python3,python3-venv,qemu-utils,util-linux,parted,gdisk,e2fsprogs,dosfstools,iproute2,ifupdown,lshw,bsdextrautils,psmisc
IPA_VERSION=13.0.0
GLEAN_VERSION=1.25.1
# Modules each initramfs loads to reach its squashfs root on the CD (and, in the live image, the
# config drive and the NIC; the ramdisk's udev loads the rest from its root's /lib/modules).
RAMDISK_MODULES="ata_piix ahci sr_mod isofs loop squashfs overlay virtio_pci virtio_blk virtio_net"
LIVE_MODULES="ata_piix ahci sr_mod isofs floppy loop squashfs overlay virtio_pci virtio_blk virtio_net nls_cp437 nls_ascii vfat"

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

KPKG="$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')"
KVER="$(apt-cache policy "$KPKG" | awk '/Candidate:/ {print $2}')"
# An image's key: this script without the other image's section, the files it packs, the kernel.
key() {
    local image=$1
    shift
    (awk -v image="$image" '/^# --- image: / {section = $4} /^# --- end of image/ {section = ""}
        section == "" || section == image' "${BASH_SOURCE[0]}"
     cat "$@"; echo "$KPKG $KVER $SUITE") | sha256sum | cut -c1-16
}
RAMDISK="$CACHE/ramdisk-$(key ramdisk "$HERE/live-init.sh" "$HERE/ramdisk-floppy.sh" \
    "$HERE/ramdisk-agent-pre.sh").iso"
LIVE="$CACHE/live-$(key live "$HERE/live-init.sh" "$HERE/live-report.sh").iso"
# The live image as a disk image too (its ISO is a hybrid: GRUB in its MBR boots it from a disk).
DISK="${LIVE%.iso}.qcow2"
report() { printf 'ramdisk=%s\nlive=%s\ndisk=%s\n' "$RAMDISK" "$LIVE" "$DISK"; }
if [[ -f "$RAMDISK" && -f "$LIVE" && -f "$DISK" ]]; then
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

# Packs a root file system as a squashfs on a BIOS-bootable ISO whose busybox initramfs
# (live-init.sh) mounts it under a tmpfs overlay and hands over to systemd.
make_squashfs_iso() {
    local root=$1 iso=$2 volid=$3 entry=$4 cmdline=$5 modules=$6 overlay=$7 level=$8
    local tree="$W/$volid-iso" initrd="$W/$volid-initrd"
    mkdir -p "$tree/live" "$tree/boot" "$initrd"/{bin,dev,proc,sys,run,newroot}
    log "$entry: squashfs"
    mksquashfs "$root" "$tree/live/root.sfs" -comp zstd -Xcompression-level "$level" \
        -no-progress -quiet -no-xattrs -e proc sys dev run tmp
    cp /bin/busybox "$initrd/bin/busybox"
    add_modules "$initrd" $modules
    sed -e "s/@MODULES@/$modules/" -e "s/@LABEL@/$volid/" -e "s/@OVERLAY@/$overlay/" \
        "$HERE/live-init.sh" >"$initrd/init"
    chmod +x "$initrd/init"
    (cd "$initrd" && find . | cpio -o -H newc --quiet | gzip -6 >"$tree/boot/initrd.gz")
    make_iso "$tree" "$iso" "$volid" "$entry" "$cmdline"
}

# What neither image needs at run time.
slim() {
    local root=$1
    rm -rf "$root"/usr/share/{doc,man,info,lintian,linda} "$root"/var/cache/apt/archives/*.deb \
        "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/var/cache/debconf/*-old
    # No login prompt on the serial console: the log holds only the boot and the reports; no
    # timers that wake apt or scrub file systems.
    for unit in serial-getty@ttyS0.service apt-daily.timer apt-daily-upgrade.timer \
        e2scrub_all.timer e2scrub_reap.service fstrim.timer; do
        ln -sf /dev/null "$root/etc/systemd/system/$unit"
    done
    rm -f "$root/etc/machine-id"
    : >"$root/etc/machine-id"
}

# --- image: ramdisk (Ironic Python Agent and glean, from PyPI) -------------------------------
if [[ ! -f "$RAMDISK" ]]; then
log "ramdisk: debootstrap $SUITE"
R="$W/ramdisk-root"
debootstrap --variant=minbase --include="$RAMDISK_PACKAGES" "$SUITE" "$R" "$MIRROR" \
    >"$W/debootstrap-ramdisk.log" 2>&1 || { tail -30 "$W/debootstrap-ramdisk.log" >&2; exit 1; }
log "ramdisk: ironic-python-agent $IPA_VERSION, glean $GLEAN_VERSION"
# Downloaded by the host's pip (Python 3.11 on x86_64 glibc, as bookworm's), installed offline.
env -u PIP_FIND_LINKS python3 -m pip download -q --only-binary=:all: -d "$R/tmp/wheels" \
    "ironic-python-agent==$IPA_VERSION" "glean==$GLEAN_VERSION"
chroot "$R" /usr/bin/python3 -m venv /opt/ipa
chroot "$R" env -u PIP_CERT -u PIP_FIND_LINKS /opt/ipa/bin/pip install -q --no-index \
    --find-links /tmp/wheels "ironic-python-agent==$IPA_VERSION" "glean==$GLEAN_VERSION"
# glean's own installer: glean-early.service (mounts config-2 on /mnt/config, sets the
# hostname) and, per NIC with a permanent MAC, glean@.service (writes the NIC's ifupdown
# stanza from network_data.json, then ifup). No DHCP fallback: a NIC the drive does not name
# stays down.
chroot "$R" /opt/ipa/bin/glean-install --no-dhcp-fallback >"$W/glean-install.log" 2>&1 \
    || { cat "$W/glean-install.log" >&2; exit 1; }
rm -rf "$R/tmp/wheels"
# A BMC's virtual floppy, made visible to glean (ramdisk-floppy.sh).
install -m 0755 "$HERE/ramdisk-floppy.sh" "$R/usr/local/sbin/podium-floppy"
cat >"$R/etc/systemd/system/podium-floppy.service" <<'UNIT'
[Unit]
Description=Podium ramdisk: the config drive on a virtual floppy, for glean
DefaultDependencies=no
After=systemd-udevd.service
Before=glean-early.service
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/podium-floppy
StandardOutput=journal+console
[Install]
WantedBy=sysinit.target
UNIT
ln -sf /etc/systemd/system/podium-floppy.service \
    "$R/etc/systemd/system/sysinit.target.wants/podium-floppy.service"
install -m 0755 "$HERE/ramdisk-agent-pre.sh" "$R/usr/local/sbin/podium-agent-pre"
cat >"$R/etc/systemd/system/ironic-python-agent.service" <<'UNIT'
[Unit]
Description=Ironic Python Agent
After=network-online.target glean-early.service systemd-udev-trigger.service
Wants=network-online.target
[Service]
ExecStartPre=/usr/local/sbin/podium-agent-pre
TimeoutStartSec=infinity
ExecStart=/opt/ipa/bin/ironic-python-agent --config-dir /etc/ironic-python-agent.d/
Restart=always
RestartSec=5
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/ironic-python-agent.service \
    "$R/etc/systemd/system/multi-user.target.wants/ironic-python-agent.service"
echo podium-ramdisk >"$R/etc/hostname"
# debootstrap copied the build machine's resolver; the ramdisk's comes from its config drive.
: >"$R/etc/resolv.conf"
slim "$R"
SP="$(echo "$R"/opt/ipa/lib/python3*/site-packages)"
# pip and setuptools were needed to install only (glean-install uses pkg_resources).
rm -rf "$SP"/ironic_python_agent/tests "$SP"/glean/tests "$SP"/pip "$SP"/pip-* "$R"/opt/ipa/bin/pip* \
    "$SP"/setuptools "$SP"/setuptools-* "$SP"/pkg_resources "$SP"/_distutils_hack \
    "$SP"/distutils-precedence.pth
find "$R/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
# The kernel's modules, for udev: all but what a deploy ramdisk never needs (graphics, sound,
# radios, sensors, network file systems, netfilter). NIC and storage drivers stay.
mkdir -p "$R/lib/modules"
cp -a "$W/kernel/lib/modules/$KV" "$R/lib/modules/"
M="$R/lib/modules/$KV/kernel"
rm -rf "$M"/sound "$M"/drivers/{gpu,media,staging,infiniband,iio,bluetooth,isdn,comedi,hwmon,mtd,target,video,platform} \
    "$M"/drivers/net/wireless "$M"/drivers/input/touchscreen "$M"/net/{wireless,mac80211,bluetooth,netfilter,sunrpc,ceph} \
    "$M"/fs/{nfs,nfsd,ocfs2,smb,ceph,gfs2,afs,coda,cifs}
chroot "$R" /sbin/depmod "$KV"
# Everything the journal gets goes to the serial console too: a test that fails shows why.
mkdir -p "$R/etc/systemd/journald.conf.d"
printf '[Journal]\nForwardToConsole=yes\nTTYPath=/dev/ttyS0\nMaxLevelConsole=info\n' \
    >"$R/etc/systemd/journald.conf.d/podium-console.conf"
make_squashfs_iso "$R" "$W/ramdisk.iso" PODIUMRAMDISK "podium deploy ramdisk" \
    "printk.time=1 loglevel=4 net.ifnames=1 boot_method=vmedia" "$RAMDISK_MODULES" 50% 15
mv "$W/ramdisk.iso" "$RAMDISK"
fi

# --- end of image ----------------------------------------------------------------------------

# --- image: live ------------------------------------------------------------------------------
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
slim "$ROOTFS"
make_squashfs_iso "$ROOTFS" "$W/live.iso" PODIUMLIVE "podium test live image" \
    "loglevel=4 net.ifnames=1" "$LIVE_MODULES" 256m 6
mv "$W/live.iso" "$LIVE"
fi
if [[ ! -f "$DISK" ]]; then
    qemu-img convert -f raw -O qcow2 "$LIVE" "$W/disk.qcow2"
    mv "$W/disk.qcow2" "$DISK"
fi
# --- end of image ----------------------------------------------------------------------------

log "built in $((SECONDS - t0)) s: $(du -h "$RAMDISK" | cut -f1) ramdisk, $(du -h "$LIVE" | cut -f1) live"
# Older builds go: only the current inputs' images are kept.
find "$CACHE" -mindepth 1 -maxdepth 1 ! -name .lock ! -name '.build.*' \
    ! -path "$RAMDISK" ! -path "$LIVE" ! -path "$DISK" -exec rm -rf {} +
report
