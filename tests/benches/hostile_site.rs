//! A hostile neighbour: one site's driver spins the CPU in every power action, and another
//! site's power-on and the process's `/livez` are timed beside it, idle and under attack; then
//! the process's memory after the attack.
//!
//! - Site `calm`: the bundled Redfish driver in front of the BMC simulator (one system).
//! - Site `hostile`: the `faulty-exchange` guest uploaded (`"fault": "spin-power"`: its hosts
//!   register and inspect as any, but each `set-power` loops once its first request is
//!   answered), `ATTACK` hosts behind a local server that answers 200 to everything. The attack
//!   is a power-on of every one of them at once: `ATTACK` calls spinning until their deadline
//!   (`--plugin-timeout 10`).
//!
//! Measured: the calm site's power-on (the POST until its operation succeeded), `ROUNDS` times
//! idle and `ROUNDS` times under attack; `/livez` asked every 20 ms throughout each phase; the
//! time to post the attack's actions; Podium's resident memory before, at its peak and 15 s
//! after the attack ended.
//!
//! The calm site's BMC answers every request after `DELAY_MS`; `LANES` is `--plugin-lanes`
//! (0: the default, one fewer than the machine's threads).
//!
//! `cargo bench -p podium-tests --bench hostile_site [-- ATTACK ROUNDS DELAY_MS LANES]`;
//! defaults 200, 10, 0, 0.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use podium_tests::bmc_sim::{BmcSim, SimConfig};
use podium_tests::{Client, ProcessServer};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

fn main() {
    let [attack, rounds, delay_ms, lanes] = podium_tests::bench_args([200, 10, 0, 0]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let sim = BmcSim::start(SimConfig {
            bmcs: 1,
            systems_per_bmc: 1,
            latency: Duration::from_millis(delay_ms as u64),
            jitter: Duration::ZERO,
            basic_auth: None,
            first_bmc: 0,
            tls: None,
            own_certificates: false,
        })
        .await;
        let anything = answer_anything().await;
        let dir = tempfile::tempdir().unwrap();
        let lanes = lanes.to_string();
        let mut options = vec!["--plugin-timeout", "10"];
        if lanes != "0" {
            options.extend(["--plugin-lanes", lanes.as_str()]);
        }
        let server = ProcessServer::start_logging(BIN, dir.path(), None, "info", &options).await;
        let admin = server.admin();
        admin
            .upload_plugin(podium_tests::guests::FAULTY_EXCHANGE)
            .await;

        let calm = admin
            .created(
                "/v1/pod_managers",
                json!({"name": "calm", "url": sim.url(0)}),
            )
            .await;
        let calm = calm.body["uuid"].as_str().unwrap().to_owned();
        let hostile = admin
            .created(
                "/v1/pod_managers",
                json!({"name": "hostile", "url": anything,
                       "driver": {"name": "faulty-exchange",
                                  "config": {"fault": "spin-power", "systems": attack}}}),
            )
            .await;
        let hostile = hostile.body["uuid"].as_str().unwrap().to_owned();
        let calm_host = available(&admin, &calm, 1).await.remove(0);
        let hostile_hosts = available(&admin, &hostile, attack).await;
        let rss = |what: &str| {
            let (kib, _) = server.usage().expect("podium's usage");
            println!("resident memory {what}: {:.0} MiB", kib as f64 / 1024.0);
            kib
        };

        let livez = Livez::start(server.client(None));
        let idle = power_ons(&admin, &calm_host, rounds).await;
        let idle_livez = livez.take();
        let before = rss("before the attack");
        server.reset_peak().expect("resetting podium's peak memory");

        let started = Instant::now();
        let posted: Vec<_> = futures::future::join_all(hostile_hosts.iter().map(|id| {
            let admin = admin.clone();
            async move {
                admin
                    .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
                    .await
            }
        }))
        .await;
        let posting = started.elapsed();
        for reply in &posted {
            assert!(reply.status.is_success(), "{}", reply.text);
        }
        livez.take();
        let attacked = power_ons(&admin, &calm_host, rounds).await;
        let attacked_livez = livez.take();
        // Every spinning call ends at its deadline; then the memory it took should go back.
        let ops: Vec<String> = posted
            .iter()
            .map(|r| r.body["id"].as_str().unwrap().to_owned())
            .collect();
        for op in &ops {
            finished(&admin, op).await;
        }
        let peak = server.peak_rss().unwrap_or(0);
        println!("resident memory at the peak: {:.0} MiB", peak as f64 / 1024.0);
        tokio::time::sleep(Duration::from_secs(15)).await;
        let after = rss("15 s after the attack");

        let median = |v: &[Duration]| {
            let mut v = v.to_vec();
            v.sort();
            v[v.len() / 2]
        };
        println!();
        println!("| | calm site's power-on, median (max) | `/livez`, p99 (max) |");
        println!("|---|---|---|");
        println!(
            "| idle | {:.3} s ({:.3} s) | {:.1} ms ({:.1} ms) |",
            median(&idle).as_secs_f64(),
            idle.iter().max().unwrap().as_secs_f64(),
            ms(idle_livez.p99()),
            ms(idle_livez.max()),
        );
        println!(
            "| {attack} power actions spinning at the hostile site | {:.3} s ({:.3} s) | {:.1} ms ({:.1} ms) |",
            median(&attacked).as_secs_f64(),
            attacked.iter().max().unwrap().as_secs_f64(),
            ms(attacked_livez.p99()),
            ms(attacked_livez.max()),
        );
        println!();
        println!(
            "posting the {attack} actions: {:.2} s; resident memory {:.0} MiB before, {:.0} MiB at the peak, {:.0} MiB 15 s after",
            posting.as_secs_f64(),
            before as f64 / 1024.0,
            peak as f64 / 1024.0,
            after as f64 / 1024.0,
        );
        drop(server);
    });
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A server on 127.0.0.1 that answers 200 to every request: the hostile site's "BMC".
async fn answer_anything() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(|| async { "{}" });
    tokio::spawn(async move {
        axum::serve(listener, app)
            .await
            .expect("the answering server");
    });
    url
}

