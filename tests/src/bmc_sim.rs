//! `BmcSim`: a Redfish BMC simulator for scale, at about 20 µs of CPU a request where sushy-tools
//! spends 2.5 ms (BENCHMARKS.md), so a benchmark of thousands of BMCs measures Podium, not its
//! peers.
//!
//! It is not a peer that proves anything correct: it answers what Podium's Redfish driver uses,
//! in the shapes sushy-tools' fake driver answers them (the payloads captured from it in
//! `plugins/redfish/tests/fixtures/`), and the driver's conformance tests
//! (`tests/all/redfish.rs`) run against both, as does a walk comparing every resource the driver
//! reads, so it does not drift from sushy-tools unseen in what the driver reads. What it answers
//! otherwise, none of which the driver reads or sends: a wrong method on a known path is a 404
//! (sushy-tools: 405); `InsertMedia` ignores `Inserted`.
//!
//! Served over HTTP, or HTTPS with a certificate of the caller's ([`SimTls`]): the service
//! root; `Systems`, a system (`GET`, `PATCH` of `Boot`), its `Reset`
//! action, `EthernetInterfaces`, `VirtualMedia` (`Cd`, `Floppy`) with `InsertMedia` and
//! `EjectMedia`; `Managers` (one per system, linking its media); `Chassis` (one per BMC, holding
//! its systems). Errors as sushy-tools writes them (`Base.1.0.GeneralError`), 401 without the
//! credentials (the service root excepted), 404 for anything else.
//!
//! Each simulated BMC listens on its own 127.0.0.1 port and holds `systems_per_bmc` systems,
//! numbered across BMCs as [`FakeSystem::numbered`] numbers sushy-tools' (BMC `b`'s `i`-th system
//! is `b * systems_per_bmc + i + 1`). Every answer waits `latency` plus up to `jitter` first.
//! Power changes show at once, as the sushy-tools wrapper's do.
//!
//! [`BmcSim`] runs in the caller's process; [`BmcFleet`] runs it in processes of its own
//! (`bmc-sim`, `src/bin/bmc-sim.rs`), a few thousand BMCs each, so that ten thousand BMCs with
//! a connection open to each fit the file descriptors a process may hold, and their CPU is
//! measured apart from the benchmark's. Unlike sushy-tools, it does not
//! download an image it is told to insert (a BMC fetching thousands of images would measure the
//! image server): it records the URL.

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, StatusCode, header};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::sushy::FakeSystem;

type Response = hyper::Response<Full<Bytes>>;

/// What a [`BmcSim`] simulates.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// BMCs, each on its own port.
    pub bmcs: usize,
    /// Systems behind each BMC.
    pub systems_per_bmc: usize,
    /// How long every answer waits.
    pub latency: Duration,
    /// At most this much longer, drawn for each request.
    pub jitter: Duration,
    /// HTTP basic auth (user, password) every BMC requires; None: none.
    pub basic_auth: Option<(String, String)>,
    /// The number of the first BMC (its systems numbered from
    /// `first_bmc * systems_per_bmc + 1`): a simulator in several processes numbers each
    /// process's BMCs after the last one's.
    pub first_bmc: usize,
    /// Serve HTTPS with this identity instead of HTTP.
    pub tls: Option<SimTls>,
    /// Serve HTTPS, each BMC with a self-signed certificate of its own (as BMCs out of the box:
    /// a fleet whose hosts each trust their own BMC's certificate); `tls` is then unused.
    pub own_certificates: bool,
}

/// A certificate and its key, PEM.
#[derive(Debug, Clone)]
pub struct SimTls {
    pub cert_pem: String,
    pub key_pem: String,
}

impl SimTls {
    /// A fresh self-signed certificate for 127.0.0.1 and localhost.
    pub fn generate() -> SimTls {
        let rcgen::CertifiedKey { cert, signing_key } = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
        ])
        .expect("a self-signed certificate");
        SimTls {
            cert_pem: cert.pem(),
            key_pem: signing_key.serialize_pem(),
        }
    }

    fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs = CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("the certificate");
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).expect("the key");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("a server configuration");
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }
}

