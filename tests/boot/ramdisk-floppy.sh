#!/bin/sh
# The deploy ramdisk's step before glean (tests/boot/images.sh): a BMC's virtual floppy holding
# the config-2 drive made visible. The kernel loads no floppy driver by itself, and udev does
# not probe floppies, so glean, which asks blkid for LABEL=config-2, would not find the drive;
# and blkid may see a floppy's label only in its boot sector (LABEL_FATBOOT). So: load the
# driver, and mount the drive where glean reads it (/mnt/config) when it is the config drive.
modprobe floppy 2>/dev/null || exit 0
udevadm settle -t 10 || true
[ -b /dev/fd0 ] || exit 0
if blkid -p -o export /dev/fd0 | grep -qiE '^LABEL(_FATBOOT)?=config-2$'; then
    mkdir -p /mnt/config
    mount -t vfat -o ro,umask=0077 /dev/fd0 /mnt/config && echo "podium: config-2 drive on /dev/fd0"
fi
exit 0
