//! `BmcSim`: a Redfish BMC simulator for scale, in-process, at a few microseconds of CPU a
//! request, where sushy-tools spends milliseconds (so a benchmark of thousands of BMCs measures
//! Podium, not its peers).
//!
//! It is not a peer that proves anything correct: it answers what Podium's Redfish driver uses,
//! in the shapes sushy-tools' fake driver answers them (the payloads captured from it in
//! `plugins/redfish/tests/fixtures/`), and the driver's conformance tests
//! (`tests/all/redfish.rs`) run against both, so it cannot drift from sushy-tools unseen.
//!
//! Served: the service root; `Systems`, a system (`GET`, `PATCH` of `Boot`), its `Reset`
//! action, `EthernetInterfaces`, `VirtualMedia` (`Cd`, `Floppy`) with `InsertMedia` and
//! `EjectMedia`; `Managers` (one per system, linking its media); `Chassis` (one per BMC, holding
//! its systems). Errors as sushy-tools writes them (`Base.1.0.GeneralError`), 401 without the
//! credentials (the service root excepted), 404 for anything else.
//!
//! Each simulated BMC listens on its own 127.0.0.1 port and holds `systems_per_bmc` systems,
//! numbered across BMCs as [`FakeSystem::numbered`] numbers sushy-tools' (BMC `b`'s `i`-th system
//! is `b * systems_per_bmc + i + 1`). Every answer waits `latency` plus up to `jitter` first.
//! Power changes show at once, as the sushy-tools wrapper's do. Unlike sushy-tools, it does not
//! download an image it is told to insert (a BMC fetching thousands of images would measure the
//! image server): it records the URL.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde_json::{Value, json};

use crate::sushy::FakeSystem;

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
}

impl SimConfig {
    /// One BMC holding `systems` systems, answering at once, no auth.
    pub fn with_systems(systems: usize) -> SimConfig {
        SimConfig {
            bmcs: 1,
            systems_per_bmc: systems,
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            basic_auth: None,
        }
    }
}

/// A running simulator: its BMCs stop when it is dropped (or one by one, [`BmcSim::stop`]).
#[derive(Debug)]
pub struct BmcSim {
    sim: Arc<Sim>,
    ports: Vec<u16>,
    stops: Vec<Option<tokio::sync::oneshot::Sender<()>>>,
}

#[derive(Debug)]
struct Sim {
    config: SimConfig,
    /// The BMC behind each port.
    bmc_of_port: HashMap<u16, usize>,
    /// Each BMC's systems.
    bmcs: Vec<Mutex<Vec<SimSystem>>>,
    /// The expected `Authorization` header.
    authorization: Option<String>,
    requests: AtomicU64,
}

#[derive(Debug, Clone)]
struct SimSystem {
    fake: FakeSystem,
    /// The BMC's first system, whose manager manages the chassis (as sushy-tools' first).
    first: bool,
    power: &'static str,
    boot_target: String,
    boot_enabled: String,
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

/// The BMC a connection came in on: the port it reached.
#[derive(Debug, Clone, Copy)]
struct LocalPort(u16);

impl Connected<axum::serve::IncomingStream<'_, tokio::net::TcpListener>> for LocalPort {
    fn connect_info(stream: axum::serve::IncomingStream<'_, tokio::net::TcpListener>) -> Self {
        LocalPort(stream.io().local_addr().map_or(0, |a| a.port()))
    }
}

