//! Podium's plugin SDK: a hardware driver, an IPAM strategy or a network-config renderer, written
//! as plain Rust against one trait and built into a WebAssembly component: a driver of the
//! `podium:plugin@0.3.0` contract (`wit/podium-plugin@0.3.0`, sans-IO: see [`exchange`]), an
//! IPAM strategy or a renderer of `podium:plugin@0.1.0`.
//!
//! ```ignore
//! use podium_plugin::driver::{CapabilitySet, PowerState, ServiceInfo, System};
//! use podium_plugin::{HardwareDriver, Plugin, PluginInfo, Result, http};
//!
//! #[derive(serde::Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct MyDriver { root: String }
//!
//! impl Plugin for MyDriver {
//!     fn info() -> PluginInfo { podium_plugin::info!("my-driver", "What it drives") }
//!     fn from_config(config: &str) -> Result<Self> { podium_plugin::config::parse(config) }
//! }
//!
//! impl HardwareDriver for MyDriver { /* async fn probe, discover, get_power, ... */ }
//!
//! podium_plugin::export!(MyDriver: HardwareDriver);
//! ```
//!
//! What the SDK gives a plugin:
//! - one trait per world ([`HardwareDriver`], [`Ipam`], [`Renderer`]) on top of [`Plugin`], and
//!   [`export!`], which writes the component's exports (no `unsafe`, no WIT path in the plugin);
//! - typed configuration: [`Plugin::from_config`] is handed the admin's JSON before every call,
//!   and [`config::parse`] fails with `invalid-config` naming the field;
//! - [`http`]: requests to the one endpoint the plugin acts for, JSON in and out, the contract's
//!   error meaning of an HTTP status ([`ErrorExt::from_status`]) and Redfish collections;
//! - [`log`];
//! - [`testing`] (native builds only): runs the same code in `cargo test` against a real HTTP
//!   server or an in-process endpoint, under the limits the host enforces.
//!
//! The bindings the SDK is built on are in [`wit`]; a plugin seldom needs them.

pub mod config;
pub mod driver;
pub mod exchange;
pub mod http;
pub mod ipam;
pub mod log;
pub mod render;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

mod error;
mod host;

pub use driver::HardwareDriver;
pub use error::{Error, ErrorExt, RemoteError, Result, truncate};

/// What a plugin usually names: `use podium_plugin::prelude::*;`.
pub mod prelude {
    pub use crate::{Error, ErrorExt, HardwareDriver, Ipam, Plugin, PluginInfo, Renderer, Result};
}
pub use ipam::Ipam;
pub use render::Renderer;

/// What a plugin says about itself (`info`): see [`info!`].
pub use wit::hardware_driver::podium::plugin::types::PluginInfo;

/// The version of the contract this SDK builds drivers against (IPAM strategies and renderers:
/// `podium:plugin@0.1.0`, whose worlds 0.2.0 and 0.3.0 left as they were).
pub const WIT_PACKAGE: &str = "podium:plugin@0.3.0";

/// What every plugin is, whatever its world.
pub trait Plugin: Sized {
    /// Name, version and description (see [`info!`]).
    fn info() -> PluginInfo;

    /// Builds the plugin from the configuration the admin set (JSON text; `{}` when none).
    ///
    /// Called before every call, and by the host's `validate-config` before it stores a
    /// configuration; fail with [`Error::InvalidConfig`] naming the field. [`config::parse`] is
    /// the usual body for a type that derives `Deserialize`.
    fn from_config(config: &str) -> Result<Self>;
}

/// Builds the plugin from the host's configuration and runs one call with it: what the exports
/// of an IPAM strategy and a renderer (0.1.0) do.
pub(crate) fn with_config<T: Plugin, R>(call: impl FnOnce(&T) -> Result<R>) -> Result<R> {
    host::bind_0_1();
    call(&T::from_config(&host::config())?)
}

/// `PluginInfo` with the plugin crate's own version: `info!("name", "description")`.
#[macro_export]
macro_rules! info {
    ($name:expr, $description:expr $(,)?) => {
        $crate::PluginInfo {
            name: ::std::string::String::from($name),
            version: ::std::string::String::from(::std::env!("CARGO_PKG_VERSION")),
            description: ::std::string::String::from($description),
        }
    };
}

/// Exports a type as the component: `export!(MyDriver: HardwareDriver)`, `export!(MyIpam: Ipam)`
/// or `export!(MyRenderer: Renderer)`, once per plugin crate.
///
/// In a wasm build this writes the component's exports; in a native build (tests, clippy) it only
/// checks that the type implements the trait.
#[macro_export]
macro_rules! export {
    ($ty:ty : HardwareDriver) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type PodiumExport = $crate::driver::Export<$ty>;
            $crate::wit::exchange::export_exchange_driver!(
                PodiumExport with_types_in $crate::wit::exchange
            );
        };
        $crate::export!(@check $ty, $crate::HardwareDriver);
    };
    ($ty:ty : Ipam) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type PodiumExport = $crate::ipam::Export<$ty>;
            $crate::wit::ipam::export_ipam!(PodiumExport with_types_in $crate::wit::ipam);
        };
        $crate::export!(@check $ty, $crate::Ipam);
    };
    ($ty:ty : Renderer) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type PodiumExport = $crate::render::Export<$ty>;
            $crate::wit::renderer::export_renderer!(
                PodiumExport with_types_in $crate::wit::renderer
            );
        };
        $crate::export!(@check $ty, $crate::Renderer);
    };
    (@check $ty:ty, $trait:path) => {
        const _: fn() = || {
            fn implements<T: $trait>() {}
            implements::<$ty>();
        };
    };
}

/// The bindings of the contract's worlds, generated by `wit-bindgen` (one crate each: see
/// `sdk/bindings/hardware-driver`): 0.3.0's driver world (`exchange`), and 0.1.0's three. The
/// types they share (`types`, `http`, the driver's records) are those of `hardware_driver`.
#[doc(hidden)]
pub mod wit {
    pub use podium_plugin_bindings as hardware_driver;
    pub use podium_plugin_bindings_exchange as exchange;
    pub use podium_plugin_bindings_ipam as ipam;
    pub use podium_plugin_bindings_renderer as renderer;
}

/// What the macros above expand to in a plugin crate. Not part of the SDK's API.
#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;
}
