//! Hosts with their own BMCs under real BMC latencies (the Metal3 model): each host is registered
//! with its own BMC endpoint, a latency proxy (`FaultProxy`, a delay and a random jitter per
//! request) that shows one system of a sushy-tools emulator, as a single-system BMC. Measures the
//! wall time until every host is registered and inspected (`available`), then until every one is
//! powered on, then a full refresh (the site's sync reads every host's BMC again), each beside
//! its physical limit, then one turn of the periodic power-state refresh (`--sync-interval 60`:
//! every host read once in about a minute) with Podium's CPU per host read. The physical limit: the most requests any one host's BMC was sent in that phase, answered one
//! after another at the proxy's delay, as if every host were served at once.
//!
//! The systems are spread over several emulator processes (`PER_EMULATOR` each, as a rack of
//! BMCs is many machines): one Python process answering a thousand hosts' requests would be the
//! bottleneck measured. The emulators' own CPU time is reported beside Podium's, and the
//! benchmark's (its proxies and its client): on a small machine they all share its cores. The
//! cores' limit is the CPU all three used in a phase over the machine's cores: no wall time on
//! this machine can be shorter, whatever Podium does.
//!
//! The hosts belong to `SITES` pod managers, in turn (a fleet of many sites: each site's sync
//! then reads only its own hosts).
//!
//! With `PODIUM_TEST_DATABASE=postgres`, on PostgreSQL, and then `PROCESSES` Podium processes
//! share the database and the work (the benchmark's requests spread over them in turn, as a load
//! balancer would; every process leases operations and takes its share of the refresh); their
//! CPU is added up, their memory is the most any one of them held.
//!
//! With `PODIUM_BENCH_IRONIC=1`, OpenStack Ironic is then measured in the same run, against the
//! same emulators and proxies (every system powered off again first): standalone Ironic from
//! PyPI (`scripts/setup-peers.sh --ironic`), one process, SQLite, noauth, `rpc_transport =
//! none`, the `redfish` hardware type. Its nodes are enrolled and made `manageable` (Ironic
//! reads each system as it verifies the BMC), then powered on, then one turn of its periodic
//! power-state sync (`sync_power_state_interval` = the same 60 s) is timed as Podium's is.
//!
//! With `PODIUM_BENCH_BMCS=simulator`, the BMCs are the scale simulator's instead
//! (`podium_tests::bmc_sim`: one port per host, the delay and jitter its own, a few microseconds
//! of CPU a request, in processes of its own): past a thousand hosts, sushy-tools' CPU, not
//! Podium, would set every wall time. `PER_EMULATOR` is then unused. With
//! `PODIUM_BENCH_BMC_TLS=1` as well, every simulated BMC serves HTTPS with one certificate, which
//! each host is registered to trust (BMCs signed by a site's CA); with `PODIUM_BENCH_BMC_TLS=own`,
//! each BMC serves a certificate of its own, which its host trusts (a TLS policy per host).
//!
//! `cargo bench -p podium-tests --bench latency [-- HOSTS DELAY_MS JITTER_MS PER_EMULATOR
//! SITES PROCESSES]`; defaults 40, 400, 0, 100, 1, 1.

use std::sync::atomic::Ordering;

use futures::{StreamExt, TryStreamExt};
use std::time::{Duration, Instant};

use podium_tests::bmc_sim::{BmcFleet, BmcSim, SimConfig, SimTls};
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_tests::{FaultProxy, ProcessServer};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
const BMC_SIM: &str = env!("CARGO_BIN_EXE_bmc-sim");

/// Requests the benchmark has in flight at once, as a tool driving a large fleet would bound
/// them (and the file descriptors of both processes with them).
const ASK_AT_ONCE: usize = 1000;

/// Emulator processes started at once.
const EMULATORS_STARTING_AT_ONCE: usize = 8;

/// The sync interval the server runs with: the periodic refresh reads every host once in it.
const SYNC_INTERVAL: Duration = Duration::from_secs(60);

