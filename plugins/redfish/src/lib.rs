//! Podium's Redfish hardware driver, built as a WebAssembly component of the `hardware-driver`
//! world (`wit/podium-plugin@0.1.0`).
//!
//! This file is the thin adapter between the WIT and the driver: the bindings, the `Guest`
//! impls, and a [`Transport`] on the host's `http` and `log` imports. The Redfish logic itself is
//! in [`redfish`], plain Rust that the native tests drive through a fake transport.
//!
//! Configuration (see [`config`]): `{"root": "/redfish/v1", "system_ids": [..]}`, all optional.

wit_bindgen::generate!({
    path: "../../wit/podium-plugin@0.1.0",
    world: "hardware-driver",
    additional_derives: [PartialEq],
});

mod config;
mod error;
mod model;
mod redfish;
mod transport;

#[cfg(test)]
mod tests;

use exports::podium::plugin::driver::{
    self, BootSettings, CapabilitySet, MediaRequest, MediaType, PowerAction, PowerState,
    ServiceInfo, System,
};
use exports::podium::plugin::plugin;
use podium::plugin::types::{Error, PluginInfo};
use podium::plugin::{config as host_config, http, log};

use crate::config::Config;
use crate::redfish::Client;
use crate::transport::{Level, Method, Response, Transport, TransportError};

/// The exported component.
struct Component;

impl plugin::Guest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "redfish".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            description: "Inventory, power, boot override and virtual media through a Redfish \
                          service (a BMC or a pod manager)"
                .to_owned(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        Config::parse(&config).map(drop)
    }
}

impl driver::Guest for Component {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER
            | CapabilitySet::POWER
            | CapabilitySet::BOOT_OVERRIDE
            | CapabilitySet::VIRTUAL_MEDIA
    }

    /// `root-link` is the service root's path (`/redfish/v1/` as the service names it, else the
    /// configured root): the plugin only knows paths, the host makes it absolute against the
    /// endpoint's base URL.
    fn probe() -> Result<ServiceInfo, Error> {
        with_client(|c| c.probe())
    }

    fn discover() -> Result<Vec<System>, Error> {
        with_client(|c| c.discover())
    }

    fn inspect(system_id: String) -> Result<System, Error> {
        with_client(|c| c.inspect(&system_id))
    }

    fn get_power(system_id: String) -> Result<PowerState, Error> {
        with_client(|c| c.get_power(&system_id))
    }

    fn set_power(system_id: String, action: PowerAction) -> Result<(), Error> {
        with_client(|c| c.set_power(&system_id, action))
    }

    fn set_boot_override(system_id: String, settings: BootSettings) -> Result<(), Error> {
        with_client(|c| c.set_boot_override(&system_id, &settings))
    }

    fn insert_media(system_id: String, request: MediaRequest) -> Result<(), Error> {
        with_client(|c| c.insert_media(&system_id, &request))
    }

    fn eject_media(system_id: String, media_type: MediaType) -> Result<(), Error> {
        with_client(|c| c.eject_media(&system_id, media_type))
    }
}

/// Runs one driver call with the configuration the host holds for this plugin.
fn with_client<T>(call: impl FnOnce(&Client<'_>) -> Result<T, Error>) -> Result<T, Error> {
    let config = Config::parse(&host_config::get())?;
    call(&Client::new(&HostTransport, config))
}

/// [`Transport`] on the host's imports.
#[derive(Debug)]
struct HostTransport;

impl Transport for HostTransport {
    fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response, TransportError> {
        let request = http::Request {
            method: match method {
                Method::Get => http::Method::Get,
                Method::Post => http::Method::Post,
                Method::Patch => http::Method::Patch,
            },
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_vec(),
        };
        match http::send(&request) {
            Ok(response) => Ok(Response {
                status: response.status,
                body: response.body,
            }),
            Err(e) => Err(match e {
                http::HttpError::Denied(m) => TransportError::Denied(m),
                http::HttpError::Unreachable(m) => TransportError::Unreachable(m),
                http::HttpError::Timeout(m) => TransportError::Timeout(m),
                http::HttpError::Tls(m) => TransportError::Tls(m),
                http::HttpError::TooLarge(m) => TransportError::TooLarge(m),
                http::HttpError::InvalidRequest(m) => TransportError::InvalidRequest(m),
            }),
        }
    }

    fn log(&self, level: Level, message: &str) {
        let level = match level {
            Level::Debug => log::Level::Debug,
            Level::Warn => log::Level::Warn,
        };
        log::log(level, message);
    }
}

/// The component's exports. `export!` expands to the `unsafe extern "C"` entry points wit-bindgen
/// writes; this module is the one place unsafe code is allowed, and it is all generated. Only for
/// wasm: a native build (the tests) has no use for them, and their `pkg:name/iface#func` symbol
/// names are not ones a native linker takes.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod exported {
    use super::Component;

    crate::export!(Component with_types_in crate);
}

/// The driver's logic called natively, with no component in between: the baseline that the
/// host's benchmarks compare a plugin call against (`host/benches/plugin_call.rs`).
pub mod native {
    use super::{Client, Config, Level, Method, Response, Transport, TransportError};

    /// `get-power` as the component runs it (configuration parsed, one GET, the body read), over
    /// `get`, which answers a GET of a URL with a status and a body as the host's `http` import
    /// would. Returns the power state's name.
    pub fn get_power(
        config: &str,
        get: &dyn Fn(&str) -> (u16, Vec<u8>),
        system_id: &str,
    ) -> Result<String, String> {
        let config = Config::parse(config).map_err(|e| format!("{e:?}"))?;
        let transport = FnTransport(get);
        Client::new(&transport, config)
            .get_power(system_id)
            .map(|p| format!("{p:?}"))
            .map_err(|e| format!("{e:?}"))
    }

    struct FnTransport<'a>(&'a dyn Fn(&str) -> (u16, Vec<u8>));

    impl Transport for FnTransport<'_> {
        fn send(
            &self,
            method: Method,
            url: &str,
            _headers: &[(&str, &str)],
            _body: &[u8],
        ) -> Result<Response, TransportError> {
            if method != Method::Get {
                return Err(TransportError::InvalidRequest(
                    "only GET is answered".into(),
                ));
            }
            let (status, body) = (self.0)(url);
            Ok(Response { status, body })
        }

        fn log(&self, _level: Level, _message: &str) {}
    }
}
