//! One real virtual machine for the boot test (`tests/boot/`): a QEMU domain under libvirt that
//! sushy-tools' libvirt driver fronts as a Redfish system, as Ironic's and Metal3's CI do.
//!
//! - Software emulation (`type='qemu'`): `/dev/kvm` does not work on these machines.
//! - Its NIC is on an isolated libvirt network of its own: no forwarding, no DHCP server, and
//!   on the host side one address, [`HOST_ADDRESS`], where the guest's deploy agent reaches
//!   Podium (nothing is routed beyond the bridge). What the guest did is read from its serial
//!   console, written to a file; `tcpdump` on the bridge records any DHCP packet.
//! - It has an empty CD and an empty floppy drive for Redfish virtual media, and boots from
//!   the CD once the driver sets the boot override; and two blank disks of different sizes and
//!   serials ([`DISKS`]), sparse files in the lab's folder.
//! - Dropping the [`Lab`] cleans up whatever happened: the domain destroyed and undefined, the
//!   storage pool and network removed, `tcpdump` stopped and, where this process started them,
//!   the libvirt daemons stopped by pid and the firewall tables libvirt made deleted. A test
//!   process killed before it could drop it leaves no process behind (`tcpdump` and the daemons
//!   get SIGKILL when the thread that called [`Lab::start`] ends: call it from the test's own
//!   thread) and its domain, pool and network are removed by the next [`Lab::start`].
//!
//! Needs root and the packages `scripts/install-deps.sh --tests` installs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// libvirt's URI for the system daemon.
pub const LIBVIRT_URI: &str = "qemu:///system";

/// The host's address on the lab's bridge (a /24 of TEST-NET-2): where the guest reaches servers
/// of the test (Podium's agent API and downloads). One lab at a time per machine uses it.
pub const HOST_ADDRESS: &str = "198.51.100.1";

/// The guest's disks: serial (as `lsblk` shows it) and size in GiB. Both are at least the 4 GiB
/// the deploy agent looks for before it looks up.
pub const DISKS: [(&str, u64); 2] = [("PODIUM-SMALL", 5), ("PODIUM-LARGE", 7)];

/// The virtual machine and everything around it.
#[derive(Debug)]
pub struct Lab {
    /// The name of the domain, its network and its storage pool.
    pub name: String,
    /// The domain's UUID: the Redfish system's id.
    pub uuid: String,
    /// Its NIC's MAC address.
    pub mac: String,
    /// The isolated network's bridge.
    pub bridge: String,
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
    capture: Option<Child>,
    defined: Vec<(&'static str, String)>,
}

impl Lab {
    /// Starts libvirt where it is not running, then defines the network, the storage pool
    /// sushy-tools uploads media into and the domain (shut off), and starts recording DHCP on
    /// the bridge.
    pub fn start() -> Result<Lab> {
        let id = std::process::id();
        let dir = tempfile::Builder::new().prefix("podium-vm-").tempdir()?;
        // QEMU runs as libvirt's user: it must reach the media and write the serial log.
        set_mode(dir.path(), 0o755)?;
        let [a, b, c] = fastrand::u32(..).to_be_bytes()[1..] else {
            unreachable!()
        };
        let mut lab = Lab {
            name: format!("podium-boot-{id}"),
            uuid: format!("0b0e0000-0000-4000-8000-{:012x}", fastrand::u64(..1 << 48)),
            mac: format!("52:54:00:{a:02x}:{b:02x}:{c:02x}"),
            bridge: format!("pdmboot{}", id % 100_000),
            dir,
            daemons: Vec::new(),
            capture: None,
            defined: Vec::new(),
        };
        lab.daemons = start_daemons()?;
        reap_orphans();
        std::fs::create_dir(lab.pool_dir())?;
        set_mode(&lab.pool_dir(), 0o755)?;
        for (serial, gib) in DISKS {
            std::fs::File::create(lab.disk_path(serial))?.set_len(gib << 30)?;
            set_mode(&lab.disk_path(serial), 0o666)?;
        }
        lab.define("net", &lab.network_xml())?;
        lab.define("pool", &lab.pool_xml())?;
        lab.define("domain", &lab.domain_xml())?;
        let capture = Command::new("setpriv")
            .args([
                "--pdeathsig",
                "KILL",
                "tcpdump",
                "-i",
                &lab.bridge,
                "-n",
                "-U",
                "-Z",
                "root",
                "-w",
            ])
            .arg(lab.dir.path().join("dhcp.pcap"))
            .args(["udp port 67 or udp port 68"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(
                lab.dir.path().join("tcpdump.log"),
            )?))
            .spawn()
            .context("starting tcpdump")?;
        lab.capture = Some(capture);
        wait_for(Duration::from_secs(10), "tcpdump listening", || {
            std::fs::read_to_string(lab.dir.path().join("tcpdump.log"))
                .is_ok_and(|log| log.contains("listening on"))
        })?;
        Ok(lab)
    }