/// The hosts' BMCs, and the shared service every site stands for.
enum Bmcs {
    /// sushy-tools processes, each host's system behind a latency proxy of its own; each site a
    /// proxy without delay in front of one more emulator.
    Emulated {
        emulators: Vec<Sushy>,
        per_emulator: usize,
        proxies: Vec<FaultProxy>,
        /// Kept running: the sites' shared service.
        _site: Box<Sushy>,
        sites: Vec<FaultProxy>,
    },
    /// The simulator: one BMC per host, in processes of their own; each site a BMC without
    /// systems or delay.
    Simulated { hosts: BmcFleet, sites: BmcSim },
}

impl Bmcs {
    async fn start(
        simulated: bool,
        hosts: usize,
        sites: usize,
        per_emulator: usize,
        delay: Duration,
        jitter: Duration,
    ) -> Bmcs {
        if simulated {
            let tls = std::env::var("PODIUM_BENCH_BMC_TLS").unwrap_or_default();
            assert!(
                matches!(tls.as_str(), "" | "1" | "own"),
                "PODIUM_BENCH_BMC_TLS is 1 (one certificate) or own (one per BMC)"
            );
            return Bmcs::Simulated {
                hosts: BmcFleet::start(
                    BMC_SIM,
                    SimConfig {
                        bmcs: hosts,
                        latency: delay,
                        jitter,
                        tls: (tls == "1").then(SimTls::generate),
                        own_certificates: tls == "own",
                        ..SimConfig::with_systems(1)
                    },
                )
                .await,
                sites: BmcSim::start(SimConfig {
                    bmcs: sites,
                    ..SimConfig::with_systems(0)
                })
                .await,
            };
        }
        let numbers: Vec<u32> = (1..=hosts as u32).collect();
        // Started a few at a time: a hundred Python processes starting at once on two cores
        // take longer than an emulator is given to answer.
        let emulators: Vec<Sushy> = futures::stream::iter(numbers.chunks(per_emulator))
            .map(|chunk| {
                let mut config = SushyConfig::with_systems(0);
                config.systems = chunk.iter().copied().map(FakeSystem::numbered).collect();
                Sushy::start(config)
            })
            .buffered(EMULATORS_STARTING_AT_ONCE)
            .try_collect()
            .await
            .expect("the emulators");
        let site = Sushy::start(SushyConfig::with_systems(0))
            .await
            .expect("an emulator");
        let mut proxies = Vec::new();
        for (i, n) in numbers.iter().enumerate() {
            let bmcs = &emulators[i / per_emulator];
            let proxy =
                FaultProxy::start_one_system(&bmcs.url(), &FakeSystem::numbered(*n).uuid).await;
            proxy
                .delay_ms
                .store(delay.as_millis() as u64, Ordering::Release);
            proxy
                .jitter_ms
                .store(jitter.as_millis() as u64, Ordering::Release);
            proxies.push(proxy);
        }
        let mut site_proxies = Vec::new();
        for _ in 0..sites {
            site_proxies.push(FaultProxy::start(&site.url()).await);
        }
        Bmcs::Emulated {
            emulators,
            per_emulator,
            proxies,
            _site: Box::new(site),
            sites: site_proxies,
        }
    }

    /// Host `i`'s BMC.
    fn host_url(&self, i: usize) -> String {
        match self {
            Bmcs::Emulated { proxies, .. } => proxies[i].url(),
            Bmcs::Simulated { hosts, .. } => hosts.url(i),
        }
    }

    /// Host `i`'s BMC as a host is registered with it: its URL, and the certificate to trust
    /// where it serves HTTPS (the site's, or the BMC's own).
    fn host_bmc(&self, i: usize) -> serde_json::Value {
        match self {
            Bmcs::Simulated { hosts, .. } if hosts.cert_pem(i).is_some() => json!({
                "url": self.host_url(i),
                "tls": {"ca_bundle": hosts.cert_pem(i)},
            }),
            _ => json!({"url": self.host_url(i)}),
        }
    }

