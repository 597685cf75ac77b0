//! A machine that boots: Podium provisions a real (virtual) machine through Redfish, the
//! DHCP-less way, end to end.
//!
//! sushy-tools' libvirt driver fronts a QEMU domain ([`podium_tests::vm::Lab`]) on a network
//! with no DHCP server. Podium registers and inspects it and boots the site's deploy ramdisk
//! (OpenStack's Ironic Python Agent and glean, from PyPI) with the preprovisioning config drive:
//! glean brings its network up from the drive and the agent finds Podium through it, looks up,
//! and heartbeats until Podium reaches it over TLS. A tenant claims it with a qcow2 image the
//! agent writes to the hinted disk (fast track), the host boots it from disk and survives a
//! power cycle; the release cleans the disks across a restart of Podium. Then a live image with
//! user data that makes a file system on a disk, which the release cleans; then a wrong checksum and an agent that dies mid-write, each failing its claim
//! with the cause and leaving the host cleaned and free. The guest's serial console shows what
//! each boot came up with, and `tcpdump` on the bridge shows no DHCP packet all along. The
//! images are built by `tests/boot/images.sh` from Debian's packages and PyPI, and cached
//! between runs.
//!
//! Prints the time from claim to cloud-init done and Podium's share of it (BENCHMARKS.md).

use std::time::{Duration, Instant};

use podium_tests::sushy::{LibvirtBackend, Sushy, SushyConfig};
use podium_tests::vm::{DISKS, HOST_ADDRESS, LIBVIRT_URI, Lab};
use podium_tests::{Client, FaultProxy, ImageServer, TestServer};
use podium_types::views::{AgentState, AgentView};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The ramdisk's and the live image's markers on the serial console (`tests/boot/*.sh`).
const RAMDISK_READY: &str = "PODIUM-RAMDISK-READY";
const RAMDISK_NETWORK: (&str, &str) =
    ("PODIUM-RAMDISK-NETWORK-BEGIN", "PODIUM-RAMDISK-NETWORK-END");
const LIVE_REPORT: (&str, &str) = ("PODIUM-LIVE-REPORT-BEGIN", "PODIUM-LIVE-REPORT-END");

/// The two ISOs, built (or found in the cache) by `tests/boot/images.sh`, and the live image
/// as a qcow2 disk image.
struct Images {
    ramdisk: Vec<u8>,
    live: Vec<u8>,
    disk: Vec<u8>,
}

fn images() -> Images {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/boot/images.sh");
    let out = std::process::Command::new(script)
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run tests/boot/images.sh");
    assert!(out.status.success(), "tests/boot/images.sh failed");
    let out = String::from_utf8(out.stdout).unwrap();
    let path = |key: &str| {
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key}= in {out}"));
        std::fs::read(line).unwrap_or_else(|e| panic!("{line}: {e}"))
    };
    Images {
        ramdisk: path("ramdisk"),
        live: path("live"),
        disk: path("disk"),
    }
}

/// The text between the last `begin` and the `end` after it in the serial log, once there.
fn section(log: &str, (begin, end): (&str, &str)) -> Option<String> {
    let start = log.rfind(begin)?;
    let rest = &log[start..];
    let stop = rest.find(end)?;
    Some(rest[..stop].replace('\r', ""))
}