impl SimConfig {
    /// One BMC holding `systems` systems, answering at once over HTTP, no auth.
    pub fn with_systems(systems: usize) -> SimConfig {
        SimConfig {
            bmcs: 1,
            systems_per_bmc: systems,
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            basic_auth: None,
            first_bmc: 0,
            tls: None,
            own_certificates: false,
        }
    }
}

/// A running simulator: its BMCs stop when it is dropped (or one by one, [`BmcSim::stop`]).
#[derive(Debug)]
pub struct BmcSim {
    sim: Arc<Sim>,
    ports: Vec<u16>,
    /// The certificate each BMC serves, where it serves HTTPS.
    certs: Vec<Option<String>>,
    stops: Vec<watch::Sender<bool>>,
}

#[derive(Debug)]
struct Sim {
    config: SimConfig,
    /// Each BMC's systems.
    bmcs: Vec<Mutex<Vec<SimSystem>>>,
    /// The expected `Authorization` header.
    authorization: Option<String>,
    /// Requests each BMC was sent.
    requests: Vec<AtomicU64>,
}

#[derive(Debug, Clone)]
struct SimSystem {
    fake: FakeSystem,
    /// The BMC's first system, whose manager manages the chassis (as sushy-tools' first).
    first: bool,
    power: &'static str,
    boot_target: String,
    boot_mode: String,
    /// The `Cd` and `Floppy` slots.
    media: [Slot; 2],
}

#[derive(Debug, Clone, Default)]
struct Slot {
    image: Option<String>,
    write_protected: bool,
}

const SLOTS: [(&str, &str, &[&str]); 2] = [
    ("Cd", "Virtual CD", &["CD", "DVD"]),
    ("Floppy", "Virtual Removable Media", &["Floppy", "USBStick"]),
];

/// The one chassis of every BMC (sushy-tools' default chassis id).
const CHASSIS: &str = "15693887-7984-9484-3272-842188918912";

/// The largest request body read.
const BODY_LIMIT: usize = 1 << 20;

impl BmcSim {
    /// Binds every BMC's port and serves them.
    pub async fn start(config: SimConfig) -> BmcSim {
        let mut listeners = Vec::with_capacity(config.bmcs);
        for _ in 0..config.bmcs {
            listeners.push(
                tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                    .await
                    .expect("bind a simulated BMC's port"),
            );
        }
        let first = config.first_bmc;
        let bmcs = (first..first + config.bmcs)
            .map(|bmc| {
                Mutex::new(
                    (0..config.systems_per_bmc)
                        .map(|i| SimSystem::new(bmc * config.systems_per_bmc + i + 1, i == 0))
                        .collect(),
                )
            })
            .collect();
        let authorization = config.basic_auth.as_ref().map(|(user, password)| {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            format!("Basic {token}")
        });
        let identities: Vec<Option<SimTls>> = (0..config.bmcs)
            .map(|_| match (&config.tls, config.own_certificates) {
                (_, true) => Some(SimTls::generate()),
                (tls, false) => tls.clone(),
            })
            .collect();
        let shared = config.tls.as_ref().map(SimTls::acceptor);
        let sim = Arc::new(Sim {
            requests: (0..config.bmcs).map(|_| AtomicU64::new(0)).collect(),
            config,
            bmcs,
            authorization,
        });
        let mut ports = Vec::with_capacity(listeners.len());
        let mut stops = Vec::with_capacity(listeners.len());
        for (bmc, listener) in listeners.into_iter().enumerate() {
            ports.push(listener.local_addr().expect("addr").port());
            let (stop, stopped) = watch::channel(false);
            stops.push(stop);
            let acceptor = match &identities[bmc] {
                Some(own) if sim.config.own_certificates => Some(own.acceptor()),
                _ => shared.clone(),
            };
            tokio::spawn(serve(sim.clone(), bmc, listener, acceptor, stopped));
        }
        let certs = identities
            .into_iter()
            .map(|tls| tls.map(|t| t.cert_pem))
            .collect();
        BmcSim {
            sim,
            ports,
            certs,
            stops,
        }
    }

