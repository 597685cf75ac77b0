#!/bin/sh
# The test live image's report (tests/boot/images.sh), run once cloud-init is done: what a
# tenant's first boot came up with, on the serial console, between markers the test reads.
exec >/dev/ttyS0 2>&1
echo "PODIUM-LIVE-REPORT-BEGIN uptime $(cut -d' ' -f1 /proc/uptime)s"
echo "hostname: $(hostname)"
echo "--- cloud-init"
cloud-init status --long || true
echo "--- addresses"
ip -4 -o addr show
echo "--- routes"
ip -4 route show
echo "--- resolv.conf"
cat /etc/resolv.conf
echo "--- user data"
cat /run/podium-user-data 2>/dev/null || echo "(the user data left nothing)"
echo "--- interfaces"
cat /etc/network/interfaces.d/* 2>/dev/null
echo "--- block devices"
blkid -c /dev/null
echo "--- cloud-init's data source"
grep -iE 'devices=|failed to mount' /var/log/cloud-init.log | head -n 5
echo "PODIUM-LIVE-REPORT-END uptime $(cut -d' ' -f1 /proc/uptime)s"
