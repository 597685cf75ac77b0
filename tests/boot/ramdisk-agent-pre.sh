#!/bin/sh
# The deploy ramdisk's step before the Ironic Python Agent starts (tests/boot/images.sh):
# - waits for udev to settle and for glean to give a NIC its static address (IPA's lookups back
#   off exponentially, up to a minute, so starting it earlier costs time);
# - copies the agent's settings from the config drive's etc/ironic-python-agent.d/, as IPA does
#   itself from a virtual CD or USB stick (boot_method=vmedia) but not from a floppy;
# - prints the network it came up with on the serial console, for the boot tests.
console=/dev/ttyS0
udevadm settle -t 60 || true
for i in $(seq 1 120); do
    ip -4 -o addr show scope global | grep -q inet && break
    sleep 1
done
drive=/mnt/config
if [ ! -f "$drive/openstack/latest/meta_data.json" ]; then
    dev=$(blkid -t LABEL=config-2 -o device | head -n1)
    drive=/run/podium-config-drive
    mkdir -p "$drive"
    [ -n "$dev" ] && mount -o ro "$dev" "$drive"
fi
mkdir -p /etc/ironic-python-agent.d
if ls "$drive"/etc/ironic-python-agent.d/*.conf >/dev/null 2>&1; then
    cp "$drive"/etc/ironic-python-agent.d/*.conf /etc/ironic-python-agent.d/
else
    echo "PODIUM-RAMDISK-NO-AGENT-CONFIG" >"$console"
fi
{
    echo "PODIUM-RAMDISK-NETWORK-BEGIN uptime $(cut -d' ' -f1 /proc/uptime)s"
    ip -4 -o addr show
    ip -4 route show
    cat /etc/resolv.conf
    echo "PODIUM-RAMDISK-NETWORK-END"
    echo "PODIUM-RAMDISK-READY"
} >"$console" 2>&1
exit 0