    /// BMC `bmc`'s base URL.
    pub fn url(&self, bmc: usize) -> String {
        url(self.ports[bmc], self.cert_pem(bmc))
    }

    /// The certificate BMC `bmc` serves, where it serves HTTPS.
    pub fn cert_pem(&self, bmc: usize) -> Option<&str> {
        self.certs[bmc].as_deref()
    }

    /// Every BMC's certificate, in order, where they serve HTTPS.
    pub fn certs(&self) -> &[Option<String>] {
        &self.certs
    }

    /// Every BMC's port, in order.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// Requests each BMC was sent so far (answered or refused).
    pub fn requests(&self) -> Vec<u64> {
        self.sim
            .requests
            .iter()
            .map(|r| r.load(Ordering::Acquire))
            .collect()
    }

    /// GETs `path` from BMC `bmc` directly (with the credentials), so a test can check what the
    /// BMC itself reports. Fails on a non-2xx answer.
    pub async fn get_json(&self, bmc: usize, path: &str) -> anyhow::Result<Value> {
        let mut client = reqwest::Client::builder();
        if let Some(pem) = self.cert_pem(bmc) {
            client = client.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes())?);
        }
        let mut request = client.build()?.get(format!("{}{path}", self.url(bmc)));
        if let Some((user, password)) = &self.sim.config.basic_auth {
            request = request.basic_auth(user, Some(password));
        }
        let response = request.send().await?;
        let status = response.status();
        let body = response.text().await?;
        anyhow::ensure!(status.is_success(), "GET {path}: {status}: {body}");
        Ok(serde_json::from_str(&body)?)
    }

    /// Powers every system off, at once and without a request (a benchmark's reset between two
    /// runs).
    pub fn power_off_all(&self) {
        for bmc in &self.sim.bmcs {
            for system in bmc.lock().expect("not poisoned").iter_mut() {
                system.power = "Off";
            }
        }
    }

    /// Stops BMC `bmc`: its port closes, and so does every connection open to it.
    pub fn stop(&mut self, bmc: usize) {
        let _ = self.stops[bmc].send(true);
    }
}

/// The base URL of a BMC on `port`: HTTPS where it serves a certificate.
fn url(port: u16, cert_pem: Option<&str>) -> String {
    let scheme = if cert_pem.is_some() { "https" } else { "http" };
    format!("{scheme}://127.0.0.1:{port}")
}

/// Until the BMC is stopped (or its simulator dropped).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// Accepts BMC `bmc`'s connections, each served (over TLS where there is an acceptor) until it
/// closes or the BMC stops.
async fn serve(
    sim: Arc<Sim>,
    bmc: usize,
    listener: tokio::net::TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, most likely: wait for some to close.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = stopped(&mut stop) => return,
        };
        let (sim, acceptor, stop) = (sim.clone(), acceptor.clone(), stop.clone());
        tokio::spawn(async move {
            match acceptor {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        serve_connection(sim, bmc, stream, stop).await;
                    }
                }
                None => serve_connection(sim, bmc, stream, stop).await,
            }
        });
    }
}

/// Serves one connection to BMC `bmc` until it closes or the BMC stops (first: a request already
/// read is not answered once the BMC is stopped).
async fn serve_connection<S>(sim: Arc<Sim>, bmc: usize, stream: S, mut stop: watch::Receiver<bool>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| {
        let sim = sim.clone();
        async move { Ok::<_, Infallible>(sim.answer(bmc, request).await) }
    });
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        biased;
        () = stopped(&mut stop) => {}
        _ = connection => {}
    }
}

