//! Tells what an uploaded binary is: not WebAssembly, a core module, a component of another WIT
//! version, a component of none of Podium's worlds, or one that misses an export. Each answer
//! names exactly what is wrong, because plugin authors read these messages.

use wasmtime::Engine;
use wasmtime::component::Component;

use super::{Contract, PluginInfo, World};

/// Why a binary could not be loaded as a plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("not a WebAssembly binary (it does not start with the `\\0asm` magic number)")]
    NotWasm,
    #[error(
        "a core WebAssembly module, not a component: build it for the wasm32-wasip2 target, or wrap it with `wasm-tools component new`"
    )]
    CoreModule,
    #[error("not a valid component: {0}")]
    Invalid(String),
    #[error(
        "targets the WIT package {found}, but this host implements podium:plugin@0.1.0 (every world), podium:plugin@0.2.0 and podium:plugin@0.3.0 (hardware-driver); rebuild the plugin against wit/podium-plugin@0.3.0 (a driver) or wit/podium-plugin@0.1.0"
    )]
    IncompatibleVersion { found: String },
    #[error(
        "implements none of Podium's worlds: it must export `podium:plugin/driver@0.3.0`, `podium:plugin/driver@0.2.0` or `podium:plugin/driver@0.1.0` (hardware-driver), `podium:plugin/allocator@0.1.0` (ipam) or `podium:plugin/render@0.1.0` (renderer), together with `podium:plugin/plugin` of the same version; it exports {exports}"
    )]
    NoWorld { exports: String },
    #[error("exports more than one of Podium's worlds ({0}); a plugin implements exactly one")]
    ManyWorlds(String),
    #[error("does not implement the {world} world completely: {detail}")]
    MissingExport { world: World, detail: String },
    #[error("imports something this host does not provide: {0}")]
    UnsatisfiedImport(String),
    #[error("calling its `info` export failed: {0}")]
    Info(String),
    #[error("its `info` export returned an invalid {field}: {reason}")]
    BadInfo { field: &'static str, reason: String },
    #[error("internal error while loading: {0}")]
    Internal(String),
}

impl LoadError {
    pub(super) fn compile(e: wasmtime::Error) -> LoadError {
        LoadError::Invalid(format!("{e:#}"))
    }
}

pub(super) fn check_header(bytes: &[u8]) -> Result<(), LoadError> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadError::NotWasm);
    }
    // Bytes 4..8: a core module is version 1, layer 0; a component has layer 1.
    match bytes[6..8] {
        [0, 0] => Err(LoadError::CoreModule),
        [1, 0] => Ok(()),
        _ => Err(LoadError::Invalid(
            "unknown WebAssembly binary layer".into(),
        )),
    }
}

pub(super) const PLUGIN_EXPORT: &str = "podium:plugin/plugin@0.1.0";

/// The `plugin` interface a component of `contract` exports.
pub(super) fn plugin_export(contract: Contract) -> &'static str {
    match contract {
        Contract::V0_1_0 => PLUGIN_EXPORT,
        Contract::V0_2_0 => "podium:plugin/plugin@0.2.0",
        Contract::V0_3_0 => "podium:plugin/plugin@0.3.0",
    }
}

/// The interface that marks a world of a contract, where the contract has that world.
fn world_export(world: World, contract: Contract) -> Option<&'static str> {
    match (contract, world) {
        (Contract::V0_1_0, World::HardwareDriver) => Some("podium:plugin/driver@0.1.0"),
        (Contract::V0_1_0, World::Ipam) => Some("podium:plugin/allocator@0.1.0"),
        (Contract::V0_1_0, World::Renderer) => Some("podium:plugin/render@0.1.0"),
        (Contract::V0_2_0, World::HardwareDriver) => Some("podium:plugin/driver@0.2.0"),
        (Contract::V0_2_0, _) => None,
        (Contract::V0_3_0, World::HardwareDriver) => Some("podium:plugin/driver@0.3.0"),
        (Contract::V0_3_0, _) => None,
    }
}

/// Which world of which contract a component implements, judged by its exports.
pub(super) fn world(
    engine: &Engine,
    component: &Component,
) -> Result<(World, Contract), LoadError> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let worlds: Vec<(World, Contract)> = Contract::ALL
        .into_iter()
        .flat_map(|c| World::ALL.into_iter().map(move |w| (w, c)))
        .filter(|(w, c)| world_export(*w, *c).is_some_and(|name| exports.iter().any(|e| e == name)))
        .collect();
    match worlds.as_slice() {
        [(world, contract)] => {
            let plugin = plugin_export(*contract);
            if !exports.iter().any(|e| e == plugin) {
                return Err(LoadError::MissingExport {
                    world: *world,
                    detail: format!(
                        "the interface `{plugin}` (info, validate-config) is not exported"
                    ),
                });
            }
            Ok((*world, *contract))
        }
        [] => {
            if let Some(other) = exports.iter().find(|e| e.starts_with("podium:plugin/")) {
                let version = other.rsplit_once('@').map_or("unversioned", |(_, v)| v);
                return Err(LoadError::IncompatibleVersion {
                    found: format!("podium:plugin@{version}"),
                });
            }
            let exports = if exports.is_empty() {
                "nothing".to_owned()
            } else {
                exports
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            Err(LoadError::NoWorld { exports })
        }
        many => Err(LoadError::ManyWorlds(
            many.iter()
                .map(|(w, c)| format!("{w} of {c}"))
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

pub(super) fn link_error(e: wasmtime::Error) -> LoadError {
    LoadError::UnsatisfiedImport(format!("{e:#}"))
}

pub(super) fn export_error(e: wasmtime::Error) -> LoadError {
    // The bindings name the missing or mistyped export; find the world from the message.
    let detail = format!("{e:#}");
    let world = Contract::ALL
        .into_iter()
        .flat_map(|c| World::ALL.into_iter().map(move |w| (w, c)))
        .find(|(w, c)| world_export(*w, *c).is_some_and(|name| detail.contains(name)))
        .map_or(World::HardwareDriver, |(w, _)| w);
    LoadError::MissingExport { world, detail }
}

pub(super) fn check_info(info: &PluginInfo) -> Result<(), LoadError> {
    let name_ok = !info.name.is_empty()
        && info.name.len() <= 64
        && info
            .name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !name_ok {
        return Err(LoadError::BadInfo {
            field: "name",
            reason: "must be 1 to 64 characters of a-z, 0-9, `-` and `_`".into(),
        });
    }
    let version_ok = !info.version.is_empty()
        && info.version.len() <= 64
        && info
            .version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-+".contains(&b));
    if !version_ok {
        return Err(LoadError::BadInfo {
            field: "version",
            reason: "must be a version such as 1.2.3".into(),
        });
    }
    if info.description.len() > 4096 {
        return Err(LoadError::BadInfo {
            field: "description",
            reason: "must be at most 4096 bytes".into(),
        });
    }
    Ok(())
}
