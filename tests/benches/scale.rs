//! Scale: pod managers of many systems each (a Redfish service in front of a rack or a site).
//! Measures the time from registering the pod managers until every system is a host that
//! registered and was inspected (`available`), then the time to power on a share of them, then a
//! full sync of every pod manager at once (each reads its whole service again); beside each, the
//! CPU time Podium used and the BMCs used, and Podium's peak resident memory, so the figures show
//! who the wall time was spent waiting on.
//!
//! The services are sushy-tools emulators (one process per pod manager, every system in
//! memory), or with `PODIUM_BENCH_BMCS=simulator` the scale simulator's
//! (`podium_tests::bmc_sim`: each pod manager a BMC of its own port holding `SYSTEMS` systems,
//! every request answered after `DELAY_MS`, a few microseconds of CPU each, in processes of its
//! own): past a few thousand systems, sushy-tools' CPU, not Podium, sets every wall time.
//! `DELAY_MS` is the simulator's only.
//!
//! A sync's physical limit is its chain of requests one after another (the service root, the
//! collections, their members, each member's own collections and theirs): a sync of a thousand
//! systems fans each round out, so it cannot take less than a sync of one. It is measured as
//! the sync of one more pod manager of a single system at the same delay, alone, before the
//! others are registered.
//!
//! `SERVICE_LIMIT` is the pod managers' `limits.service` (how many operations of one run at
//! once) and `REQUEST_LIMIT` their `limits.requests` (how many requests one call, a sync, sends
//! the service at once); 0 leaves the defaults (8 and 16), which suit a single BMC.
//!
//! With `PODIUM_TEST_DATABASE=postgres`, on PostgreSQL, and then `PROCESSES` Podium processes
//! share the database and the work (the pod managers created through each in turn); their CPU is
//! added up, their memory is the most any one of them held.
//!
//! `cargo bench -p podium-tests --bench scale [-- POD_MANAGERS SYSTEMS POWER_ON DELAY_MS
//! PROCESSES SERVICE_LIMIT REQUEST_LIMIT]`; defaults 10, 1000, 1000 (100 per pod manager), 0,
//! 1, 0, 0.

use std::time::{Duration, Instant};

use podium_tests::bmc_sim::{BmcFleet, BmcSim, SimConfig};
use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{Client, ProcessServer, process_usage};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
const BMC_SIM: &str = env!("CARGO_BIN_EXE_bmc-sim");

/// What answers for the pod managers.
enum Services {
    /// One sushy-tools process a pod manager.
    Emulated(Vec<Sushy>),
    /// The simulator: one BMC a pod manager, in processes of their own.
    Simulated(BmcFleet),
}

impl Services {
    fn url(&self, i: usize) -> String {
        match self {
            Services::Emulated(emulators) => emulators[i].url(),
            Services::Simulated(fleet) => fleet.url(i),
        }
    }

    /// CPU time used so far by the processes answering.
    fn cpu(&self) -> Duration {
        let pids: Vec<u32> = match self {
            Services::Emulated(emulators) => emulators.iter().filter_map(Sushy::pid).collect(),
            Services::Simulated(fleet) => fleet.pids(),
        };
        pids.into_iter()
            .filter_map(process_usage)
            .map(|(_, cpu)| cpu)
            .sum()
    }

    fn describe(&self, systems: usize, delay_ms: usize) -> String {
        match self {
            Services::Emulated(emulators) => format!(
                "{systems} systems each (sushy-tools, {} processes, one a pod manager)",
                emulators.len()
            ),
            Services::Simulated(fleet) => format!(
                "{systems} systems each (the BMC simulator, {delay_ms} ms a request, in {} \
                 processes of its own)",
                fleet.pids().len()
            ),
        }
    }
}

/// How many hosts `/metrics` counts (`podium_hosts`, read from the database at each scrape)
/// whose labels include every one of `labels`: the benchmark's polls cost Podium a few grouped
/// counts, not a listing of 100,000 hosts.
async fn hosts_counted(admin: &Client, labels: &[&str]) -> u64 {
    let metrics = admin.get("/metrics").await;
    assert!(metrics.status.is_success(), "{}", metrics.text);
    metrics
        .text
        .lines()
        .filter_map(|line| line.strip_prefix("podium_hosts{"))
        .filter_map(|line| line.split_once("} "))
        .filter(|(set, _)| labels.iter().all(|l| set.split(',').any(|s| s == *l)))
        .map(|(_, n)| n.trim().parse::<f64>().expect("a gauge's value") as u64)
        .sum()
}