impl Sim {
    /// Counts the request, waits the BMC's latency, checks the credentials, answers.
    async fn answer(&self, bmc: usize, request: hyper::Request<Incoming>) -> Response {
        self.requests[bmc].fetch_add(1, Ordering::AcqRel);
        let jitter = self.config.jitter.as_micros() as u64;
        let wait = self.config.latency + Duration::from_micros(fastrand::u64(..=jitter));
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().trim_end_matches('/');
        // sushy-tools asks no credentials for the service root and what leads to it.
        if let Some(expected) = &self.authorization
            && !matches!(path, "" | "/redfish" | "/redfish/v1")
            && parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                != Some(expected.as_str())
        {
            return error(StatusCode::UNAUTHORIZED, "Authentication failed");
        }
        let Ok(body) = Limited::new(body, BODY_LIMIT).collect().await else {
            return error(StatusCode::PAYLOAD_TOO_LARGE, "Request too large");
        };
        let body = body.to_bytes();
        let segments: Vec<&str> = path.split('/').skip(1).collect();
        let get = parts.method == Method::GET;
        let mut systems = self.bmcs[bmc].lock().expect("not poisoned");
        match segments.as_slice() {
            ["redfish", "v1"] if get => service_root(),
            ["redfish", "v1", "Systems"] if get => collection(
                "ComputerSystemCollection",
                "Computer System Collection",
                "/redfish/v1/Systems",
                systems.iter().map(SimSystem::path),
            ),
            ["redfish", "v1", "Managers"] if get => collection(
                "ManagerCollection",
                "Manager Collection",
                "/redfish/v1/Managers",
                systems.iter().map(SimSystem::manager_path),
            ),
            ["redfish", "v1", "Chassis"] if get => collection(
                "ChassisCollection",
                "Chassis Collection",
                "/redfish/v1/Chassis",
                std::iter::once(format!("/redfish/v1/Chassis/{CHASSIS}")),
            ),
            ["redfish", "v1", "Chassis", CHASSIS] if get => chassis(&systems),
            [
                "redfish",
                "v1",
                kind @ ("Systems" | "Managers"),
                id,
                rest @ ..,
            ] => {
                let Some(system) = systems.iter_mut().find(|s| s.fake.uuid == *id) else {
                    return not_found();
                };
                match (*kind, rest) {
                    ("Systems", rest) => system.resource(&parts.method, rest, &body),
                    ("Managers", []) if get => system.manager(),
                    _ => not_found(),
                }
            }
            _ => not_found(),
        }
    }
}

impl SimSystem {
    fn new(n: usize, first: bool) -> SimSystem {
        SimSystem {
            fake: FakeSystem::numbered(n as u32),
            first,
            power: "Off",
            boot_target: "Hdd".into(),
            boot_mode: "UEFI".into(),
            media: Default::default(),
        }
    }

    fn path(&self) -> String {
        format!("/redfish/v1/Systems/{}", self.fake.uuid)
    }

    fn manager_path(&self) -> String {
        format!("/redfish/v1/Managers/{}", self.fake.uuid)
    }