    /// Site `i`'s shared service, each at a URL of its own (a pod manager's URL is unique).
    fn site_url(&self, i: usize) -> String {
        match self {
            Bmcs::Emulated { sites, .. } => sites[i].url(),
            Bmcs::Simulated { sites, .. } => sites.url(i),
        }
    }

    /// Requests each host's BMC has received so far.
    async fn counts(&self) -> Vec<u64> {
        match self {
            Bmcs::Emulated { proxies, .. } => proxies
                .iter()
                .map(|p| p.requests.load(Ordering::Acquire))
                .collect(),
            Bmcs::Simulated { hosts, .. } => hosts.requests().await,
        }
    }

    /// CPU time the hosts' emulator (or simulator) processes used so far (the sites' one, which
    /// only answers the syncs' empty listings, not counted).
    fn emulators_cpu(&self) -> Duration {
        match self {
            Bmcs::Emulated { emulators, .. } => emulators
                .iter()
                .filter_map(|e| podium_tests::process_usage(e.pid()?))
                .map(|(_, cpu)| cpu)
                .sum(),
            Bmcs::Simulated { hosts, .. } => hosts
                .pids()
                .into_iter()
                .filter_map(podium_tests::process_usage)
                .map(|(_, cpu)| cpu)
                .sum(),
        }
    }

    /// Every host's system off again, at its emulator (not through the proxies' delay).
    async fn power_off_all(&self, systems: &[FakeSystem]) {
        let (emulators, per_emulator) = match self {
            Bmcs::Emulated {
                emulators,
                per_emulator,
                ..
            } => (emulators, *per_emulator),
            Bmcs::Simulated { hosts, .. } => return hosts.power_off_all().await,
        };
        let http = reqwest::Client::new();
        let off: Vec<_> = futures::stream::iter(systems.iter().enumerate())
            .map(|(i, system)| {
                let url = format!(
                    "{}/redfish/v1/Systems/{}/Actions/ComputerSystem.Reset",
                    emulators[i / per_emulator].url(),
                    system.uuid
                );
                let http = http.clone();
                async move {
                    http.post(url)
                        .json(&json!({"ResetType": "ForceOff"}))
                        .send()
                        .await
                        .map(|r| r.status())
                }
            })
            .buffer_unordered(50)
            .collect()
            .await;
        assert!(
            off.iter().all(|s| s.as_ref().is_ok_and(|s| s.is_success())),
            "powering the systems off at the emulators failed: {off:?}"
        );
    }

    /// What stands for the BMCs, for the figures' caption.
    fn describe(&self, delay_ms: usize, jitter_ms: usize) -> String {
        match self {
            Bmcs::Emulated { emulators, .. } => format!(
                "a proxy adding {delay_ms} ms + up to {jitter_ms} ms per request in front of {} \
                 sushy-tools processes",
                emulators.len()
            ),
            Bmcs::Simulated { hosts, .. } => format!(
                "the BMC simulator over {}, {delay_ms} ms + up to {jitter_ms} ms per request, \
                 in {} processes of its own",
                match std::env::var("PODIUM_BENCH_BMC_TLS").as_deref() {
                    _ if hosts.cert_pem(0).is_none() => "HTTP",
                    Ok("own") => "HTTPS, each BMC with a certificate of its own",
                    _ => "HTTPS, every BMC with the same certificate",
                },
                hosts.pids().len()
            ),
        }
    }
}

/// CPU time this benchmark's own process used so far: its proxies (a thousand BMCs' latency)
/// and its client.
fn bench_cpu() -> Duration {
    podium_tests::process_usage(std::process::id())
        .expect("the benchmark's own usage")
        .1
}

/// The physical limit of a phase: the most requests one BMC got in it, one after another.
fn limit(before: &[u64], after: &[u64], delay_ms: usize) -> (u64, Duration) {
    let most = before
        .iter()
        .zip(after)
        .map(|(b, a)| a - b)
        .max()
        .unwrap_or(0);
    (most, Duration::from_millis(most * delay_ms as u64))
}