/// Polls until `done` (checked every second), tracking the servers' peak resident memory.
async fn wait_for(
    servers: &[ProcessServer],
    peak: &mut u64,
    what: &str,
    mut done: impl AsyncFnMut() -> bool,
) {
    let give_up = Instant::now() + Duration::from_secs(3 * 3600);
    loop {
        for server in servers {
            if let Some((rss, _)) = server.usage() {
                *peak = (*peak).max(rss);
            }
        }
        if done().await {
            return;
        }
        assert!(Instant::now() < give_up, "{what}: not within three hours");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Creates a pod manager and returns its uuid.
async fn pod_manager(admin: &Client, name: &str, url: &str, limits: [usize; 2]) -> String {
    let limit = |n: usize| (n > 0).then_some(n);
    let limits = json!({"service": limit(limits[0]), "requests": limit(limits[1])});
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": name, "url": url, "limits": limits}),
        )
        .await;
    pm.body["uuid"].as_str().unwrap().to_owned()
}

fn main() {
    let [
        pods,
        systems,
        power_on,
        delay_ms,
        processes,
        service_limit,
        request_limit,
    ] = podium_tests::bench_args([10, 1000, 1000, 0, 1, 0, 0]);
    let power_on = power_on.min(pods * systems);
    let processes = processes.max(1);
    let simulated = std::env::var("PODIUM_BENCH_BMCS").is_ok_and(|v| v == "simulator");
    assert!(
        simulated || delay_ms == 0,
        "DELAY_MS is the simulator's: set PODIUM_BENCH_BMCS=simulator"
    );
    let delay = Duration::from_millis(delay_ms as u64);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let services = if simulated {
            Services::Simulated(
                BmcFleet::start(
                    BMC_SIM,
                    SimConfig {
                        bmcs: pods,
                        latency: delay,
                        ..SimConfig::with_systems(systems)
                    },
                )
                .await,
            )
        } else {
            let mut emulators = Vec::new();
            for _ in 0..pods {
                emulators.push(
                    Sushy::start(SushyConfig::with_systems(systems as u32))
                        .await
                        .expect("an emulator"),
                );
            }
            Services::Emulated(emulators)
        };
        let database = podium_tests::PostgresDatabase::for_this_run().await;
        assert!(
            processes == 1 || database.is_some(),
            "several processes share a PostgreSQL database: set PODIUM_TEST_DATABASE=postgres"
        );
        let url = database.as_ref().map(|d| d.url.as_str());
        let mut servers = Vec::new();
        let mut data = Vec::new();
        for _ in 0..processes {
            let dir = tempfile::tempdir().unwrap();
            servers.push(ProcessServer::start(BIN, dir.path(), url).await);
            data.push(dir);
        }
        let admins: Vec<Client> = servers.iter().map(ProcessServer::admin).collect();
        let admin = &admins[0];
        let podium_cpu = || -> Duration {
            servers
                .iter()
                .map(|s| s.usage().expect("a Podium process's usage").1)
                .sum()
        };
        let mut peak = 0;

        // The chain: a pod manager of one system at the same delay, synced alone.
        let single = BmcSim::start(SimConfig {
            latency: delay,
            ..SimConfig::with_systems(1)
        })
        .await;
        let chain_pm = pod_manager(admin, "chain", &single.url(0), [0, 0]).await;
        wait_for(&servers, &mut peak, "the one host available", async || {
            hosts_counted(admin, &["kind=\"system\"", "state=\"available\""]).await == 1
        })
        .await;
        let started = Instant::now();
        admins[0].sync_all(std::slice::from_ref(&chain_pm)).await;
        let chain = started.elapsed();

        let podium_before = podium_cpu();
        let services_before = services.cpu();

        // Register every pod manager: each is probed, synced, and its hosts registered and
        // inspected.
        let started = Instant::now();
        let mut pms = Vec::new();
        for i in 0..pods {
            let admin = &admins[i % processes];
            let limits = [service_limit, request_limit];
            pms.push(pod_manager(admin, &format!("site-{i}"), &services.url(i), limits).await);
        }
        let total = (pods * systems) as u64;
        wait_for(&servers, &mut peak, "every host available", async || {
            hosts_counted(admin, &["kind=\"system\"", "state=\"available\""]).await == total + 1
        })
        .await;
        let registered = started.elapsed();
        let podium_registered = podium_cpu();
        let services_registered = services.cpu();

        // Power on `power_on` hosts, spread over the pod managers.
        let mut chosen = Vec::new();
        for pm in &pms {
            let page = admin
                .get(&format!(
                    "/v1/hosts?pod_manager={pm}&state=available&limit={}",
                    (power_on / pods).max(1)
                ))
                .await;
            assert!(page.status.is_success(), "{}", page.text);
            chosen.extend(
                page.body["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .take(power_on / pods)
                    .map(|h| h["id"].as_str().unwrap().to_owned()),
            );
        }
        let on_before = hosts_counted(admin, &["power_state=\"on\""]).await;
        let started = Instant::now();
        for (i, id) in chosen.iter().enumerate() {
            let op = admins[i % processes]
                .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
                .await;
            assert!(op.status.is_success(), "{}", op.text);
        }
        let wanted = on_before + chosen.len() as u64;
        wait_for(&servers, &mut peak, "the hosts powered on", async || {
            hosts_counted(admin, &["power_state=\"on\""]).await >= wanted
        })
        .await;
        let powered = started.elapsed();
        let podium_powered = podium_cpu();
        let services_powered = services.cpu();

        // A full sync of every pod manager at once.
        let started = Instant::now();
        admins[0].sync_all(&pms).await;
        let synced = started.elapsed();
        let podium_synced = podium_cpu();
        let services_synced = services.cpu();
        for server in &servers {
            if let Some(rss) = server.peak_rss() {
                peak = peak.max(rss);
            }
        }

        let (database, peak_of) = match (url, processes) {
            (None, _) => ("SQLite".to_owned(), "Podium's"),
            (Some(_), 1) => ("PostgreSQL".to_owned(), "Podium's"),
            (Some(_), n) => (
                format!("PostgreSQL, {n} Podium processes sharing the work"),
                "each Podium process's",
            ),
        };
        let limits = format!(
            "{} operations and {} requests a call at once a pod manager",
            match service_limit {
                0 => "the default 8".to_owned(),
                n => n.to_string(),
            },
            match request_limit {
                0 => "the default 16".to_owned(),
                n => n.to_string(),
            },
        );
        println!(
            "{pods} pod managers of {}, {limits}; {database}; {peak_of} peak resident memory \
             {:.0} MiB",
            services.describe(systems, delay_ms),
            peak as f64 / 1024.0
        );
        println!();
        println!(
            "| work | wall time | physical limit | Podium CPU (of wall) | BMCs' CPU (of wall) |"
        );
        println!("|---|---|---|---|---|");
        let row = |what: &str,
                   hosts: u64,
                   wall: Duration,
                   limit: Option<Duration>,
                   podium: Duration,
                   bmcs: Duration| {
            println!(
                "| {what} | {:.1} s | {} | {:.1} s ({:.0} %, {:.2} ms a host) | {:.1} s ({:.0} %) |",
                wall.as_secs_f64(),
                limit.map_or("–".to_owned(), |l| format!(
                    "{:.1} s (a sync of one system)",
                    l.as_secs_f64()
                )),
                podium.as_secs_f64(),
                100.0 * podium.as_secs_f64() / wall.as_secs_f64(),
                podium.as_secs_f64() * 1000.0 / hosts.max(1) as f64,
                bmcs.as_secs_f64(),
                100.0 * bmcs.as_secs_f64() / wall.as_secs_f64(),
            )
        };
        row(
            &format!("register {pods} pod managers: {total} hosts registered and inspected"),
            total,
            registered,
            None,
            podium_registered - podium_before,
            services_registered - services_before,
        );
        row(
            &format!("power on {} hosts", chosen.len()),
            chosen.len() as u64,
            powered,
            None,
            podium_powered - podium_registered,
            services_powered - services_registered,
        );
        row(
            &format!("sync {pods} pod managers at once ({total} systems read again)"),
            total,
            synced,
            simulated.then_some(chain),
            podium_synced - podium_powered,
            services_synced - services_powered,
        );
        for server in servers {
            server.kill9().await;
        }
    });
}