    /// The system itself and what lies under its path.
    fn resource(&mut self, method: &Method, rest: &[&str], body: &[u8]) -> Response {
        let path = self.path();
        match (method, rest) {
            (&Method::GET, []) => self.view(),
            (&Method::PATCH, []) => self.patch(body),
            (&Method::POST, ["Actions", "ComputerSystem.Reset"]) => self.reset(body),
            (&Method::GET, ["EthernetInterfaces"]) => collection(
                "EthernetInterfaceCollection",
                "Ethernet Interface Collection",
                &format!("{path}/EthernetInterfaces"),
                (self.fake.nics.iter()).map(|mac| format!("{path}/EthernetInterfaces/{mac}")),
            ),
            (&Method::GET, ["EthernetInterfaces", nic]) => self.nic(nic),
            (&Method::GET, ["VirtualMedia"]) => collection(
                "VirtualMediaCollection",
                "Virtual Media Services",
                &format!("{path}/VirtualMedia"),
                SLOTS
                    .iter()
                    .map(|(slot, _, _)| format!("{path}/VirtualMedia/{slot}")),
            ),
            (method, ["VirtualMedia", slot, action @ ..]) => {
                let Some(i) = SLOTS.iter().position(|(name, _, _)| name == slot) else {
                    return not_found();
                };
                match (method, action) {
                    (&Method::GET, []) => self.media(i),
                    (&Method::POST, ["Actions", "VirtualMedia.InsertMedia"]) => {
                        self.insert(i, body)
                    }
                    (&Method::POST, ["Actions", "VirtualMedia.EjectMedia"]) => {
                        self.media[i] = Slot::default();
                        no_content()
                    }
                    _ => not_found(),
                }
            }
            _ => not_found(),
        }
    }

    fn view(&self) -> Response {
        let path = self.path();
        json_response(json!({
            "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
            "Id": self.fake.uuid,
            "Name": self.fake.name,
            "UUID": self.fake.uuid,
            "Manufacturer": "Sushy Emulator",
            "Status": {"State": "Enabled", "Health": "OK", "HealthRollUp": "OK"},
            "PowerState": self.power,
            "Boot": {
                // Whatever was asked, as sushy-tools (its libvirt driver knows no other).
                "BootSourceOverrideEnabled": "Continuous",
                "BootSourceOverrideTarget": self.boot_target,
                "BootSourceOverrideTarget@Redfish.AllowableValues": ["Pxe", "Cd", "Hdd", "UefiHttp"],
                "BootSourceOverrideMode": self.boot_mode,
            },
            "EthernetInterfaces": {"@odata.id": format!("{path}/EthernetInterfaces")},
            "VirtualMedia": {"@odata.id": format!("{path}/VirtualMedia")},
            "Links": {
                "Chassis": [{"@odata.id": format!("/redfish/v1/Chassis/{CHASSIS}")}],
                "ManagedBy": [{"@odata.id": self.manager_path()}],
            },
            "Actions": {"#ComputerSystem.Reset": {
                "target": format!("{path}/Actions/ComputerSystem.Reset"),
                "ResetType@Redfish.AllowableValues":
                    ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn"],
            }},
            "@odata.id": path,
        }))
    }

    /// As sushy-tools: `Boot`'s target and mode are taken (`UefiHttp` without a URI is `Pxe`),
    /// `BootSourceOverrideEnabled` is not (it stays `Continuous`), a PATCH with neither is a 400.
    fn patch(&mut self, body: &[u8]) -> Response {
        let Ok(body) = serde_json::from_slice::<Value>(body) else {
            return error(StatusCode::BAD_REQUEST, "Request must be a valid JSON");
        };
        let boot = &body["Boot"];
        if !boot.is_object() {
            return error(
                StatusCode::BAD_REQUEST,
                "PATCH only works for Boot and IndicatorLED elements",
            );
        }
        let target = boot["BootSourceOverrideTarget"].as_str();
        let mode = boot["BootSourceOverrideMode"].as_str();
        if target.is_none() && mode.is_none() {
            return error(
                StatusCode::BAD_REQUEST,
                "Missing the BootSourceOverrideTarget and/or BootSourceOverrideMode element",
            );
        }
        if let Some(target) = target {
            self.boot_target = if target == "UefiHttp" { "Pxe" } else { target }.to_owned();
        }
        if let Some(mode) = mode {
            self.boot_mode = mode.to_owned();
        }
        no_content()
    }

