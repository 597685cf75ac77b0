//! A fake Redfish service for the native tests: canned responses keyed by method and path, built
//! from payloads captured from sushy-tools' emulator (`tests/fixtures/`), served in-process by
//! the SDK's harness, which records every request the driver sent and every line it logged.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use podium_plugin::Error;
use podium_plugin::driver::{
    Bios, BiosChange, BootSettings, FirmwareComponent, FirmwareUpdate, HardwareInventory,
    MediaRequest, MediaType, PowerAction, PowerState, ServiceInfo, System, TaskStatus,
};
use podium_plugin::http::{HttpError, Method, Response, method_name};
use podium_plugin::log::Level;
use podium_plugin::testing::Host;
use serde_json::Value;

use crate::Redfish;

/// The emulated system's path.
pub(super) const SYSTEM: &str = "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001";
/// The emulated system's manager.
pub(super) const MANAGER: &str = "/redfish/v1/Managers/27946b59-9e44-4fa7-8e91-000000000001";
/// The emulated chassis.
pub(super) const CHASSIS: &str = "/redfish/v1/Chassis/15693887-7984-9484-3272-842188918912";
/// The system's (and its manager's) virtual media collection.
pub(super) const VIRTUAL_MEDIA: &str =
    "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001/VirtualMedia";

/// A captured payload, by file name.
pub(super) fn fixture(name: &str) -> Value {
    let text = match name {
        "service_root" => include_str!("../../tests/fixtures/service_root.json"),
        "systems" => include_str!("../../tests/fixtures/systems.json"),
        "system" => include_str!("../../tests/fixtures/system.json"),
        "ethernet_interfaces" => include_str!("../../tests/fixtures/ethernet_interfaces.json"),
        "ethernet_interface" => include_str!("../../tests/fixtures/ethernet_interface.json"),
        "virtual_media" => include_str!("../../tests/fixtures/virtual_media.json"),
        "virtual_media_cd" => include_str!("../../tests/fixtures/virtual_media_cd.json"),
        "virtual_media_cd_inserted" => {
            include_str!("../../tests/fixtures/virtual_media_cd_inserted.json")
        }
        "virtual_media_floppy" => include_str!("../../tests/fixtures/virtual_media_floppy.json"),
        "managers" => include_str!("../../tests/fixtures/managers.json"),
        "manager" => include_str!("../../tests/fixtures/manager.json"),
        "chassis_collection" => include_str!("../../tests/fixtures/chassis_collection.json"),
        "chassis" => include_str!("../../tests/fixtures/chassis.json"),
        "error_404" => include_str!("../../tests/fixtures/error_404.json"),
        "error_400_patch" => include_str!("../../tests/fixtures/error_400_patch.json"),
        "error_501_reset" => include_str!("../../tests/fixtures/error_501_reset.json"),
        other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).expect("fixture is JSON")
}

/// The fake service's origin, for the links it hands out absolute.
const ORIGIN: &str = "https://bmc.example:8443";

/// The path a request for `url` reaches the service with.
fn path(url: &str) -> String {
    url.strip_prefix(ORIGIN).unwrap_or(url).to_owned()
}

/// One request as the driver sent it.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub(super) method: Method,
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    /// The body as JSON, `None` when empty.
    pub(super) body: Option<Value>,
}