fn main() {
    let [hosts, delay_ms, jitter_ms, per_emulator, sites, processes] =
        podium_tests::bench_args([40, 400, 0, 100, 1, 1]);
    let (per_emulator, sites, processes) = (per_emulator.max(1), sites.max(1), processes.max(1));
    // How often the benchmark lists every host while it waits: listing 10,000 hosts costs
    // Podium CPU, so the larger the fleet, the rarer.
    let poll = Duration::from_millis((hosts as u64 / 10).clamp(100, 2000));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let numbers: Vec<u32> = (1..=hosts as u32).collect();
        let simulated = std::env::var("PODIUM_BENCH_BMCS").is_ok_and(|v| v == "simulator");
        let bmcs = Bmcs::start(
            simulated,
            hosts,
            sites,
            per_emulator,
            Duration::from_millis(delay_ms as u64),
            Duration::from_millis(jitter_ms as u64),
        )
        .await;
        let database = podium_tests::PostgresDatabase::for_this_run().await;
        assert!(
            processes == 1 || database.is_some(),
            "several processes share a PostgreSQL database: set PODIUM_TEST_DATABASE=postgres"
        );
        let url = database.as_ref().map(|d| d.url.as_str());
        let sync_interval = SYNC_INTERVAL.as_secs().to_string();
        let mut servers = Vec::new();
        let mut data = Vec::new();
        for _ in 0..processes {
            let dir = tempfile::tempdir().unwrap();
            let options = ["--sync-interval", sync_interval.as_str()];
            servers
                .push(ProcessServer::start_logging(BIN, dir.path(), url, "info", &options).await);
            data.push(dir);
        }
        let admins: Vec<_> = servers.iter().map(ProcessServer::admin).collect();
        let admin = admins[0].clone();
        // The CPU every Podium process used so far, all together.
        let podium_cpu = || -> Duration {
            servers
                .iter()
                .map(|s| s.usage().expect("a Podium process's usage").1)
                .sum()
        };
        let mut pms = Vec::new();
        for i in 0..sites {
            let pm = admin
                .created(
                    "/v1/pod_managers",
                    json!({"name": format!("site-{i}"), "url": bmcs.site_url(i)}),
                )
                .await;
            pms.push(pm.body["uuid"].as_str().unwrap().to_owned());
        }
        let podium_before = podium_cpu();
        let emulators_before = bmcs.emulators_cpu();
        let bench_before = bench_cpu();

        // Every host registered at once, each at its own BMC.
        let start = bmcs.counts().await;
        let started = Instant::now();
        let created: Vec<_> = futures::stream::iter(0..hosts)
            .map(|i| {
                let admin = admins[i % processes].clone();
                let body = json!({"pod_manager": pms[i % sites], "bmc": bmcs.host_bmc(i)});
                async move { admin.post("/v1/hosts", body).await }
            })
            .buffer_unordered(ASK_AT_ONCE)
            .collect()
            .await;
        if let Some(failed) = created.iter().find(|r| !r.status.is_success()) {
            for server in &servers {
                for line in server.log().lines().filter(|l| l.contains("ERROR")).take(5) {
                    eprintln!("podium: {line}");
                }
            }
            panic!("registering a host: {}", failed.text);
        }
        let ids: Vec<String> = created
            .iter()
            .map(|r| r.body["id"].as_str().unwrap().to_owned())
            .collect();
        let available = async |ids: &[String]| {
            let seen: std::collections::HashSet<String> = admin.hosts_all("&state=available")
                .await
                .iter()
                .map(|h| h.id.to_string())
                .collect();
            ids.iter().all(|id| seen.contains(id))
        };
        while !available(&ids).await {
            // A host that failed would keep this waiting for ever: say which and why.
            if let Some(failed) = admin.hosts_all("&state=error").await.first() {
                panic!("a host failed to register: {failed:?}");
            }
            tokio::time::sleep(poll).await;
        }
        let registered = started.elapsed();
        let registered_limit = limit(&start, &bmcs.counts().await, delay_ms);
        let podium_registered = podium_cpu();
        let emulators_registered = bmcs.emulators_cpu();
        let bench_registered = bench_cpu();

        // Every host powered on at once (asked all at once, as a tool driving a rack would).
        let start = bmcs.counts().await;
        let started = Instant::now();
        let asked: Vec<_> = futures::stream::iter(ids.iter().enumerate())
            .map(|(i, id)| {
                let admin = admins[i % processes].clone();
                async move {
                    admin
                        .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
                        .await
                }
            })
            .buffer_unordered(ASK_AT_ONCE)
            .collect()
            .await;
        for op in &asked {
            assert!(op.status.is_success(), "{}", op.text);
        }
        loop {
            let on = admin.hosts_all("&power_state=on").await.len();
            if on >= ids.len() {
                break;
            }
            tokio::time::sleep(poll).await;
        }
        let powered = started.elapsed();
        let powered_limit = limit(&start, &bmcs.counts().await, delay_ms);
        let podium_powered = podium_cpu();
        let emulators_powered = bmcs.emulators_cpu();
        let bench_powered = bench_cpu();

        // A full refresh: every site's sync reads every host's own BMC again.
        let start = bmcs.counts().await;
        let started = Instant::now();
        admin.sync_all(&pms).await;
        let refreshed = started.elapsed();
        let refreshed_limit = limit(&start, &bmcs.counts().await, delay_ms);
        let podium_refreshed = podium_cpu();
        let emulators_refreshed = bmcs.emulators_cpu();
        let bench_refreshed = bench_cpu();

        // One turn of the periodic refresh: every host's power read again, spread over the
        // interval (polled rarely, so the polling costs Podium little).
        let seen = async || -> std::collections::HashMap<String, String> {
            admin.hosts_all("")
                .await
                .iter()
                .map(|h| (h.id.to_string(), h.last_seen_at.to_string()))
                .collect()
        };
        let started = Instant::now();
        let before = seen().await;
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let now = seen().await;
            if before.iter().all(|(id, at)| now.get(id).is_some_and(|t| t > at)) {
                break;
            }
        }
        let turn = started.elapsed();
        let podium_turn = podium_cpu();
        let turn_cpu = podium_turn - podium_refreshed;

        let peak = servers
            .iter()
            .filter_map(ProcessServer::peak_rss)
            .max()
            .unwrap_or(0);
        let (database, peak_of) = match (url, processes) {
            (None, _) => ("SQLite".to_owned(), "Podium's"),
            (Some(_), 1) => ("PostgreSQL".to_owned(), "Podium's"),
            (Some(_), n) => (
                format!("PostgreSQL, {n} Podium processes sharing the work"),
                "each Podium process's",
            ),
        };
        println!(
            "{hosts} hosts across {sites} pod managers, each host with its own BMC endpoint ({}), \
             {database}; {peak_of} peak resident memory {:.0} MiB",
            bmcs.describe(delay_ms, jitter_ms),
            peak as f64 / 1024.0
        );
        println!();
        println!(
            "| work | wall time | physical limit | Podium CPU | emulators' CPU | benchmark's CPU | \
             the cores' limit |"
        );
        println!("|---|---|---|---|---|---|---|");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let row = |what: &str,
                   wall: Duration,
                   (requests, limit): (u64, Duration),
                   [cpu, emulators, bench]: [Duration; 3]| {
            let all = cpu + emulators + bench;
            println!(
                "| {what} | {:.1} s | {:.1} s ({requests} requests to one BMC) | {:.1} s ({:.1} ms per host) | {:.1} s | {:.1} s | {:.1} s ({:.1} s of CPU on {cores} cores) |",
                wall.as_secs_f64(),
                limit.as_secs_f64(),
                cpu.as_secs_f64(),
                cpu.as_secs_f64() * 1000.0 / hosts as f64,
                emulators.as_secs_f64(),
                bench.as_secs_f64(),
                all.as_secs_f64() / cores as f64,
                all.as_secs_f64(),
            )
        };
        row(
            &format!("register and inspect {hosts} hosts"),
            registered,
            registered_limit,
            [
                podium_registered - podium_before,
                emulators_registered - emulators_before,
                bench_registered - bench_before,
            ],
        );
        row(
            &format!("power on {hosts} hosts"),
            powered,
            powered_limit,
            [
                podium_powered - podium_registered,
                emulators_powered - emulators_registered,
                bench_powered - bench_registered,
            ],
        );
        row(
            &format!("refresh {hosts} hosts (every site's sync)"),
            refreshed,
            refreshed_limit,
            [
                podium_refreshed - podium_powered,
                emulators_refreshed - emulators_powered,
                bench_refreshed - bench_powered,
            ],
        );
        println!();
        println!(
            "The periodic power-state refresh (sync interval {} s): every host read once in \
             {:.0} s, Podium using {:.1} s of CPU, {:.2} ms per host read (the polling of this \
             benchmark included).",
            SYNC_INTERVAL.as_secs(),
            turn.as_secs_f64(),
            turn_cpu.as_secs_f64(),
            turn_cpu.as_secs_f64() * 1000.0 / ids.len() as f64,
        );
        for server in servers {
            server.kill9().await;
        }
        if std::env::var_os("PODIUM_BENCH_IRONIC").is_some() {
            let systems: Vec<FakeSystem> =
                numbers.iter().copied().map(FakeSystem::numbered).collect();
            ironic(&bmcs, &systems, delay_ms).await;
        }
    });
}

