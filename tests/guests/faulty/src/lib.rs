//! `faulty`: a hardware driver (world `hardware-driver`) that misbehaves on purpose, for the host's
//! fault-containment tests. The behaviour is chosen at call time from the config import,
//! `{"fault": "...", "target": "..."}`:
//!
//! - `"ok"` (default): small valid results; `get-power` does one HTTP round trip.
//! - `"spin"`: loops forever. `"hog"`: allocates memory without bound.
//! - `"trap"`: panics. `"abort"`: executes `unreachable` (no panic message).
//! - `"escape"`: GETs the absolute URL in `"target"` through the `http` import.
//! - `"garbage"`: returns well-typed but semantically wrong data.
//! - `"flood"`: GETs its endpoint's `/` again and again until the `http` import refuses.
//! - `"log-flood"`: logs a message with a forged log line in it, then empty messages in a loop.
//! - `"bulky"`: `inspect` answers a system with `"mib"` (default 48) NICs whose MACs are 1 MiB
//!   strings each: more for the host to copy than it lifts from one call.
//! - `"alias"`: `inspect` answers a system with `"nics"` (default 120) NICs whose MACs all
//!   point at one 1 MiB buffer: a small plugin that makes the host copy a lot.
//! - `"nul-error"`: fails with an `unreachable` error whose message holds a NUL, a newline and
//!   an escape sequence.
//!
//! With `"systems": N`, `discover` answers N systems (`/redfish/v1/Systems/0`...) when the fault
//! does not say otherwise.
//!
//! `probe`, `discover` and `get-power` act on the fault; the other functions succeed or answer
//! `unsupported`.

wit_bindgen::generate!({
    path: "../../../wit/podium-plugin@0.1.0",
    world: "hardware-driver",
});

use std::hint::black_box;

use exports::podium::plugin::driver::{
    BootSettings, CapabilitySet, Guest as DriverGuest, MediaRequest, MediaType, Nic, PowerAction,
    PowerState, ServiceInfo, System, SystemKind,
};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use podium::plugin::http::{self, HttpError, Method, Request, Response};
use podium::plugin::log::{self, Level};
use podium::plugin::types::{Error, PluginInfo};

const MIB: usize = 1 << 20;

/// What the config asks this call to do.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fault {
    Ok,
    Spin,
    Hog,
    Trap,
    Abort,
    Escape(String),
    Garbage,
    Flood,
    LogFlood,
    NulError,
    Bulky(usize),
    Alias(usize),
}

impl Fault {
    /// Reads the fault from the config import (and logs it, unless it is `ok`: the round-trip
    /// benchmark calls `get-power` with `ok`).
    fn current() -> Result<Self, Error> {
        let fault = Self::parse(&podium::plugin::config::get()).map_err(Error::InvalidConfig)?;
        if fault != Self::Ok {
            log::log(Level::Info, &format!("faulty: fault {fault:?}"));
        }
        Ok(fault)
    }

    fn parse(config: &str) -> Result<Self, String> {
        let value: serde_json::Value =
            serde_json::from_str(config).map_err(|e| format!("configuration: not JSON: {e}"))?;
        let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str);
        Ok(match field("fault").unwrap_or("ok") {
            "ok" => Self::Ok,
            "spin" => Self::Spin,
            "hog" => Self::Hog,
            "trap" => Self::Trap,
            "abort" => Self::Abort,
            "escape" => Self::Escape(
                field("target")
                    .ok_or("target: required for fault \"escape\"")?
                    .to_string(),
            ),
            "garbage" => Self::Garbage,
            "flood" => Self::Flood,
            "log-flood" => Self::LogFlood,
            "nul-error" => Self::NulError,
            "alias" => Self::Alias(
                value
                    .get("nics")
                    .and_then(serde_json::Value::as_u64)
                    .map_or(120, |n| n as usize),
            ),
            "bulky" => Self::Bulky(
                value
                    .get("mib")
                    .and_then(serde_json::Value::as_u64)
                    .map_or(48, |n| n as usize),
            ),
            other => return Err(format!("fault: unknown fault {other:?}")),
        })
    }

    /// Runs the faults that never return normally, and those that end in an error.
    fn diverge(&self) -> Result<(), Error> {
        match self {
            Self::Spin => spin(),
            Self::Hog => hog(),
            Self::Trap => panic!("faulty: trap requested by the config"),
            Self::Abort => abort(),
            Self::Flood => loop {
                get("/").map_err(http_error)?;
            },
            Self::LogFlood => {
                log::log(Level::Warn, "faulty\nINFO podium::server: forged line");
                for _ in 0..10_000_000u32 {
                    log::log(Level::Info, "");
                }
                Ok(())
            }
            Self::NulError => Err(Error::Unreachable(
                "bmc\0down\nINFO podium::server: forged\x1b[2J".into(),
            )),
            Self::Ok | Self::Escape(_) | Self::Garbage | Self::Bulky(_) | Self::Alias(_) => Ok(()),
        }
    }
}