impl BmcSim {
    /// Binds every BMC's port and serves them.
    pub async fn start(config: SimConfig) -> BmcSim {
        let mut listeners = Vec::with_capacity(config.bmcs);
        let mut bmc_of_port = HashMap::with_capacity(config.bmcs);
        for bmc in 0..config.bmcs {
            let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .await
                .expect("bind a simulated BMC's port");
            bmc_of_port.insert(listener.local_addr().expect("addr").port(), bmc);
            listeners.push(listener);
        }
        let bmcs = (0..config.bmcs)
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
        let sim = Arc::new(Sim {
            config,
            bmc_of_port,
            bmcs,
            authorization,
            requests: AtomicU64::new(0),
        });
        let router = router(sim.clone());
        let mut ports = Vec::with_capacity(listeners.len());
        let mut stops = Vec::with_capacity(listeners.len());
        for listener in listeners {
            ports.push(listener.local_addr().expect("addr").port());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            stops.push(Some(stop));
            let service = router
                .clone()
                .into_make_service_with_connect_info::<LocalPort>();
            tokio::spawn(async move {
                let _ = axum::serve(listener, service)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        }
        BmcSim { sim, ports, stops }
    }

    /// BMC `bmc`'s base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self, bmc: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[bmc])
    }

    /// What the simulator was started with.
    pub fn config(&self) -> &SimConfig {
        &self.sim.config
    }

    /// The identity of BMC `bmc`'s `i`-th system.
    pub fn system(&self, bmc: usize, i: usize) -> FakeSystem {
        FakeSystem::numbered((bmc * self.sim.config.systems_per_bmc + i + 1) as u32)
    }

    /// Requests answered (or refused) so far, across every BMC.
    pub fn requests(&self) -> u64 {
        self.sim.requests.load(Ordering::Acquire)
    }

    /// GETs `path` from BMC `bmc` directly (with the credentials), so a test can check what the
    /// BMC itself reports. Fails on a non-2xx answer.
    pub async fn get_json(&self, bmc: usize, path: &str) -> anyhow::Result<Value> {
        let mut request = reqwest::Client::new().get(format!("{}{path}", self.url(bmc)));
        if let Some((user, password)) = &self.sim.config.basic_auth {
            request = request.basic_auth(user, Some(password));
        }
        let response = request.send().await?;
        let status = response.status();
        let body = response.text().await?;
        anyhow::ensure!(status.is_success(), "GET {path}: {status}: {body}");
        Ok(serde_json::from_str(&body)?)
    }

    /// Stops BMC `bmc`: its port closes, and its open connections once their requests are
    /// answered.
    pub fn stop(&mut self, bmc: usize) {
        if let Some(stop) = self.stops[bmc].take() {
            let _ = stop.send(());
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
            boot_enabled: "Continuous".into(),
            boot_mode: "UEFI".into(),
            media: Default::default(),
        }
    }

    fn path(&self) -> String {
        format!("/redfish/v1/Systems/{}", self.fake.uuid)
    }
}

/// The one chassis of every BMC (sushy-tools' default chassis id).
const CHASSIS: &str = "15693887-7984-9484-3272-842188918912";

fn router(sim: Arc<Sim>) -> Router {
    Router::new()
        .route("/redfish/v1", get(service_root))
        .route("/redfish/v1/", get(service_root))
        .route("/redfish/v1/Systems", get(systems))
        .route("/redfish/v1/Systems/{id}", get(system).patch(system_patch))
        .route(
            "/redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset",
            post(reset),
        )
        .route("/redfish/v1/Systems/{id}/EthernetInterfaces", get(nics))
        .route(
            "/redfish/v1/Systems/{id}/EthernetInterfaces/{nic}",
            get(nic),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia",
            get(media_collection),
        )
        .route("/redfish/v1/Systems/{id}/VirtualMedia/{slot}", get(media))
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia/{slot}/Actions/VirtualMedia.InsertMedia",
            post(insert),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia/{slot}/Actions/VirtualMedia.EjectMedia",
            post(eject),
        )
        .route("/redfish/v1/Managers", get(managers))
        .route("/redfish/v1/Managers/{id}", get(manager))
        .route("/redfish/v1/Chassis", get(chassis_collection))
        .route("/redfish/v1/Chassis/{id}", get(chassis))
        .fallback(|| async { not_found() })
        .layer(middleware::from_fn_with_state(sim.clone(), gate))
        .with_state(sim)
}

/// Counts the request, waits the BMC's latency, checks the credentials.
async fn gate(
    State(sim): State<Arc<Sim>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    sim.requests.fetch_add(1, Ordering::AcqRel);
    let config = &sim.config;
    let jitter = config.jitter.as_micros() as u64;
    let wait = config.latency + Duration::from_micros(fastrand::u64(..=jitter));
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    let open = matches!(request.uri().path(), "/redfish/v1" | "/redfish/v1/");
    if let Some(expected) = &sim.authorization
        && !open
        && headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            != Some(expected.as_str())
    {
        return error(StatusCode::UNAUTHORIZED, "Authentication failed");
    }
    next.run(request).await
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
    (status, axum::Json(body)).into_response()
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "Not found")
}

fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

fn collection(
    kind: &str,
    name: &str,
    path: &str,
    members: impl Iterator<Item = String>,
) -> Response {
    let members: Vec<Value> = members.map(|m| json!({"@odata.id": m})).collect();
    axum::Json(json!({
        "@odata.type": format!("#{kind}.{kind}"),
        "Name": name,
        "Members@odata.count": members.len(),
        "Members": members,
        "@odata.id": path,
    }))
    .into_response()
}

impl Sim {
    /// Runs `f` on the system `id` of the BMC the request reached; 404 if it holds none such.
    fn with_system(
        &self,
        port: LocalPort,
        id: &str,
        f: impl FnOnce(&mut SimSystem) -> Response,
    ) -> Response {
        let Some(bmc) = self.bmc_of_port.get(&port.0) else {
            return not_found();
        };
        let mut systems = self.bmcs[*bmc].lock().expect("not poisoned");
        match systems.iter_mut().find(|s| s.fake.uuid == id) {
            Some(system) => f(system),
            None => not_found(),
        }
    }