/// The ids of a pod manager's hosts once `count` are available.
async fn available(admin: &Client, pod_manager: &str, count: usize) -> Vec<String> {
    loop {
        let hosts = admin
            .hosts_all(&format!("&pod_manager={pod_manager}&state=available"))
            .await;
        if hosts.len() >= count {
            return hosts.iter().map(|h| h.id.to_string()).collect();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `rounds` power-ons of `host`, each timed from the POST until its operation succeeded.
async fn power_ons(admin: &Client, host: &str, rounds: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        let reply = admin
            .post(&format!("/v1/hosts/{host}/power"), json!({"action": "on"}))
            .await;
        assert!(reply.status.is_success(), "{}", reply.text);
        let state = finished(admin, reply.body["id"].as_str().unwrap()).await;
        assert_eq!(state, "succeeded", "the calm site's power-on");
        times.push(started.elapsed());
    }
    times
}

/// The state an operation ended in, polled every 5 ms.
async fn finished(admin: &Client, id: &str) -> String {
    loop {
        let op = admin.get(&format!("/v1/operations/{id}")).await;
        let state = op.body["status"].as_str().unwrap_or_default().to_owned();
        if state == "succeeded" || state == "failed" {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `/livez` asked every 20 ms in the background; `take` answers the latencies since the last.
struct Livez {
    seen: Arc<Mutex<Vec<Duration>>>,
}

struct Latencies(Vec<Duration>);

impl Latencies {
    fn p99(&self) -> Duration {
        self.0[(self.0.len() * 99 / 100).min(self.0.len() - 1)]
    }
    fn max(&self) -> Duration {
        *self.0.last().unwrap()
    }
}

impl Livez {
    fn start(client: Client) -> Livez {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        tokio::spawn(async move {
            loop {
                let started = Instant::now();
                let reply = client.get("/livez").await;
                assert!(reply.status.is_success(), "{}", reply.text);
                into.lock().unwrap().push(started.elapsed());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        Livez { seen }
    }

    fn take(&self) -> Latencies {
        let mut v = std::mem::take(&mut *self.seen.lock().unwrap());
        v.sort();
        if v.is_empty() {
            v.push(Duration::ZERO);
        }
        Latencies(v)
    }
}