    /// As sushy-tools' fake driver: `On`/`ForceOn` on, `ForceOff`/`GracefulShutdown` off, a
    /// restart ends on, anything else 501.
    fn reset(&mut self, body: &[u8]) -> Response {
        let reset_type = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|b| b["ResetType"].as_str().map(str::to_owned))
            .unwrap_or_default();
        self.power = match reset_type.as_str() {
            t if t.contains("On") || t.contains("Restart") => "On",
            "ForceOff" | "GracefulShutdown" => "Off",
            t => {
                return error(
                    StatusCode::NOT_IMPLEMENTED,
                    &format!("Power state {t} is not supported"),
                );
            }
        };
        no_content()
    }

    fn nic(&self, nic: &str) -> Response {
        if !self.fake.nics.iter().any(|n| n == nic) {
            return not_found();
        }
        json_response(json!({
            "@odata.type": "#EthernetInterface.v1_0_2.EthernetInterface",
            "Id": nic,
            "Name": format!("VNIC {nic}"),
            "Status": {"State": "Enabled", "Health": "OK"},
            "PermanentMACAddress": nic,
            "MACAddress": nic,
            "@odata.id": format!("{}/EthernetInterfaces/{nic}", self.path()),
        }))
    }

    fn media(&self, i: usize) -> Response {
        let (slot, name, types) = SLOTS[i];
        let state = &self.media[i];
        let base = format!("{}/VirtualMedia/{slot}", self.path());
        let image = state.image.clone().unwrap_or_default();
        let image_name = image.rsplit('/').next().unwrap_or_default().to_owned();
        json_response(json!({
            "@odata.type": "#VirtualMedia.v1_4_0.VirtualMedia",
            "Id": slot,
            "Name": name,
            "MediaTypes": types,
            "Image": image,
            "ImageName": image_name,
            "ConnectedVia": "URI",
            "Inserted": state.image.is_some(),
            "WriteProtected": state.write_protected,
            "Actions": {
                "#VirtualMedia.EjectMedia": {"target": format!("{base}/Actions/VirtualMedia.EjectMedia")},
                "#VirtualMedia.InsertMedia": {"target": format!("{base}/Actions/VirtualMedia.InsertMedia")},
            },
            "@odata.id": base,
        }))
    }

    /// As sushy-tools: `Image` taken as it is (not downloaded), `WriteProtected` defaulting to
    /// true, a user name without a password (or the reverse) a 400.
    fn insert(&mut self, i: usize, body: &[u8]) -> Response {
        let Ok(body) = serde_json::from_slice::<Value>(body) else {
            return error(StatusCode::BAD_REQUEST, "Request must be a valid JSON");
        };
        let filled = |key: &str| body[key].as_str().is_some_and(|v| !v.is_empty());
        if filled("UserName") != filled("Password") {
            return error(
                StatusCode::BAD_REQUEST,
                "UserName and Password must be passed together",
            );
        }
        self.media[i] = Slot {
            image: body["Image"].as_str().map(str::to_owned),
            write_protected: body["WriteProtected"].as_bool().unwrap_or(true),
        };
        no_content()
    }

    fn manager(&self) -> Response {
        let chassis = if self.first {
            vec![json!({"@odata.id": format!("/redfish/v1/Chassis/{CHASSIS}")})]
        } else {
            vec![]
        };
        json_response(json!({
            "@odata.type": "#Manager.v1_3_1.Manager",
            "Id": self.fake.uuid,
            "Name": format!("{}-Manager", self.fake.name),
            "ManagerType": "BMC",
            "UUID": self.fake.uuid,
            "Model": "Joo Janta 200",
            "FirmwareVersion": "1.00",
            "PowerState": "On",
            "Status": {"State": "Enabled", "Health": "OK"},
            "Links": {
                "ManagerForChassis": chassis,
                "ManagerForServers": [{"@odata.id": self.path()}],
            },
            "VirtualMedia": {"@odata.id": format!("{}/VirtualMedia", self.path())},
            "@odata.id": self.manager_path(),
        }))
    }
}