    /// The storage pool's name (sushy-tools' `SUSHY_EMULATOR_STORAGE_POOL`).
    pub fn storage_pool(&self) -> &str {
        &self.name
    }

    /// What the guest wrote to its serial console so far.
    pub fn serial(&self) -> String {
        std::fs::read(self.serial_path())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    pub fn serial_path(&self) -> PathBuf {
        self.dir.path().join("serial.log")
    }

    /// libvirt's state of the domain: `running`, `shut off`, ...
    pub fn state(&self) -> Result<String> {
        Ok(virsh(&["domstate", &self.name])?.trim().to_owned())
    }

    /// The machine loses its power behind its BMC's back: libvirt destroys the running domain.
    pub fn pull_the_plug(&self) -> Result<()> {
        virsh(&["destroy", &self.name]).map(drop)
    }

    /// The domain's XML as libvirt holds it now (the running domain's where it runs).
    pub fn domain_xml_now(&self) -> Result<String> {
        virsh(&["dumpxml", &self.name])
    }

    /// The DHCP packets seen on the bridge so far, one line each as `tcpdump -r` prints them.
    pub fn dhcp_packets(&self) -> Result<Vec<String>> {
        let out = Command::new("tcpdump")
            .args(["-n", "-r"])
            .arg(self.dir.path().join("dhcp.pcap"))
            .output()
            .context("tcpdump -r")?;
        if !out.status.success() {
            bail!(
                "tcpdump -r failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// The file behind the guest's disk of this serial (one of [`DISKS`]).
    pub fn disk_path(&self, serial: &str) -> PathBuf {
        self.dir.path().join(format!("{serial}.img"))
    }

    fn pool_dir(&self) -> PathBuf {
        self.dir.path().join("pool")
    }

    fn define(&mut self, kind: &'static str, xml: &str) -> Result<()> {
        let file = self.dir.path().join(format!("{kind}.xml"));
        std::fs::write(&file, xml)?;
        let file = file.to_string_lossy().into_owned();
        let define = match kind {
            "domain" => "define".to_owned(),
            _ => format!("{kind}-define"),
        };
        virsh(&[&define, &file])?;
        self.defined.push((kind, self.name.clone()));
        match kind {
            "net" => virsh(&["net-start", &self.name]).map(drop),
            "pool" => virsh(&["pool-start", &self.name]).map(drop),
            _ => Ok(()),
        }
    }

    fn network_xml(&self) -> String {
        // No <forward> (isolated); the host's address with no <dhcp> and no DNS (no dnsmasq, no
        // DHCP server).
        format!(
            "<network>\n  <name>{}</name>\n  <bridge name='{}' stp='off' delay='0'/>\n  \
             <dns enable='no'/>\n  <ip address='{HOST_ADDRESS}' prefix='24'/>\n</network>\n",
            self.name, self.bridge
        )
    }

    fn pool_xml(&self) -> String {
        format!(
            "<pool type='dir'>\n  <name>{}</name>\n  <target><path>{}</path></target>\n</pool>\n",
            self.name,
            self.pool_dir().display()
        )
    }

    fn domain_xml(&self) -> String {
        format!(
            r#"<domain type='qemu'>
  <name>{name}</name>
  <uuid>{uuid}</uuid>
  <memory unit='MiB'>1536</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <boot dev='hd'/>
  </os>
  <features><acpi/><apic/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <target dev='hdc' bus='ide'/>
      <readonly/>
    </disk>
    <disk type='file' device='floppy'>
      <driver name='qemu' type='raw'/>
      <target dev='fda' bus='fdc'/>
    </disk>
{disks}    <controller type='ide' index='0'/>
    <controller type='fdc' index='0'/>
    <serial type='file'>
      <source path='{serial}' append='on'/>
      <target port='0'/>
    </serial>
    <interface type='network'>
      <source network='{name}'/>
      <mac address='{mac}'/>
      <model type='virtio'/>
    </interface>
    <memballoon model='none'/>
  </devices>
</domain>
"#,
            name = self.name,
            uuid = self.uuid,
            mac = self.mac,
            serial = self.serial_path().display(),
            disks = DISKS
                .iter()
                .zip(["vda", "vdb"])
                .map(|((serial, _), dev)| format!(
                    "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n      \
                     <source file='{}'/>\n      <target dev='{dev}' bus='virtio'/>\n      \
                     <serial>{serial}</serial>\n    </disk>\n",
                    self.disk_path(serial).display()
                ))
                .collect::<String>(),
        )
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // A test that failed keeps the guest's whole serial console for whoever looks into it.
        if std::thread::panicking() {
            let kept = std::env::temp_dir().join(format!("{}-serial.log", self.name));
            if std::fs::copy(self.serial_path(), &kept).is_ok() {
                eprintln!("the guest's serial console is kept in {}", kept.display());
            }
        }
        for (kind, name) in self.defined.iter().rev() {
            let steps: &[&[&str]] = match *kind {
                "domain" => &[&["destroy"], &["undefine", "--nvram"]],
                "pool" => &[&["pool-destroy"], &["pool-undefine"]],
                _ => &[&["net-destroy"], &["net-undefine"]],
            };
            for step in steps {
                let mut args = step.to_vec();
                args.push(name);
                // Each step may fail because there was nothing to undo (a domain shut off).
                let _ = virsh(&args);
            }
        }
        if let Some(mut capture) = self.capture.take() {
            stop(&mut capture);
        }
        if !self.daemons.is_empty() {
            for daemon in self.daemons.iter_mut().rev() {
                stop(daemon);
            }
            // What libvirt left in the firewall: its nftables tables and iptables chains.
            for family in ["ip", "ip6"] {
                let _ = quiet("nft", &["delete", "table", family, "libvirt_network"]);
            }
            for tool in ["iptables", "ip6tables"] {
                for table in ["filter", "nat", "mangle"] {
                    let Ok(rules) = quiet(tool, &["-t", table, "-S"]) else {
                        continue;
                    };
                    for rule in rules.lines().filter(|r| r.contains("LIBVIRT_")) {
                        if let Some(jump) = rule.strip_prefix("-A ") {
                            let args: Vec<&str> = jump.split_whitespace().collect();
                            let mut delete = vec!["-t", table, "-D"];
                            delete.extend(args);
                            let _ = quiet(tool, &delete);
                        }
                    }
                    for chain in rules.lines().filter_map(|r| r.strip_prefix("-N ")) {
                        if chain.starts_with("LIBVIRT_") {
                            let _ = quiet(tool, &["-t", table, "-F", chain]);
                            let _ = quiet(tool, &["-t", table, "-X", chain]);
                        }
                    }
                }
            }
        }
    }
}

/// Starts `virtlogd` and `libvirtd` (PID 1 is no init system here) unless libvirt already
/// answers; the daemons this call started.
fn start_daemons() -> Result<Vec<Child>> {
    if virsh(&["uri"]).is_ok() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all("/var/lib/libvirt/dnsmasq")?;
    let mut started = Vec::new();
    for daemon in ["virtlogd", "libvirtd"] {
        let child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", daemon])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {daemon}"))?;
        started.push(child);
    }
    wait_for(Duration::from_secs(30), "libvirtd answering", || {
        virsh(&["uri"]).is_ok()
    })
    .inspect_err(|_| {
        for daemon in started.iter_mut().rev() {
            stop(daemon);
        }
    })?;
    Ok(started)
}

/// Removes the domains, pools and networks of labs whose test process died before it could.
fn reap_orphans() {
    let orphan = |name: &&str| {
        name.strip_prefix("podium-boot-")
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
    };
    let listed = |args: &[&str]| -> Vec<String> {
        virsh(args)
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(orphan)
            .map(str::to_owned)
            .collect()
    };
    for name in listed(&["list", "--all", "--name"]) {
        let _ = virsh(&["destroy", &name]);
        let _ = virsh(&["undefine", "--nvram", &name]);
    }
    for name in listed(&["pool-list", "--all", "--name"]) {
        let _ = virsh(&["pool-destroy", &name]);
        let _ = virsh(&["pool-undefine", &name]);
    }
    for name in listed(&["net-list", "--all", "--name"]) {
        let _ = virsh(&["net-destroy", &name]);
        let _ = virsh(&["net-undefine", &name]);
    }
}

/// Runs `virsh -c qemu:///system ARGS`; its standard output.
pub fn virsh(args: &[&str]) -> Result<String> {
    let mut all = vec!["-c", LIBVIRT_URI];
    all.extend_from_slice(args);
    quiet("virsh", &all)
}

fn quiet(program: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Stops a process this test started: SIGTERM, then SIGKILL after 5 s.
fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn wait_for(timeout: Duration, what: &str, mut check: impl FnMut() -> bool) -> Result<()> {
    let deadline = Instant::now() + timeout;
    while !check() {
        if Instant::now() >= deadline {
            bail!("{what}: not after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {}", path.display()))
}