/// Waits (blocking the caller's task, polling every second) until `check` finds what it wants
/// in the serial log; panics with the log's end after `timeout`.
async fn on_console<T>(
    lab: &Lab,
    timeout: Duration,
    what: &str,
    check: impl Fn(&str) -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        let log = lab.serial();
        if let Some(found) = check(&log) {
            return found;
        }
        if Instant::now() >= deadline {
            let tail: String = log
                .chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            panic!("{what}: not on the serial console after {timeout:?}; its end:\n{tail}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn eventually_json(
    timeout: Duration,
    what: &str,
    client: &Client,
    path: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let body = client.get(path).await.body;
        if done(&body) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not after {timeout:?}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// How many times the live image reported so far (once per boot).
fn reports(log: &str) -> usize {
    log.matches(LIVE_REPORT.0).count()
}

/// Whether every byte of a disk file is zero. Only its data extents are read (`SEEK_DATA`,
/// `SEEK_HOLE`), so a sparse disk of gigabytes costs what was written to it (QEMU allocates a
/// first block of zeros when it opens one).
fn blank(path: &std::path::Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).unwrap();
    let mut at = 0;
    loop {
        let Ok(data) = rustix::fs::seek(&file, rustix::fs::SeekFrom::Data(at)) else {
            return true;
        };
        let hole = rustix::fs::seek(&file, rustix::fs::SeekFrom::Hole(data)).unwrap();
        file.seek(SeekFrom::Start(data)).unwrap();
        let mut extent = (&mut file).take(hole - data);
        let mut chunk = vec![0; 1 << 20];
        loop {
            let n = extent.read(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            if chunk[..n].iter().any(|b| *b != 0) {
                return false;
            }
        }
        at = hole;
    }
}

/// What `blkid` (util-linux, probing the file itself) finds on a disk: empty where nothing.
fn signatures(path: &std::path::Path) -> String {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(path)
        .output()
        .expect("blkid runs");
    // 2: nothing found.
    assert!(
        out.status.success() || out.status.code() == Some(2),
        "blkid: {out:?}"
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The first `n` bytes of a disk file.
fn head(path: &std::path::Path, n: usize) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = vec![0; n];
    std::fs::File::open(path)
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    bytes
}

/// Waits for the live image's next report (the `seen`-th and one more) and checks that it came
/// up as the claim says: hostname, address, route, DNS servers, user data.
async fn next_report(
    lab: &Lab,
    seen: usize,
    hostname: &str,
    address: &str,
    marker: &str,
) -> String {
    let report = on_console(
        lab,
        Duration::from_secs(600),
        "cloud-init's report",
        |log| {
            (reports(log) > seen)
                .then(|| section(log, LIVE_REPORT))
                .flatten()
        },
    )
    .await;
    assert!(
        report.contains(&format!("hostname: {hostname}\n")),
        "hostname {hostname}:\n{report}"
    );
    assert!(
        report.contains("status: done"),
        "cloud-init finished without errors:\n{report}"
    );
    assert!(
        report.contains(&format!("inet {address}/24")),
        "{address}/24:\n{report}"
    );
    assert!(report.contains("default via 203.0.113.1"), "{report}");
    for dns in ["203.0.113.53", "203.0.113.54"] {
        assert!(
            report.contains(&format!("nameserver {dns}")),
            "{dns}:\n{report}"
        );
    }
    assert!(report.contains(marker), "the user data ran:\n{report}");
    report
}

/// Waits (up to five minutes: a cleaning boots the ramdisk) until the host is `available` with
/// no error, its disks shown clean, and answers its last deprovisioning, which succeeded.
async fn freed(admin: &Client, host: &str) -> Value {
    let freed = eventually_json(
        Duration::from_secs(300),
        "the host cleaned and free again",
        admin,
        &format!("/v1/hosts/{host}"),
        |h| h["state"] == "available",
    )
    .await;
    assert_eq!(freed["error"], Value::Null, "{freed}");
    let disks = &freed["disks"];
    assert_eq!(disks["may_hold_data_of"], Value::Null, "{freed}");
    assert_eq!(disks["last_cleaning"]["succeeded"], true, "{freed}");
    assert!(disks["last_cleaning"]["claim"].is_string(), "{freed}");
    let ops = admin
        .get(&format!("/v1/operations?host={host}&kind=deprovision"))
        .await;
    let last = ops.body["items"][0].clone();
    assert_eq!(last["status"], "succeeded", "{last}");
    last
}

/// Claims a host with `body` and waits (up to `timeout`) until it is provisioned: the claim's
/// id and its view then.
async fn claim_provisioned(tenant: &Client, body: Value, timeout: Duration) -> (String, Value) {
    let claim = tenant.created("/v1/claims", body).await;
    let id = claim.body["id"].as_str().unwrap().to_owned();
    let provisioned = eventually_json(
        timeout,
        "the claim provisioned",
        tenant,
        &format!("/v1/claims/{id}"),
        |c| c["host"]["provisioning_state"] == "provisioned",
    )
    .await;
    (id, provisioned)
}

/// Who the pool holds `address` for, where it holds it (`GET /v1/ip_pools/{id}/claims`).
async fn holder(admin: &Client, pool: &str, address: &str) -> Option<Value> {
    let held = admin.get(&format!("/v1/ip_pools/{pool}/claims")).await;
    held.body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no allocations: {}", held.text))
        .iter()
        .find(|c| c["address"] == address)
        .map(|c| c["owner"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_virtual_machine_boots_the_ramdisk_dhcp_less_then_the_tenants_image_through_redfish() {
    let images = tokio::task::spawn_blocking(images).await.unwrap();
    // On this thread, not a blocking pool's: the daemons and `tcpdump` it starts die with the
    // thread that started them (so that a killed test leaves none behind), and a pool's thread
    // ends when it idles.
    let lab = Lab::start().expect("the VM lab");
    let bmc = Sushy::start(SushyConfig {
        libvirt: Some(LibvirtBackend {
            uri: LIBVIRT_URI.to_owned(),
            domains: vec![lab.uuid.clone()],
            storage_pool: lab.storage_pool().to_owned(),
        }),
        ..SushyConfig::default()
    })
    .await
    .expect("sushy-tools in front of libvirt");
    let ramdisk = ImageServer::start(images.ramdisk).await;
    let live = ImageServer::start(images.live.clone()).await;
    let ramdisk_url = ramdisk.url("/ramdisk.iso");
    let live_url = live.url("/live.iso");
    // Fixed addresses, so that the clients, the BMC and the agent reach Podium after a restart.
    let port = |address: &str| {
        std::net::TcpListener::bind((address, 0))
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port()
    };
    let (api_port, agent_port) = (port("127.0.0.1"), port(HOST_ADDRESS));
    let configure = move |c: &mut podium_server::server::ServeConfig| {
        c.listen = ([127, 0, 0, 1], api_port).into();
        c.probe_interval = Duration::from_millis(500);
        c.sync_interval = Duration::from_secs(2);
        // Where the guest's agent (and the BMC) reach Podium: the host's address on the bridge.
        c.config_drive_listen = Some(format!("{HOST_ADDRESS}:{agent_port}").parse().unwrap());
        // A restart stops what runs at once: it is run again by the restarted process.
        c.shutdown_grace = Duration::ZERO;
        c.compiled_dir = Some(TestServer::compile_cache());
    };
    let mut server = TestServer::start_with(configure).await;
    let admin = server.admin();

    // The site: unreachable until its pools and template exist, so that the first inspection
    // prepares (and boots) the DHCP-less preprovisioning.
    let proxy = FaultProxy::start(&bmc.url()).await;
    proxy
        .failing
        .store(true, std::sync::atomic::Ordering::Release);
    let pm = admin
        .created(
            "/v1/pod_managers",
            // The test images' kernels have no ACPI button driver, so an OS asked to shut down
            // never hears it: a power off is forced after 15 s rather than the default 120.
            json!({"name": "lab", "url": proxy.url(), "preprovisioning_image": ramdisk_url,
                   "power": {"shutdown_timeout": 15}}),
        )
        .await;
    assert_eq!(
        pm.body["preprovisioning_image"],
        ramdisk_url.as_str(),
        "{}",
        pm.text
    );
    let pm = pm.body["uuid"].as_str().unwrap().to_owned();
    let prov = admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"start": "198.51.100.10", "end": "198.51.100.20"}],
                   "prefix": 24, "gateway": "198.51.100.1", "dns_servers": ["198.51.100.53"],
                   "pod_manager": pm, "plugin": {"name": "ipam-dhcpless"}}),
        )
        .await;
    let prov = prov.body["id"].as_str().unwrap().to_owned();
    let prod = admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prod", "ranges": [{"start": "203.0.113.10", "end": "203.0.113.20"}],
                   "prefix": 24, "gateway": "203.0.113.1", "pod_manager": pm}),
        )
        .await;
    let prod = prod.body["id"].as_str().unwrap().to_owned();
    let template = admin
        .put(
            &format!("/v1/pod_managers/{pm}/network_template"),
            json!({"links": [{"id": "boot", "type": "phy", "nic": "boot"}],
                   "networks": [{"id": "prod", "type": "ipv4", "link": "boot", "pool": "prod",
                                 "default_route": true}],
                   "dns": {"servers": ["203.0.113.53", "203.0.113.54"]}}),
        )
        .await;
    assert_eq!(template.status, StatusCode::OK, "{}", template.text);
    proxy
        .failing
        .store(false, std::sync::atomic::Ordering::Release);
    let reachable_at = Instant::now();

    // Preprovisioning: registered, inspected, the ramdisk booted with the config drive.
    let host = eventually_json(
        Duration::from_secs(120),
        "the VM registered and inspected",
        &admin,
        &format!("/v1/hosts?pod_manager={pm}"),
        |b| {
            b["items"].as_array().is_some_and(|h| {
                h.iter()
                    .any(|h| h["kind"] == "system" && h["state"] == "available")
            })
        },
    )
    .await["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "system" && h["state"] == "available")
        .cloned()
        .unwrap();
    let host_id = host["id"].as_str().unwrap().to_owned();
    let nics: Vec<&str> = host["nics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["mac"].as_str())
        .collect();
    assert!(
        nics.contains(&lab.mac.as_str()),
        "the inventory shows the VM's NIC {}: {host}",
        lab.mac
    );
    let ops = admin.get(&format!("/v1/operations?host={host_id}")).await;
    let inspection = ops.body["items"]
        .as_array()
        .and_then(|ops| ops.iter().find(|o| o["kind"] == "inspect"))
        .cloned()
        .unwrap_or_else(|| panic!("no inspection: {}", ops.text));
    let prepared = &inspection["result"]["preprovisioning"];
    assert_eq!(prepared["booted"], ramdisk_url.as_str(), "{inspection}");
    let address = prepared["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        holder(&admin, &prov, &address).await,
        Some(json!(format!("host:{host_id}"))),
        "the pool holds {address} for host:{host_id}"
    );
    let network = on_console(
        &lab,
        Duration::from_secs(180),
        "the ramdisk's network",
        |log| {
            log.contains(RAMDISK_READY)
                .then(|| section(log, RAMDISK_NETWORK))
                .flatten()
        },
    )
    .await;
    eprintln!(
        "boot: the ramdisk came up {:.1} s after the site became reachable (registration, \
         inspection, its boot) with\n{network}",
        reachable_at.elapsed().as_secs_f64()
    );
    assert!(
        network.contains(&format!("inet {address}/24")),
        "the ramdisk has {address}/24:\n{network}"
    );
    assert!(network.contains("default via 198.51.100.1"), "{network}");
    assert!(network.contains("nameserver 198.51.100.53"), "{network}");
    assert!(
        lab.dhcp_packets().unwrap().is_empty(),
        "no DHCP while preprovisioning"
    );

    // The deploy agent found Podium through the drive, looked up by its MACs and heartbeats;
    // Podium reached it at the address it gave the ramdisk, over TLS with the certificate the
    // agent made itself and announced.
    let agent_path = format!("/v1/hosts/{host_id}/agent");
    let agent: AgentView = serde_json::from_value(
        eventually_json(
            Duration::from_secs(300),
            "the agent connected",
            &admin,
            &agent_path,
            |a| a["state"] == "connected",
        )
        .await,
    )
    .unwrap();
    eprintln!(
        "boot: the agent connected {:.1} s after the site became reachable: {agent:?}",
        reachable_at.elapsed().as_secs_f64()
    );
    assert_eq!(agent.state, AgentState::Connected);
    assert_eq!(agent.address, address);
    assert_eq!(
        agent.url.as_deref(),
        Some(format!("https://{address}:9999").as_str())
    );
    assert_eq!(agent.version.as_deref(), Some("13.0.0"));
    assert!(
        agent.heartbeats >= 1 && agent.verified_at.is_some(),
        "{agent:?}"
    );

    let (_, token) = admin.granted_tenant("alice", &pm).await;
    let alice = server.client(Some(&token));

    // Install to disk, on the fast track: the agent the inspection booted writes the tenant's
    // qcow2 image, and the claim's config drive, to the disk the hints name; the host then
    // boots from that disk, with no media inserted.
    let disk_image =
        ImageServer::start_on(HOST_ADDRESS.parse().unwrap(), images.disk.clone()).await;
    let disk_sha256 = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(&images.disk))
    };
    let [(small, _), (large, _)] = DISKS;
    let disk_marker = format!("PODIUM-DISK-USER-DATA-{:016x}", fastrand::u64(..));
    let seen = reports(&lab.serial());
    let installing_at = Instant::now();
    // This process's CPU: Podium's (it runs in the test's process), with the test's own polls.
    let cpu = || podium_tests::process_usage(std::process::id()).map_or(Duration::ZERO, |u| u.1);
    let cpu_before = cpu();
    let (claim_id, installed) = claim_provisioned(
        &alice,
        json!({"pod_manager": pm,
                   "image": {"url": disk_image.url("/disk.qcow2"), "format": "qcow2",
                             "checksum": disk_sha256, "checksum_type": "sha256",
                             "root_device": {"serial": small}},
                   "user_data": format!("#!/bin/sh\necho {disk_marker} > /run/podium-user-data\n")}),
        Duration::from_secs(600),
    )
    .await;
    let install_share = installing_at.elapsed();
    let install_cpu = cpu() - cpu_before;
    let claim_address = installed["host"]["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    let ops = admin
        .get(&format!("/v1/operations?host={host_id}&kind=provision"))
        .await;
    let provision = ops.body["items"][0].clone();
    assert_eq!(provision["status"], "succeeded", "{provision}");
    let result = &provision["result"]["installed"];
    assert_eq!(result["fast_track"], true, "{provision}");
    assert_eq!(result["root_device"]["serial"], small, "{provision}");
    // The image is on the hinted disk (past its first sector, where the agent added the config
    // drive's partition); nothing was written to the other one.
    let written = head(&lab.disk_path(small), 1 << 20);
    assert_eq!(
        written[32 << 10..],
        images.live[32 << 10..1 << 20],
        "the image is on {small}"
    );
    assert!(
        blank(&lab.disk_path(large)),
        "nothing was written to {large}"
    );
    let hostname = alice
        .get(&format!("/v1/claims/{claim_id}/rendered"))
        .await
        .body["meta_data"]["hostname"]
        .as_str()
        .unwrap()
        .to_owned();
    let report = next_report(&lab, seen, &hostname, &claim_address, &disk_marker).await;
    let installed_at = installing_at.elapsed();
    eprintln!(
        "boot: installed to disk: claim to provisioned (agent write and reboot) {:.1} s, using \
         {:.2} s of CPU in Podium's process; claim to cloud-init done from disk {:.1} s; the \
         agent: {result}\n{report}",
        install_share.as_secs_f64(),
        install_cpu.as_secs_f64(),
        installed_at.as_secs_f64()
    );
    let xml = lab.domain_xml_now().unwrap();
    assert!(
        !xml.contains("podium-config") && !xml.contains(".iso"),
        "nothing inserted: the system came up from its disk:\n{xml}"
    );

    // A power cycle through the API: it boots from its disk again.
    let seen = reports(&lab.serial());
    for online in [false, true] {
        let switched = alice
            .patch(
                &format!("/v1/claims/{claim_id}"),
                json!({ "online": online }),
            )
            .await;
        assert_eq!(switched.status, StatusCode::OK, "{}", switched.text);
        let power = if online { "on" } else { "off" };
        eventually_json(
            Duration::from_secs(120),
            "the claim's power",
            &alice,
            &format!("/v1/claims/{claim_id}"),
            |c| c["host"]["power_state"] == power,
        )
        .await;
    }
    // The power off asked the OS first, then forced the power off when it did not hear.
    let off = admin
        .get(&format!("/v1/operations?host={host_id}&kind=power"))
        .await;
    let off = off.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["request"]["action"] == "off")
        .unwrap_or_else(|| panic!("a power off: {}", off.text))
        .clone();
    assert_eq!(
        off["result"]["sent"],
        json!(["graceful_shutdown", "force_off"]),
        "{off}"
    );
    next_report(&lab, seen, &hostname, &claim_address, &disk_marker).await;

    // Release: the disks are cleaned by the agent of a ramdisk booted again, before the host
    // is free: no partition table and no file system signature is left for the next tenant.
    // Podium restarts while the agent erases: the restarted process runs the deprovisioning
    // again, finds the agent connected (no second boot of the ramdisk) and its erase running or
    // done, and follows it.
    let released = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    eventually_json(
        Duration::from_secs(300),
        "the cleaning's agent connected",
        &admin,
        &agent_path,
        |a| a["state"] == "connected",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    server = server.restart_with(configure).await;
    let deprovision = freed(&admin, &host_id).await;
    // Handed back at the restart (an attempt stopped by a shutdown is not counted) and run
    // again: the agent the first run booted was connected, so the second used it (its result
    // says fast track, where the release itself had to boot the ramdisk: the agent was forgotten
    // when the host left it for its disk).
    let cleaned = &deprovision["result"]["cleaned"];
    assert_eq!(cleaned["step"], "erase_devices_metadata", "{deprovision}");
    assert_eq!(
        cleaned["fast_track"], true,
        "the restarted Podium used the agent already running: {deprovision}"
    );
    let wiped = head(&lab.disk_path(small), 1 << 20);
    assert_ne!(
        wiped[510..512],
        [0x55, 0xAA],
        "no partition table left on {small}"
    );
    assert_ne!(
        &wiped[0x8001..0x8006],
        b"CD001",
        "no ISO 9660 signature left on {small}"
    );
    assert!(
        blank(&lab.disk_path(large)),
        "nothing was written to {large}"
    );
    eprintln!("boot: cleaned on release: {cleaned}");

    // Provisioning a live image: a tenant claims the host with the live image and user data.
    // The tenant has root on the machine: its user data makes a file system on a disk and
    // writes a file into it (with e2fsprogs' debugfs: the live image's kernel has no ext4 to
    // mount it with), and leaves its marker only once that worked.
    let marker = format!("PODIUM-USER-DATA-{:016x}", fastrand::u64(..));
    let user_data = format!(
        "#!/bin/sh\nset -e\ndisk=/dev/disk/by-id/virtio-{small}\n\
         mkfs.ext4 -q -F -L tenant-a \"$disk\"\necho tenant-a-secret > /run/secret\n\
         debugfs -w -R 'write /run/secret secret' \"$disk\"\n\
         debugfs -R 'cat /secret' \"$disk\" | grep -q tenant-a-secret\n\
         echo {marker} > /run/podium-user-data\n"
    );
    let seen = reports(&lab.serial());
    let claimed_at = Instant::now();
    let (claim_id, provisioned) = claim_provisioned(
        &alice,
        json!({"pod_manager": pm, "image": {"url": live_url, "format": "live-iso"},
                   "user_data": user_data}),
        Duration::from_secs(120),
    )
    .await;
    let podium_share = claimed_at.elapsed();
    assert_eq!(
        admin.get(&agent_path).await.status,
        StatusCode::NOT_FOUND,
        "the ramdisk's agent no longer answers for the host"
    );
    assert_eq!(provisioned["host"]["power_state"], "on", "{provisioned}");
    let claim_address = provisioned["host"]["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(claim_address.starts_with("203.0.113."), "{provisioned}");
    assert!(
        holder(&admin, &prod, &claim_address).await.is_some(),
        "the pool holds the claim's {claim_address}"
    );
    let rendered = alice.get(&format!("/v1/claims/{claim_id}/rendered")).await;
    assert_eq!(rendered.status, StatusCode::OK, "{}", rendered.text);
    let hostname = rendered.body["meta_data"]["hostname"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", rendered.text))
        .to_owned();
    let report = next_report(&lab, seen, &hostname, &claim_address, &marker).await;
    let cloud_init_done = claimed_at.elapsed();
    eprintln!("boot: the live image came up with\n{report}");
    assert!(
        report.contains("LABEL=\"tenant-a\"") && report.contains("TYPE=\"ext4\""),
        "the tenant's file system is on {small}:\n{report}"
    );
    assert!(
        !report.contains(&address),
        "the ramdisk's address is gone:\n{report}"
    );
    assert!(
        lab.dhcp_packets().unwrap().is_empty(),
        "no DHCP while provisioning"
    );
    eprintln!(
        "boot: claim to provisioned (Podium's share) {:.1} s; claim to cloud-init done {:.1} s",
        podium_share.as_secs_f64(),
        cloud_init_done.as_secs_f64()
    );

    // Release: the disks are cleaned (the live system had root on the machine), then powered
    // off, both media ejected (libvirt's own XML), the addresses freed. The next tenant finds
    // no file system on the disk: nothing to mount, nothing of the last tenant to read.
    let released = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    let deprovision = freed(&admin, &host_id).await;
    let cleaned = &deprovision["result"]["cleaned"];
    assert_eq!(cleaned["step"], "erase_devices_metadata", "{deprovision}");
    let wiped = head(&lab.disk_path(small), 1 << 20);
    assert_ne!(
        wiped[1080..1082],
        [0x53, 0xEF],
        "no ext4 superblock left on {small}"
    );
    assert_eq!(
        signatures(&lab.disk_path(small)),
        "",
        "blkid finds no signature on {small}"
    );
    eprintln!("boot: the live system's disk cleaned on release: {cleaned}");
    assert_eq!(lab.state().unwrap(), "shut off");
    let xml = lab.domain_xml_now().unwrap();
    for device in ["cdrom", "floppy"] {
        let with_media = xml.split("<disk ").skip(1).filter(|disk| {
            disk.contains(&format!("device='{device}'"))
                && disk
                    .split("</disk>")
                    .next()
                    .unwrap_or("")
                    .contains("<source")
        });
        assert_eq!(
            with_media.count(),
            0,
            "no {device} media left in the domain:\n{xml}"
        );
    }
    assert_eq!(
        holder(&admin, &prod, &claim_address).await,
        None,
        "the claim's address is freed"
    );
    // And the preprovisioning address (the pool's `release` is not `keep`).
    assert_eq!(
        holder(&admin, &prov, &address).await,
        None,
        "the host's preprovisioning address is freed"
    );

    // A disk image whose checksum is not the claim's: the host boots the ramdisk (its agent is
    // gone since the release), the agent refuses the image, and the provisioning fails saying
    // so. Nothing half-done stays bound: the claim fails with the agent's words, and the host is
    // cleaned (the agent was told to write) and free again; no image is on either disk.
    let before = head(&lab.disk_path(small), 1 << 20);
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": pm,
                   "image": {"url": disk_image.url("/disk.qcow2"), "format": "qcow2",
                             "checksum": "0".repeat(64), "checksum_type": "sha256",
                             "root_device": {"serial": small}}}),
        )
        .await;
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    let failed = eventually_json(
        Duration::from_secs(600),
        "the provisioning failed",
        &alice,
        &format!("/v1/claims/{claim_id}"),
        |c| c["state"] == "failed" && c["host"].is_null(),
    )
    .await;
    let reason = failed["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("writing the image failed") && reason.to_lowercase().contains("checksum"),
        "the claim names the checksum: {failed}"
    );
    let cleaned = &freed(&admin, &host_id).await;
    assert_eq!(
        cleaned["result"]["cleaned"]["fast_track"], true,
        "the agent that refused the image cleans: {cleaned}"
    );
    assert!(
        head(&lab.disk_path(small), 1 << 20) == before,
        "no image on {small}"
    );
    assert!(
        blank(&lab.disk_path(large)),
        "nothing was written to {large}"
    );
    let deleted = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert!(deleted.status.is_success(), "{}", deleted.text);

    // An agent that dies mid-write (the machine loses its power behind Podium's back): Podium
    // finds the agent silent and fails the provisioning saying so; the cleaning does not take
    // the dead agent for a running one (it heartbeat a minute ago) but boots the ramdisk again,
    // erases the half-written disk and frees the host.
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": pm,
                   "image": {"url": disk_image.url("/disk.qcow2"), "format": "qcow2",
                             "checksum": disk_sha256, "checksum_type": "sha256",
                             "root_device": {"serial": small}}}),
        )
        .await;
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    eventually_json(
        Duration::from_secs(300),
        "the agent connected for the write",
        &admin,
        &agent_path,
        |a| a["state"] == "connected",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    lab.pull_the_plug().unwrap();
    let failed = eventually_json(
        Duration::from_secs(600),
        "the provisioning failed",
        &alice,
        &format!("/v1/claims/{claim_id}"),
        |c| c["state"] == "failed" && c["host"].is_null(),
    )
    .await;
    let reason = failed["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("writing the image: the deploy agent stopped answering"),
        "the claim says the agent died: {failed}"
    );
    let cleaned = &freed(&admin, &host_id).await;
    assert_eq!(
        cleaned["result"]["cleaned"]["fast_track"], false,
        "the ramdisk was booted again for the cleaning: {cleaned}"
    );
    let wiped = head(&lab.disk_path(small), 1 << 20);
    assert_ne!(
        wiped[510..512],
        [0x55, 0xAA],
        "no partition table left of the half-written image on {small}"
    );
    assert!(
        blank(&lab.disk_path(large)),
        "nothing was written to {large}"
    );
    let deleted = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert!(deleted.status.is_success(), "{}", deleted.text);
    assert!(lab.dhcp_packets().unwrap().is_empty(), "no DHCP at all");
    drop(server);
    drop(bmc);
    drop(lab);
}