fn service_root() -> Response {
    json_response(json!({
        "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
        "Id": "RedvirtService",
        "Name": "Redvirt Service",
        "RedfishVersion": "1.5.0",
        "UUID": "85775665-c110-4b85-8989-e6162170b3ec",
        "Chassis": {"@odata.id": "/redfish/v1/Chassis"},
        "Systems": {"@odata.id": "/redfish/v1/Systems"},
        "Managers": {"@odata.id": "/redfish/v1/Managers"},
        "@odata.id": "/redfish/v1/",
    }))
}

/// The BMC's one chassis, holding its systems, managed by its first system's manager (as
/// sushy-tools' default chassis).
fn chassis(systems: &[SimSystem]) -> Response {
    let links = |systems: &mut dyn Iterator<Item = String>| -> Vec<Value> {
        systems.map(|link| json!({"@odata.id": link})).collect()
    };
    json_response(json!({
        "@odata.type": "#Chassis.v1_5_0.Chassis",
        "Id": CHASSIS,
        "Name": "Chassis",
        "UUID": CHASSIS,
        "ChassisType": "Enclosure",
        "Manufacturer": "Contoso",
        "Model": "3500RX",
        "SerialNumber": "437XR1138R2",
        "PowerState": "On",
        "Status": {"State": "Enabled", "Health": "OK"},
        "Links": {
            "ComputerSystems": links(&mut systems.iter().map(SimSystem::path)),
            "ManagedBy": links(&mut systems.iter().filter(|s| s.first).map(SimSystem::manager_path)),
        },
        "@odata.id": format!("/redfish/v1/Chassis/{CHASSIS}"),
    }))
}

fn collection(
    kind: &str,
    name: &str,
    path: &str,
    members: impl Iterator<Item = String>,
) -> Response {
    let members: Vec<Value> = members.map(|m| json!({"@odata.id": m})).collect();
    json_response(json!({
        "@odata.type": format!("#{kind}.{kind}"),
        "Name": name,
        "Members@odata.count": members.len(),
        "Members": members,
        "@odata.id": path,
    }))
}

fn respond(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn json_response(value: Value) -> Response {
    respond(StatusCode::OK, serde_json::to_vec(&value).expect("JSON"))
}

/// sushy-tools' error body.
fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {
        "code": "Base.1.0.GeneralError",
        "message": message,
        "@Message.ExtendedInfo": [{
            "@odata.type": "/redfish/v1/$metadata#Message.1.0.0.Message",
            "MessageId": "Base.1.0.GeneralError",
        }],
    }});
    respond(status, serde_json::to_vec(&body).expect("JSON"))
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "Not found")
}

fn no_content() -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

/// BMCs per `bmc-sim` process: each holds a listener and, under load, a connection per BMC, so
/// a process stays well within the 20,000 file descriptors a process may hold here.
pub const BMCS_PER_PROCESS: usize = 4000;

/// The simulator in processes of its own (`bin`: `bmc-sim`), [`BMCS_PER_PROCESS`] BMCs each,
/// numbered in order across them. Dropping it stops them (their standard input closes).
#[derive(Debug)]
pub struct BmcFleet {
    processes: Vec<SimProcess>,
    client: reqwest::Client,
}

#[derive(Debug)]
struct SimProcess {
    child: tokio::process::Child,
    control: u16,
    ports: Vec<u16>,
    certs: Vec<Option<String>>,
}

/// What a `bmc-sim` process prints once it serves: one line of JSON.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SimReady {
    /// The control port: `GET /requests`, `POST /power-off-all`.
    pub control: u16,
    /// Every BMC's port, in order.
    pub ports: Vec<u16>,
    /// Every BMC's certificate, in order, where they serve HTTPS.
    pub certs: Vec<Option<String>>,
}

