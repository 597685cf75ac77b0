#!/bin/busybox sh
# The test ramdisk's init (tests/boot/images.sh): finds the config-2 drive, applies its
# network_data.json statically (there is no DHCP client here), prints what it read and did on
# the serial console and stays up, as a deploy ramdisk does until the host is power cycled.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec >/dev/console 2>&1
uptime() { cut -d' ' -f1 /proc/uptime; }
stay() {
    echo "PODIUM-RAMDISK-$1 uptime $(uptime)s"
    while :; do sleep 3600; done
}
echo "PODIUM-RAMDISK-UP uptime $(uptime)s"
for m in @MODULES@; do modprobe "$m" 2>/dev/null; done

# busybox findfs skips floppies: their FAT label is read at offset 43 of the boot sector.
dev=""
for i in $(seq 1 20); do
    dev=$(findfs LABEL=config-2 2>/dev/null || findfs LABEL=CONFIG-2 2>/dev/null) && break
    dev=""
    for f in /dev/fd0 /dev/fd1; do
        [ -b "$f" ] || continue
        label=$(dd if="$f" bs=1 skip=43 count=11 2>/dev/null | tr -d ' ')
        if [ "$label" = config-2 ] || [ "$label" = CONFIG-2 ]; then dev=$f; fi
    done
    [ -n "$dev" ] && break
    sleep 1
done
[ -n "$dev" ] || stay NO-CONFIG-DRIVE
mount -t vfat -o ro "$dev" /mnt/cfg 2>/dev/null || mount -o ro "$dev" /mnt/cfg || stay UNREADABLE-CONFIG-DRIVE
echo "PODIUM-RAMDISK-CONFIG-DRIVE $dev"
docs=/mnt/cfg/openstack/latest
for f in meta_data.json network_data.json; do
    echo "PODIUM-RAMDISK-DOCUMENT-BEGIN $f"
    cat "$docs/$f"
    echo
    echo "PODIUM-RAMDISK-DOCUMENT-END $f"
done

# One line per thing to apply: `addr MAC ADDRESS PREFIX`, `route MAC CIDR GATEWAY`, `dns ADDRESS`.
plan='
def prefix: split(".") | map(tonumber | . as $n
    | [range(8)] | map(select((($n / pow(2; 7 - .)) | floor) % 2 == 1)) | length) | add;
(.links // []) as $links
| ((.networks // [])[] | select(.type == "ipv4") | . as $n
   | ($links[] | select(.id == $n.link) | .ethernet_mac_address | ascii_downcase) as $mac
   | "addr \($mac) \($n.ip_address) \($n.netmask | prefix)",
     ((.routes // [])[] | "route \($mac) \(.network)/\(.netmask | prefix) \(.gateway)")),
  ((.services // [])[] | select(.type == "dns") | "dns \(.address)")
'
jq -r "$plan" "$docs/network_data.json" >/tmp/plan || stay UNREADABLE-NETWORK-DATA
umount /mnt/cfg
ifname_of() {
    for d in /sys/class/net/*; do
        [ "$(cat "$d/address")" = "$1" ] && { echo "${d##*/}"; return; }
    done
}
: >/etc/resolv.conf
while read -r kind a b c; do
    case "$kind" in
    addr)
        ifname=$(ifname_of "$a")
        [ -n "$ifname" ] || { echo "PODIUM-RAMDISK-NO-NIC $a"; continue; }
        ip link set "$ifname" up
        ip addr add "$b/$c" dev "$ifname"
        ;;
    route)
        ifname=$(ifname_of "$a")
        if [ "$b" = 0.0.0.0/0 ]; then
            ip route add default via "$c" dev "$ifname"
        else
            ip route add "$b" via "$c" dev "$ifname"
        fi
        ;;
    dns) echo "nameserver $a" >>/etc/resolv.conf ;;
    esac
done </tmp/plan
echo "PODIUM-RAMDISK-NETWORK-BEGIN"
ip -4 -o addr show
ip -4 route show
cat /etc/resolv.conf
echo "PODIUM-RAMDISK-NETWORK-END"
stay READY