/// Loops forever; `black_box` keeps the optimiser from proving the loop useless.
fn spin() -> ! {
    let mut counter = 0u64;
    loop {
        counter = black_box(counter.wrapping_add(1));
    }
}

/// Allocates 1 MiB blocks, writing to every page, until the host's limit (or memory) runs out.
fn hog() -> ! {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut block = vec![0u8; MIB];
        for byte in block.iter_mut().step_by(4096) {
            *byte = 0xa5;
        }
        hoard.push(block);
        black_box(&mut hoard);
    }
}

/// Traps without a panic message.
fn abort() -> ! {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    std::process::abort();
}

fn get(url: &str) -> Result<Response, HttpError> {
    http::send(&Request {
        method: Method::Get,
        url: url.to_string(),
        headers: Vec::new(),
        body: Vec::new(),
    })
}

/// Maps an `http-error` onto the WIT `error`, the message prefixed with the case name.
fn http_error(e: HttpError) -> Error {
    match e {
        HttpError::Denied(m) => Error::Internal(format!("denied: {m}")),
        HttpError::Unreachable(m) => Error::Unreachable(format!("unreachable: {m}")),
        HttpError::Timeout(m) => Error::Timeout(format!("timeout: {m}")),
        HttpError::Tls(m) => Error::Unreachable(format!("tls: {m}")),
        HttpError::TooLarge(m) => Error::Protocol(format!("too-large: {m}")),
        HttpError::InvalidRequest(m) => Error::Internal(format!("invalid-request: {m}")),
    }
}

fn body_text(response: &Response) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

fn system(id: &str, name: String, nics: Vec<Nic>) -> System {
    System {
        id: id.to_string(),
        kind: SystemKind::System,
        name,
        uuid: None,
        manufacturer: None,
        model: None,
        serial: None,
        cpu_count: 2,
        memory_mib: 1024,
        nics,
        power: PowerState::Off,
        boot: None,
        media_slots: Vec::new(),
    }
}

fn nic(mac: &str) -> Nic {
    Nic {
        id: "1".into(),
        name: None,
        mac: mac.into(),
        speed_mbps: None,
    }
}

/// `count` NICs whose MAC strings share one 1 MiB buffer (what a hostile component can hand
/// the host: the canonical ABI copies each string anew). The buffer is leaked, never freed: the
/// instance is thrown away after the call.
#[allow(unsafe_code)]
fn aliased_nics(count: usize) -> Vec<Nic> {
    let mut buffer = std::mem::ManuallyDrop::new("a".repeat(MIB));
    let (ptr, len, cap) = (buffer.as_mut_ptr(), buffer.len(), buffer.capacity());
    (0..count)
        .map(|_| Nic {
            id: "1".into(),
            name: None,
            // SAFETY: none of these strings is ever dropped or written: each is lowered (read)
            // for the host and the instance is then discarded.
            mac: unsafe { String::from_raw_parts(ptr, len, cap) },
            speed_mbps: None,
        })
        .collect()
}

/// How many systems `discover` answers (`"systems"` in the config).
fn system_count() -> usize {
    serde_json::from_str::<serde_json::Value>(&podium::plugin::config::get())
        .ok()
        .and_then(|v| v.get("systems").and_then(serde_json::Value::as_u64))
        .map_or(1, |n| n as usize)
}

/// The exported component; only `export_glue` names it, hence unused in native builds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "faulty".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Test driver that misbehaves as its config's \"fault\" says".into(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        match serde_json::from_str::<serde_json::Value>(&config) {
            Ok(serde_json::Value::Object(_)) => Ok(()),
            _ => Err(Error::InvalidConfig(
                "configuration: expected a JSON object".into(),
            )),
        }
    }
}