/// CPU time a process and its children used so far.
fn tree_cpu(pid: u32) -> Duration {
    let children = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                stat.rfind(')').is_some_and(|end| {
                    stat[end + 2..].split(' ').nth(1) == Some(pid.to_string().as_str())
                })
            })
        });
    std::iter::once(pid)
        .chain(children)
        .filter_map(|p| podium_tests::process_usage(p).map(|(_, cpu)| cpu))
        .sum()
}

/// Asks `ask` of every node, some at once; every one must be accepted.
async fn each<'a, F, Fut>(nodes: &'a [String], what: &str, ask: F)
where
    F: Fn(&'a str) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let failed: Vec<String> = futures::stream::iter(nodes)
        .map(|node| {
            let asked = ask(node);
            async move { asked.await.err().map(|e| format!("{e:#}")) }
        })
        .buffer_unordered(IRONIC_AT_ONCE)
        .filter_map(|e| async move { e })
        .collect()
        .await;
    assert!(failed.is_empty(), "{what}: {failed:?}");
}

/// Requests the benchmark has in flight at Ironic's API at once, as a client script would
/// (at 50, its API stopped accepting connections).
const IRONIC_AT_ONCE: usize = 8;

/// The same work by OpenStack Ironic, against the same BMCs.
async fn ironic(bmcs: &Bmcs, systems: &[FakeSystem], delay_ms: usize) {
    use podium_tests::ironic::Ironic;
    let hosts = systems.len();
    bmcs.power_off_all(systems).await;
    let ironic = Ironic::start(SYNC_INTERVAL).await.expect("starting Ironic");
    let pid = ironic.pid().expect("Ironic's pid");
    println!();
    println!(
        "OpenStack Ironic in the same run (PyPI `ironic` 39.0.0, standalone: one process, \
         SQLite, noauth, `rpc_transport = none`, the `redfish` hardware type), the same {hosts} \
         systems behind the same BMCs"
    );
    println!();
    println!("| work | wall time | physical limit | Ironic CPU | emulators' CPU |");
    println!("|---|---|---|---|---|");
    let row = |what: &str,
               wall: Duration,
               (requests, limit): (u64, Duration),
               cpu: Duration,
               emulators: Duration| {
        println!(
            "| {what} | {:.1} s | {:.1} s ({requests} requests to one BMC) | {:.1} s ({:.1} ms per node) | {:.1} s |",
            wall.as_secs_f64(),
            limit.as_secs_f64(),
            cpu.as_secs_f64(),
            cpu.as_secs_f64() * 1000.0 / hosts as f64,
            emulators.as_secs_f64(),
        )
    };
    let cpu_before = tree_cpu(pid);
    let emulators_before = bmcs.emulators_cpu();

    let start = bmcs.counts().await;
    let started = Instant::now();
    let nodes: Vec<String> = futures::stream::iter(systems.iter().enumerate())
        .map(|(i, system)| {
            let ironic = &ironic;
            async move {
                ironic
                    .node_create(
                        &bmcs.host_url(i),
                        &format!("/redfish/v1/Systems/{}", system.uuid),
                    )
                    .await
                    .expect("enrolling a node")
            }
        })
        .buffered(IRONIC_AT_ONCE)
        .collect()
        .await;
    each(&nodes, "manage", |node| ironic.provision(node, "manage")).await;
    // Listing every node costs Ironic CPU: every 2 s, whatever the number of nodes.
    let poll = Duration::from_secs(2);
    loop {
        let all = ironic.nodes().await.expect("listing nodes");
        if let Some(failed) = all
            .iter()
            .find(|n| n["provision_state"] == "enroll" && !n["last_error"].is_null())
        {
            panic!(
                "a node failed to become manageable: {failed}\n{}",
                ironic.log()
            );
        }
        if all
            .iter()
            .filter(|n| n["provision_state"] == "manageable")
            .count()
            == hosts
        {
            break;
        }
        tokio::time::sleep(poll).await;
    }
    let registered = started.elapsed();
    let registered_limit = limit(&start, &bmcs.counts().await, delay_ms);
    let cpu_registered = tree_cpu(pid);
    let emulators_registered = bmcs.emulators_cpu();
    row(
        &format!("enroll and manage {hosts} nodes"),
        registered,
        registered_limit,
        cpu_registered - cpu_before,
        emulators_registered - emulators_before,
    );

    let start = bmcs.counts().await;
    let started = Instant::now();
    each(&nodes, "power on", |node| ironic.power(node, "power on")).await;
    loop {
        let all = ironic.nodes().await.expect("listing nodes");
        if let Some(failed) = all
            .iter()
            .find(|n| n["target_power_state"].is_null() && !n["last_error"].is_null())
        {
            panic!("a node failed to power on: {failed}\n{}", ironic.log());
        }
        let on = all
            .iter()
            .filter(|n| n["power_state"] == "power on" && n["target_power_state"].is_null())
            .count();
        if on == hosts {
            break;
        }
        tokio::time::sleep(poll).await;
    }
    let powered = started.elapsed();
    let powered_limit = limit(&start, &bmcs.counts().await, delay_ms);
    let cpu_powered = tree_cpu(pid);
    let emulators_powered = bmcs.emulators_cpu();
    row(
        &format!("power on {hosts} nodes"),
        powered,
        powered_limit,
        cpu_powered - cpu_registered,
        emulators_powered - emulators_registered,
    );

    // One turn of the periodic power-state sync: until every BMC was asked again.
    let before = bmcs.counts().await;
    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if bmcs
            .counts()
            .await
            .iter()
            .zip(&before)
            .all(|(now, then)| now > then)
        {
            break;
        }
        assert!(
            started.elapsed() < SYNC_INTERVAL * 10,
            "Ironic's power sync did not read every node in ten intervals"
        );
    }
    let turn = started.elapsed();
    let turn_cpu = tree_cpu(pid) - cpu_powered;
    let peak = podium_tests::process_peak_rss(pid).unwrap_or(0);
    println!();
    println!(
        "Ironic's periodic power-state sync (interval {} s): every node read again {:.0} s after \
         the power-on ended, Ironic using {:.1} s of CPU meanwhile, {:.2} ms per node. Ironic's \
         peak resident memory {:.0} MiB.",
        SYNC_INTERVAL.as_secs(),
        turn.as_secs_f64(),
        turn_cpu.as_secs_f64(),
        turn_cpu.as_secs_f64() * 1000.0 / hosts as f64,
        peak as f64 / 1024.0,
    );
}