type Answer = Result<Response, HttpError>;
type Routes = BTreeMap<(&'static str, String), Answer>;

/// The fake service: canned answers, served in-process through the SDK's test harness
/// (`podium_plugin::testing::Host`), which runs the driver as the host would and records what
/// it sent and logged.
#[derive(Debug)]
pub(super) struct Fake {
    routes: Arc<Mutex<Routes>>,
    host: Host,
}

impl Default for Fake {
    fn default() -> Self {
        let routes: Arc<Mutex<Routes>> = Arc::default();
        let served = Arc::clone(&routes);
        // A service that hands out absolute links names this origin.
        let host = Host::new().in_process_at(ORIGIN, move |request| {
            let key = (method_name(request.method), request.url.clone());
            if let Some(answer) = served.lock().unwrap().get(&key) {
                return answer.clone();
            }
            Ok(match request.method {
                // What the emulator answers for a path it does not know.
                Method::Get => response(404, fixture("error_404").to_string().into_bytes()),
                // What the emulator answers to an action or a PATCH it carried out.
                _ => response(204, Vec::new()),
            })
        });
        Fake { routes, host }
    }
}

fn response(status: u16, body: Vec<u8>) -> Response {
    Response {
        status,
        headers: Vec::new(),
        body,
    }
}

impl Fake {
    /// The sushy-tools emulator with one system (`node-1`, powered off, one NIC, CD and floppy
    /// slots), its manager and one chassis, as captured.
    pub(super) fn emulator() -> Self {
        let mut fake = Self::default();
        fake.json("/redfish/v1", fixture("service_root"));
        for name in [
            "systems",
            "system",
            "ethernet_interfaces",
            "ethernet_interface",
            "virtual_media",
            "virtual_media_cd",
            "virtual_media_floppy",
            "managers",
            "manager",
            "chassis_collection",
            "chassis",
        ] {
            let value = fixture(name);
            let path = value["@odata.id"]
                .as_str()
                .expect("fixture has @odata.id")
                .to_owned();
            fake.json(&path, value);
        }
        fake
    }

    /// Answers GET `url` with 200 and `value`.
    pub(super) fn json(&mut self, url: &str, value: Value) -> &mut Self {
        self.answer(Method::Get, url, 200, value.to_string().as_bytes())
    }

    /// Answers `method url` with `status` and `body`.
    pub(super) fn answer(
        &mut self,
        method: Method,
        url: &str,
        status: u16,
        body: &[u8],
    ) -> &mut Self {
        self.routes.lock().unwrap().insert(
            (method_name(method), path(url)),
            Ok(response(status, body.to_vec())),
        );
        self
    }

    /// Answers `method url` with `status`, `body` and a `Location` header.
    pub(super) fn answer_located(
        &mut self,
        method: Method,
        url: &str,
        status: u16,
        body: &[u8],
        location: &str,
    ) -> &mut Self {
        let mut answer = response(status, body.to_vec());
        answer.headers = vec![("Location".into(), location.into())];
        self.routes
            .lock()
            .unwrap()
            .insert((method_name(method), path(url)), Ok(answer));
        self
    }

    /// Fails `method url` in the transport.
    pub(super) fn fail(&mut self, method: Method, url: &str, error: HttpError) -> &mut Self {
        self.routes
            .lock()
            .unwrap()
            .insert((method_name(method), path(url)), Err(error));
        self
    }

    /// Edits the payload GET `url` answers with.
    pub(super) fn edit(&mut self, url: &str, change: impl FnOnce(&mut Value)) -> &mut Self {
        let body = match self.routes.lock().unwrap().get(&("GET", path(url))) {
            Some(Ok(response)) => response.body.clone(),
            _ => panic!("no payload at {url}"),
        };
        let mut value: Value = serde_json::from_slice(&body).expect("JSON payload");
        change(&mut value);
        self.json(url, value)
    }

    /// Every request sent, in order.
    pub(super) fn sent(&self) -> Vec<Sent> {
        self.host
            .sent()
            .into_iter()
            .map(|r| Sent {
                method: r.method,
                url: r.url,
                headers: r.headers,
                body: (!r.body.is_empty())
                    .then(|| serde_json::from_slice(&r.body).expect("the driver sends JSON")),
            })
            .collect()
    }

    /// Every line logged.
    pub(super) fn logs(&self) -> Vec<(Level, String)> {
        self.host.logs()
    }

    /// The requests sent, other than GETs.
    pub(super) fn changes(&self) -> Vec<Sent> {
        self.sent()
            .into_iter()
            .filter(|s| s.method != Method::Get)
            .collect()
    }

    pub(super) fn got(&self, url: &str) -> bool {
        self.sent()
            .iter()
            .any(|s| s.method == Method::Get && s.url == url)
    }

    /// The driver with the default configuration, each call made as the host makes it.
    pub(super) fn client(&self) -> Calls {
        self.client_with("{}")
    }

    pub(super) fn client_with(&self, config: &str) -> Calls {
        Calls(self.host.clone().config(config))
    }
}

/// The driver's calls, through the component's exports as the SDK runs them natively.
#[derive(Debug)]
pub(super) struct Calls(Host);

impl Calls {
    pub(super) fn probe(&self) -> Result<ServiceInfo, Error> {
        self.0.driver::<Redfish>().probe()
    }

    pub(super) fn discover(&self) -> Result<Vec<System>, Error> {
        self.0.driver::<Redfish>().discover()
    }

    pub(super) fn inspect(&self, system_id: &str) -> Result<System, Error> {
        self.0.driver::<Redfish>().inspect(system_id)
    }

    pub(super) fn get_power(&self, system_id: &str) -> Result<PowerState, Error> {
        self.0.driver::<Redfish>().get_power(system_id)
    }

    pub(super) fn set_power(&self, system_id: &str, action: PowerAction) -> Result<(), Error> {
        self.0.driver::<Redfish>().set_power(system_id, action)
    }

    pub(super) fn get_chassis_power(&self, chassis_id: &str) -> Result<PowerState, Error> {
        self.0.driver::<Redfish>().get_chassis_power(chassis_id)
    }

    pub(super) fn set_chassis_power(
        &self,
        chassis_id: &str,
        action: PowerAction,
    ) -> Result<(), Error> {
        self.0
            .driver::<Redfish>()
            .set_chassis_power(chassis_id, action)
    }

    pub(super) fn set_boot_override(
        &self,
        system_id: &str,
        settings: &BootSettings,
    ) -> Result<(), Error> {
        self.0
            .driver::<Redfish>()
            .set_boot_override(system_id, *settings)
    }

    pub(super) fn insert_media(
        &self,
        system_id: &str,
        request: &MediaRequest,
    ) -> Result<(), Error> {
        self.0
            .driver::<Redfish>()
            .insert_media(system_id, request.clone())
    }

    pub(super) fn eject_media(&self, system_id: &str, media_type: MediaType) -> Result<(), Error> {
        self.0
            .driver::<Redfish>()
            .eject_media(system_id, media_type)
    }

    pub(super) fn read_bios(&self, system_id: &str) -> Result<Bios, Error> {
        self.0.driver::<Redfish>().read_bios(system_id)
    }

    pub(super) fn read_hardware(&self, system_id: &str) -> Result<HardwareInventory, Error> {
        self.0.driver::<Redfish>().read_hardware(system_id)
    }

    pub(super) fn set_bios(&self, system_id: &str, change: BiosChange) -> Result<(), Error> {
        self.0.driver::<Redfish>().set_bios(system_id, change)
    }

    pub(super) fn reset_bios(&self, system_id: &str) -> Result<(), Error> {
        self.0.driver::<Redfish>().reset_bios(system_id)
    }

    pub(super) fn read_firmware(&self, system_id: &str) -> Result<Vec<FirmwareComponent>, Error> {
        self.0.driver::<Redfish>().read_firmware(system_id)
    }

    pub(super) fn update_firmware(
        &self,
        system_id: &str,
        update: FirmwareUpdate,
    ) -> Result<Option<String>, Error> {
        self.0
            .driver::<Redfish>()
            .update_firmware(system_id, update)
    }

    pub(super) fn read_task(&self, system_id: &str, task: &str) -> Result<TaskStatus, Error> {
        self.0.driver::<Redfish>().read_task(system_id, task)
    }
}