impl DriverGuest for Component {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER | CapabilitySet::POWER | CapabilitySet::BOOT_OVERRIDE
    }

    fn probe() -> Result<ServiceInfo, Error> {
        let fault = Fault::current()?;
        fault.diverge()?;
        match fault {
            Fault::Escape(target) => {
                let response = get(&target).map_err(http_error)?;
                Ok(ServiceInfo {
                    root_link: target,
                    product: Some(body_text(&response)),
                    version: Some(response.status.to_string()),
                })
            }
            Fault::Garbage => Ok(ServiceInfo {
                root_link: "this is neither a URL nor a path".into(),
                product: Some("faulty".into()),
                version: Some("1.0".into()),
            }),
            _ => Ok(ServiceInfo {
                root_link: "/redfish/v1".into(),
                product: Some("faulty".into()),
                version: Some("1.0".into()),
            }),
        }
    }

    fn discover() -> Result<Vec<System>, Error> {
        let fault = Fault::current()?;
        fault.diverge()?;
        match fault {
            Fault::Escape(target) => {
                let response = get(&target).map_err(http_error)?;
                Ok(vec![system(&target, body_text(&response), Vec::new())])
            }
            Fault::Garbage => Ok(vec![
                system("", "empty id".into(), vec![nic("52:54:00:00:00:02")]),
                system(
                    "/redfish/v1/Systems/dup",
                    "bad mac".into(),
                    vec![nic("zz:zz:zz")],
                ),
                system(
                    "/redfish/v1/Systems/dup",
                    "x".repeat(MIB),
                    vec![nic("52:54:00:00:00:03")],
                ),
            ]),
            _ if system_count() > 1 => Ok((0..system_count())
                .map(|i| {
                    let mac = format!("52:54:01:00:{:02x}:{:02x}", i >> 8, i & 0xff);
                    system(
                        &format!("/redfish/v1/Systems/{i}"),
                        format!("node-{i}"),
                        vec![nic(&mac)],
                    )
                })
                .collect()),
            _ => Ok(vec![system(
                "/redfish/v1/Systems/1",
                "one".into(),
                vec![nic("52:54:00:00:00:01")],
            )]),
        }
    }

    fn inspect(system_id: String) -> Result<System, Error> {
        let fault = Fault::current()?;
        fault.diverge()?;
        if let Fault::Bulky(mib) = fault {
            let nics = (0..mib)
                .map(|i| nic(&format!("{i:08}{}", "0".repeat(MIB - 8))))
                .collect();
            return Ok(system(&system_id, "bulky".into(), nics));
        }
        if let Fault::Alias(count) = fault {
            return Ok(system(&system_id, "alias".into(), aliased_nics(count)));
        }
        Ok(system(
            &system_id,
            "one".into(),
            vec![nic("52:54:00:00:00:01")],
        ))
    }

    fn get_power(_system_id: String) -> Result<PowerState, Error> {
        let fault = Fault::current()?;
        fault.diverge()?;
        let url = match &fault {
            Fault::Escape(target) => target.as_str(),
            Fault::Garbage => return Ok(PowerState::Unknown),
            _ => "/redfish/v1/Systems/1",
        };
        let response = get(url).map_err(http_error)?;
        let body = body_text(&response);
        if response.status >= 400 {
            return Err(Error::Remote(podium::plugin::types::RemoteError {
                status: response.status,
                message: body,
            }));
        }
        Ok(if body.contains("\"On\"") {
            PowerState::On
        } else {
            PowerState::Off
        })
    }

    fn set_power(_system_id: String, _action: PowerAction) -> Result<(), Error> {
        Ok(())
    }

    fn set_boot_override(_system_id: String, _settings: BootSettings) -> Result<(), Error> {
        Ok(())
    }

    fn insert_media(_system_id: String, _request: MediaRequest) -> Result<(), Error> {
        Err(Error::Unsupported("faulty: virtual media".into()))
    }

    fn eject_media(_system_id: String, _media_type: MediaType) -> Result<(), Error> {
        Err(Error::Unsupported("faulty: virtual media".into()))
    }
}

/// `export!` expands to the exports' C-ABI shims (`export_name`, raw pointers), which are `unsafe`;
/// the workspace denies `unsafe_code`, so the lint is allowed for that expansion alone. Native
/// builds (unit tests, clippy) leave it out: export names like `podium:plugin/...#info` are not
/// valid symbols for a native linker.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
