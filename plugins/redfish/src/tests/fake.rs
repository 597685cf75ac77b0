//! A fake Redfish service for the native tests: canned responses keyed by method and URL, built
//! from payloads captured from sushy-tools' emulator (`tests/fixtures/`), and a record of every
//! request the driver sent and every line it logged.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use crate::config::Config;
use crate::redfish::Client;
use crate::transport::{Level, Method, Response, Transport, TransportError};

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

/// One request as the driver sent it.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub(super) method: Method,
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    /// The body as JSON, `None` when empty.
    pub(super) body: Option<Value>,
}

type Answer = Result<Response, TransportError>;

/// The fake service.
#[derive(Debug, Default)]
pub(super) struct Fake {
    routes: HashMap<(Method, String), Answer>,
    pub(super) sent: RefCell<Vec<Sent>>,
    pub(super) logs: RefCell<Vec<(Level, String)>>,
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
        self.routes.insert(
            (method, url.to_owned()),
            Ok(Response {
                status,
                body: body.to_vec(),
            }),
        );
        self
    }

    /// Fails `method url` in the transport.
    pub(super) fn fail(&mut self, method: Method, url: &str, error: TransportError) -> &mut Self {
        self.routes.insert((method, url.to_owned()), Err(error));
        self
    }

    /// Edits the payload GET `url` answers with.
    pub(super) fn edit(&mut self, url: &str, change: impl FnOnce(&mut Value)) -> &mut Self {
        let key = (Method::Get, url.to_owned());
        let Some(Ok(response)) = self.routes.get(&key) else {
            panic!("no payload at {url}");
        };
        let mut value: Value = serde_json::from_slice(&response.body).expect("JSON payload");
        change(&mut value);
        self.json(url, value)
    }

    /// The requests sent, other than GETs.
    pub(super) fn changes(&self) -> Vec<Sent> {
        self.sent
            .borrow()
            .iter()
            .filter(|s| s.method != Method::Get)
            .cloned()
            .collect()
    }

    pub(super) fn got(&self, url: &str) -> bool {
        self.sent
            .borrow()
            .iter()
            .any(|s| s.method == Method::Get && s.url == url)
    }

    pub(super) fn client(&self) -> Client<'_> {
        Client::new(self, Config::default())
    }

    pub(super) fn client_with(&self, config: &str) -> Client<'_> {
        Client::new(self, Config::parse(config).expect("valid config"))
    }
}

impl Transport for Fake {
    fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response, TransportError> {
        self.sent.borrow_mut().push(Sent {
            method,
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: (!body.is_empty())
                .then(|| serde_json::from_slice(body).expect("the driver sends JSON")),
        });
        if let Some(answer) = self.routes.get(&(method, url.to_owned())) {
            return answer.clone();
        }
        Ok(match method {
            // What the emulator answers for a path it does not know.
            Method::Get => Response {
                status: 404,
                body: fixture("error_404").to_string().into_bytes(),
            },
            // What the emulator answers to an action or a PATCH it carried out.
            Method::Post | Method::Patch => Response {
                status: 204,
                body: Vec::new(),
            },
        })
    }

    fn log(&self, level: Level, message: &str) {
        self.logs.borrow_mut().push((level, message.to_owned()));
    }
}
