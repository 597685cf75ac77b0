#!/bin/busybox sh
# The initramfs of both test images (tests/boot/images.sh): finds the medium labelled @LABEL@
# (a CD, or a disk the image was written to), copies its squashfs root to memory, mounts it
# under a tmpfs overlay (@OVERLAY@) and hands over to systemd.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "PODIUM-INITRAMFS @LABEL@ uptime $(cut -d' ' -f1 /proc/uptime)s" >/dev/console
for m in @MODULES@; do modprobe "$m" 2>/dev/null; done
for i in $(seq 1 20); do medium=$(findfs LABEL=@LABEL@ 2>/dev/null) && break; sleep 1; done
mkdir -p /run/medium /run/ram /run/sfs /run/rw
mount -t iso9660 -o ro "$medium" /run/medium
# The root is copied to memory and the medium let go: a disk the image was written to is then
# free for its other partitions to be mounted (the config drive's), and a CD may be ejected.
mount -t tmpfs -o size=75% tmpfs /run/ram
cp /run/medium/live/root.sfs /run/ram/root.sfs
umount /run/medium
mount -t squashfs -o ro,loop /run/ram/root.sfs /run/sfs
mount -t tmpfs -o size=@OVERLAY@ tmpfs /run/rw
mkdir -p /run/rw/upper /run/rw/work
mount -t overlay overlay -o lowerdir=/run/sfs,upperdir=/run/rw/upper,workdir=/run/rw/work /newroot
# The squashfs leaves out /dev, /proc, /sys and /run: their mount points go in the overlay.
mkdir -p /newroot/dev /newroot/proc /newroot/sys /newroot/run
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /sbin/init