    fn systems(&self, port: LocalPort) -> Vec<SimSystem> {
        self.bmc_of_port
            .get(&port.0)
            .map(|bmc| self.bmcs[*bmc].lock().expect("not poisoned").clone())
            .unwrap_or_default()
    }
}

type Conn = ConnectInfo<LocalPort>;

async fn service_root() -> Response {
    axum::Json(json!({
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
    .into_response()
}

async fn systems(State(sim): State<Arc<Sim>>, ConnectInfo(port): Conn) -> Response {
    let systems = sim.systems(port);
    collection(
        "ComputerSystemCollection",
        "Computer System Collection",
        "/redfish/v1/Systems",
        systems.iter().map(SimSystem::path),
    )
}

async fn system(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
) -> Response {
    sim.with_system(port, &id, |s| {
        let path = s.path();
        axum::Json(json!({
            "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
            "Id": s.fake.uuid,
            "Name": s.fake.name,
            "UUID": s.fake.uuid,
            "Manufacturer": "Sushy Emulator",
            "Status": {"State": "Enabled", "Health": "OK", "HealthRollUp": "OK"},
            "PowerState": s.power,
            "Boot": {
                "BootSourceOverrideEnabled": s.boot_enabled,
                "BootSourceOverrideTarget": s.boot_target,
                "BootSourceOverrideTarget@Redfish.AllowableValues": ["Pxe", "Cd", "Hdd", "UefiHttp"],
                "BootSourceOverrideMode": s.boot_mode,
            },
            "EthernetInterfaces": {"@odata.id": format!("{path}/EthernetInterfaces")},
            "VirtualMedia": {"@odata.id": format!("{path}/VirtualMedia")},
            "Links": {
                "Chassis": [{"@odata.id": format!("/redfish/v1/Chassis/{CHASSIS}")}],
                "ManagedBy": [{"@odata.id": format!("/redfish/v1/Managers/{}", s.fake.uuid)}],
            },
            "Actions": {"#ComputerSystem.Reset": {
                "target": format!("{path}/Actions/ComputerSystem.Reset"),
                "ResetType@Redfish.AllowableValues":
                    ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn"],
            }},
            "@odata.id": path,
        }))
        .into_response()
    })
}

/// As sushy-tools: `Boot`'s target and mode are taken (`UefiHttp` without a URI is `Pxe`), a
/// PATCH with neither is a 400.
async fn system_patch(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Request must be a valid JSON");
    };
    sim.with_system(port, &id, |s| {
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
            s.boot_target = if target == "UefiHttp" { "Pxe" } else { target }.to_owned();
        }
        if let Some(enabled) = boot["BootSourceOverrideEnabled"].as_str() {
            s.boot_enabled = enabled.to_owned();
        }
        if let Some(mode) = mode {
            s.boot_mode = mode.to_owned();
        }
        no_content()
    })
}

/// As sushy-tools' fake driver: `On`/`ForceOn` on, `ForceOff`/`GracefulShutdown` off, a restart
/// ends on, anything else 501.
async fn reset(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let reset_type = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b["ResetType"].as_str().map(str::to_owned))
        .unwrap_or_default();
    sim.with_system(port, &id, |s| {
        s.power = match reset_type.as_str() {
            t if t.contains("On") => "On",
            "ForceOff" | "GracefulShutdown" => "Off",
            t if t.contains("Restart") => "On",
            t => {
                return error(
                    StatusCode::NOT_IMPLEMENTED,
                    &format!("Power state {t} is not supported"),
                );
            }
        };
        no_content()
    })
}

async fn nics(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
) -> Response {
    sim.with_system(port, &id, |s| {
        let path = s.path();
        collection(
            "EthernetInterfaceCollection",
            "Ethernet Interface Collection",
            &format!("{path}/EthernetInterfaces"),
            s.fake
                .nics
                .iter()
                .map(|mac| format!("{path}/EthernetInterfaces/{mac}")),
        )
    })
}

async fn nic(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path((id, nic)): Path<(String, String)>,
) -> Response {
    sim.with_system(port, &id, |s| {
        if !s.fake.nics.contains(&nic) {
            return not_found();
        }
        axum::Json(json!({
            "@odata.type": "#EthernetInterface.v1_0_2.EthernetInterface",
            "Id": nic,
            "Name": format!("VNIC {nic}"),
            "Status": {"State": "Enabled", "Health": "OK"},
            "PermanentMACAddress": nic,
            "MACAddress": nic,
            "@odata.id": format!("{}/EthernetInterfaces/{nic}", s.path()),
        }))
        .into_response()
    })
}