impl BmcFleet {
    pub async fn start(bin: &str, config: SimConfig) -> BmcFleet {
        let mut processes = Vec::new();
        let mut first = 0;
        while first < config.bmcs {
            let bmcs = BMCS_PER_PROCESS.min(config.bmcs - first);
            let mut command = tokio::process::Command::new(bin);
            command
                .args([
                    "--first-bmc".to_owned(),
                    (config.first_bmc + first).to_string(),
                    "--bmcs".to_owned(),
                    bmcs.to_string(),
                    "--systems-per-bmc".to_owned(),
                    config.systems_per_bmc.to_string(),
                    "--latency-us".to_owned(),
                    config.latency.as_micros().to_string(),
                    "--jitter-us".to_owned(),
                    config.jitter.as_micros().to_string(),
                ])
                .args(config.own_certificates.then_some("--own-certificates"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true);
            if let Some((user, password)) = &config.basic_auth {
                command
                    .env("BMC_SIM_USER", user)
                    .env("BMC_SIM_PASSWORD", password);
            }
            if let Some(tls) = &config.tls {
                command
                    .env("BMC_SIM_TLS_CERT", &tls.cert_pem)
                    .env("BMC_SIM_TLS_KEY", &tls.key_pem);
            }
            let mut child = command.spawn().expect("starting bmc-sim");
            let stdout = child.stdout.take().expect("piped");
            let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
            let line = lines
                .next_line()
                .await
                .expect("reading bmc-sim")
                .expect("bmc-sim says where it serves");
            let ready: SimReady = serde_json::from_str(&line).expect("bmc-sim's line");
            processes.push(SimProcess {
                child,
                control: ready.control,
                ports: ready.ports,
                certs: ready.certs,
            });
            first += bmcs;
        }
        BmcFleet {
            processes,
            client: reqwest::Client::new(),
        }
    }

    /// BMC `bmc`'s base URL.
    pub fn url(&self, bmc: usize) -> String {
        let process = &self.processes[bmc / BMCS_PER_PROCESS];
        url(process.ports[bmc % BMCS_PER_PROCESS], self.cert_pem(bmc))
    }

    /// The certificate BMC `bmc` serves, where it serves HTTPS.
    pub fn cert_pem(&self, bmc: usize) -> Option<&str> {
        self.processes[bmc / BMCS_PER_PROCESS].certs[bmc % BMCS_PER_PROCESS].as_deref()
    }

    /// The processes' ids, to read their CPU time.
    pub fn pids(&self) -> Vec<u32> {
        self.processes.iter().filter_map(|p| p.child.id()).collect()
    }

    /// Requests each BMC was sent so far.
    pub async fn requests(&self) -> Vec<u64> {
        let mut all = Vec::new();
        for process in &self.processes {
            let counts: Vec<u64> = self
                .client
                .get(format!("http://127.0.0.1:{}/requests", process.control))
                .send()
                .await
                .expect("bmc-sim's control port")
                .json()
                .await
                .expect("bmc-sim's counts");
            all.extend(counts);
        }
        all
    }

    /// Every system off, at once (no BMC request counted).
    pub async fn power_off_all(&self) {
        for process in &self.processes {
            let answer = self
                .client
                .post(format!(
                    "http://127.0.0.1:{}/power-off-all",
                    process.control
                ))
                .send()
                .await
                .expect("bmc-sim's control port");
            assert!(answer.status().is_success());
        }
    }
}

/// Serves a `bmc-sim` process's control port: `GET /requests` (each BMC's count, JSON) and
/// `POST /power-off-all`.
pub async fn serve_control(sim: Arc<BmcSim>, listener: tokio::net::TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        let sim = sim.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let sim = sim.clone();
                async move {
                    Ok::<_, Infallible>(match (request.method(), request.uri().path()) {
                        (&Method::GET, "/requests") => respond(
                            StatusCode::OK,
                            serde_json::to_vec(&sim.requests()).expect("JSON"),
                        ),
                        (&Method::POST, "/power-off-all") => {
                            sim.power_off_all();
                            no_content()
                        }
                        _ => not_found(),
                    })
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
