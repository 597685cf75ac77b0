//! `bmc-sim`: the Redfish BMC simulator (`podium_tests::bmc_sim`) in a process of its own, as
//! `BmcFleet` starts it: serves `--bmcs` BMCs numbered from `--first-bmc`, each holding
//! `--systems-per-bmc` systems and answering after `--latency-us` plus up to `--jitter-us`
//! (credentials from `BMC_SIM_USER` / `BMC_SIM_PASSWORD`, HTTPS with `BMC_SIM_TLS_CERT` /
//! `BMC_SIM_TLS_KEY`, PEM, if set, or each with a certificate of its own with
//! `--own-certificates`); prints one line of JSON with
//! its control port and the BMCs' ports, and exits when its standard input closes. One thread:
//! a process is a core's worth of BMCs, and its CPU time is theirs alone.

use std::sync::Arc;
use std::time::Duration;

use podium_tests::bmc_sim::{BmcSim, SimConfig, SimReady, SimTls, serve_control};
use tokio::io::AsyncReadExt;

fn arg(args: &[String], name: &str) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("bmc-sim: {name} N is required"))
}

/// A BMC is a listener and, under load, a connection: thousands of them need the soft limit of
/// open files raised to the hard one (the usual soft limit is 1,024).
fn raise_open_files_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    raise_open_files_limit();
    let args: Vec<String> = std::env::args().collect();
    let config = SimConfig {
        bmcs: arg(&args, "--bmcs"),
        systems_per_bmc: arg(&args, "--systems-per-bmc"),
        latency: Duration::from_micros(arg(&args, "--latency-us") as u64),
        jitter: Duration::from_micros(arg(&args, "--jitter-us") as u64),
        basic_auth: std::env::var("BMC_SIM_USER")
            .ok()
            .zip(std::env::var("BMC_SIM_PASSWORD").ok()),
        first_bmc: arg(&args, "--first-bmc"),
        tls: std::env::var("BMC_SIM_TLS_CERT")
            .ok()
            .zip(std::env::var("BMC_SIM_TLS_KEY").ok())
            .map(|(cert_pem, key_pem)| SimTls { cert_pem, key_pem }),
        own_certificates: args.iter().any(|a| a == "--own-certificates"),
    };
    let sim = Arc::new(BmcSim::start(config).await);
    let control = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind the control port");
    let ready = SimReady {
        control: control.local_addr().expect("addr").port(),
        ports: sim.ports().to_vec(),
        certs: sim.certs().to_vec(),
    };
    println!("{}", serde_json::to_string(&ready).expect("JSON"));
    tokio::spawn(serve_control(sim, control));
    // Until the parent closes our standard input (or dies).
    let mut rest = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut rest).await;
}