async fn media_collection(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
) -> Response {
    sim.with_system(port, &id, |s| {
        let path = s.path();
        collection(
            "VirtualMediaCollection",
            "Virtual Media Services",
            &format!("{path}/VirtualMedia"),
            SLOTS
                .iter()
                .map(|(slot, _, _)| format!("{path}/VirtualMedia/{slot}")),
        )
    })
}

/// The index of slot `name` in [`SLOTS`].
fn slot_index(name: &str) -> Option<usize> {
    SLOTS.iter().position(|(slot, _, _)| *slot == name)
}

async fn media(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path((id, slot)): Path<(String, String)>,
) -> Response {
    sim.with_system(port, &id, |s| {
        let Some(i) = slot_index(&slot) else {
            return not_found();
        };
        let (_, name, types) = SLOTS[i];
        let state = &s.media[i];
        let base = format!("{}/VirtualMedia/{slot}", s.path());
        let image = state.image.clone().unwrap_or_default();
        let image_name = image.rsplit('/').next().unwrap_or_default().to_owned();
        axum::Json(json!({
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
        .into_response()
    })
}

/// As sushy-tools: `Image` taken as it is (not downloaded), `WriteProtected` defaulting to true,
/// a user name without a password (or the reverse) a 400.
async fn insert(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path((id, slot)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Request must be a valid JSON");
    };
    let filled = |key: &str| body[key].as_str().is_some_and(|v| !v.is_empty());
    if filled("UserName") != filled("Password") {
        return error(
            StatusCode::BAD_REQUEST,
            "UserName and Password must be passed together",
        );
    }
    sim.with_system(port, &id, |s| {
        let Some(i) = slot_index(&slot) else {
            return not_found();
        };
        s.media[i] = Slot {
            image: body["Image"].as_str().map(str::to_owned),
            write_protected: body["WriteProtected"].as_bool().unwrap_or(true),
        };
        no_content()
    })
}

async fn eject(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path((id, slot)): Path<(String, String)>,
) -> Response {
    sim.with_system(port, &id, |s| {
        let Some(i) = slot_index(&slot) else {
            return not_found();
        };
        s.media[i] = Slot::default();
        no_content()
    })
}

async fn managers(State(sim): State<Arc<Sim>>, ConnectInfo(port): Conn) -> Response {
    collection(
        "ManagerCollection",
        "Manager Collection",
        "/redfish/v1/Managers",
        sim.systems(port)
            .iter()
            .map(|s| format!("/redfish/v1/Managers/{}", s.fake.uuid)),
    )
}

async fn manager(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
) -> Response {
    sim.with_system(port, &id, |s| {
        axum::Json(json!({
            "@odata.type": "#Manager.v1_3_1.Manager",
            "Id": s.fake.uuid,
            "Name": format!("{}-Manager", s.fake.name),
            "ManagerType": "BMC",
            "UUID": s.fake.uuid,
            "Model": "Joo Janta 200",
            "FirmwareVersion": "1.00",
            "PowerState": "On",
            "Status": {"State": "Enabled", "Health": "OK"},
            "Links": {
                "ManagerForChassis": if s.first {
                    vec![json!({"@odata.id": format!("/redfish/v1/Chassis/{CHASSIS}")})]
                } else {
                    vec![]
                },
                "ManagerForServers": [{"@odata.id": s.path()}],
            },
            "VirtualMedia": {"@odata.id": format!("{}/VirtualMedia", s.path())},
            "@odata.id": format!("/redfish/v1/Managers/{}", s.fake.uuid),
        }))
        .into_response()
    })
}

async fn chassis_collection() -> Response {
    collection(
        "ChassisCollection",
        "Chassis Collection",
        "/redfish/v1/Chassis",
        std::iter::once(format!("/redfish/v1/Chassis/{CHASSIS}")),
    )
}

async fn chassis(
    State(sim): State<Arc<Sim>>,
    ConnectInfo(port): Conn,
    Path(id): Path<String>,
) -> Response {
    if id != CHASSIS {
        return not_found();
    }
    let systems = sim.systems(port);
    axum::Json(json!({
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
            "ComputerSystems": systems.iter().map(|s| json!({"@odata.id": s.path()}))
                .collect::<Vec<_>>(),
            "ManagedBy": systems.iter().filter(|s| s.first)
                .map(|s| json!({"@odata.id": format!("/redfish/v1/Managers/{}", s.fake.uuid)}))
                .collect::<Vec<_>>(),
        },
        "@odata.id": format!("/redfish/v1/Chassis/{CHASSIS}"),
    }))
    .into_response()
}
