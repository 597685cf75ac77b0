#!/bin/busybox sh
# The test live image's initramfs (tests/boot/images.sh): mounts the squashfs root from the CD
# under a tmpfs overlay and hands over to systemd.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "PODIUM-LIVE-INITRAMFS uptime $(cut -d' ' -f1 /proc/uptime)s" >/dev/console
for m in @MODULES@; do modprobe "$m" 2>/dev/null; done
for i in $(seq 1 20); do medium=$(findfs LABEL=PODIUMLIVE 2>/dev/null) && break; sleep 1; done
mkdir -p /run/medium /run/sfs /run/rw
mount -t iso9660 -o ro "$medium" /run/medium
mount -t squashfs -o ro,loop /run/medium/live/root.sfs /run/sfs
mount -t tmpfs -o size=256m tmpfs /run/rw
mkdir -p /run/rw/upper /run/rw/work
mount -t overlay overlay -o lowerdir=/run/sfs,upperdir=/run/rw/upper,workdir=/run/rw/work /newroot
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /sbin/init
