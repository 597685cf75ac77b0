//! Host bindings generated from `wit/podium-plugin@0.1.0`, `@0.2.0` and `@0.3.0`: one `bindgen!`
//! per world.
//!
//! The 0.1.0 hardware-driver world generates the shared interfaces (`types`, `plugin`, `http`,
//! `log`, `config`); the other worlds reuse them through `with:` so every world sees the same Rust
//! types. 0.2.0's driver world reuses 0.1.0's types the same way (`types`, `http`'s records and
//! its `hardware` interface, which are 0.1.0's `driver` types unchanged; wasmtime checks them
//! structurally), so one `validate`/`convert` serves both contracts. Its imports (`log`, `config`)
//! are its own, linked under 0.2.0's names, as are its `components` (chassis) and `composition`
//! interfaces, new in 0.2.0. 0.3.0's driver world reuses every interface of types 0.2.0 has
//! (the same records again, under 0.3.0's names); its `driver` interface is its own (its `call`
//! has cases 0.2.0's has not), and so are its imports.

pub(crate) mod driver {
    wasmtime::component::bindgen!({
        path: "../../wit/podium-plugin@0.1.0",
        world: "hardware-driver",
        imports: { default: async },
        exports: { default: async },
    });
}

pub(crate) mod ipam {
    wasmtime::component::bindgen!({
        path: "../../wit/podium-plugin@0.1.0",
        world: "ipam",
        imports: { default: async },
        exports: { default: async },
        with: {
            "podium:plugin/types": super::driver::podium::plugin::types,
            "podium:plugin/log": super::driver::podium::plugin::log,
            "podium:plugin/config": super::driver::podium::plugin::config,
        },
    });
}

pub(crate) mod renderer {
    wasmtime::component::bindgen!({
        path: "../../wit/podium-plugin@0.1.0",
        world: "renderer",
        imports: { default: async },
        exports: { default: async },
        with: {
            "podium:plugin/types": super::driver::podium::plugin::types,
            "podium:plugin/log": super::driver::podium::plugin::log,
            "podium:plugin/config": super::driver::podium::plugin::config,
        },
    });
}

/// An interface of types only (0.2.0's, 0.3.0's), as the Rust types of an earlier contract: what
/// `with:` below names. Each links an empty instance under its own name (what bindgen would have
/// written for an interface without functions).
macro_rules! types_only {
    ($module:ident, $name:literal, $($types:tt)*) => {
        #[allow(unreachable_pub, reason = "bindgen's code re-exports them with `pub`")]
        pub mod $module {
            #[allow(unused_imports, reason = "bindgen names what it uses")]
            pub use $($types)*;

            pub trait Host {}
            impl<T: ?Sized> Host for T {}
            pub trait HostWithStore<T>: wasmtime::component::HasData {}
            impl<T, D: wasmtime::component::HasData> HostWithStore<T> for D {}

            pub fn add_to_linker<T, D: HostWithStore<T>>(
                linker: &mut wasmtime::component::Linker<T>,
                _host_getter: fn(&mut T) -> D::Data<'_>,
            ) -> wasmtime::Result<()> {
                linker.instance($name)?;
                Ok(())
            }
        }
    };
}

/// `podium:plugin@0.2.0`'s sans-IO hardware driver (`call/exchange.rs`).
pub(crate) mod driver_0_2 {
    wasmtime::component::bindgen!({
        path: "../../wit/podium-plugin@0.2.0",
        world: "hardware-driver",
        imports: { default: async },
        exports: { default: async },
        with: {
            "podium:plugin/types@0.2.0": self::types_0_2,
            "podium:plugin/http@0.2.0": self::http_0_2,
            "podium:plugin/hardware@0.2.0": self::hardware_0_2,
        },
    });

    types_only!(
        types_0_2,
        "podium:plugin/types@0.2.0",
        super::super::driver::podium::plugin::types::{Error, PluginInfo, RemoteError}
    );
    types_only!(
        http_0_2,
        "podium:plugin/http@0.2.0",
        super::super::driver::podium::plugin::http::{HttpError, Method, Request, Response}
    );
    types_only!(
        hardware_0_2,
        "podium:plugin/hardware@0.2.0",
        super::super::driver::exports::podium::plugin::driver::{
            BootMode, BootPersistence, BootSettings, BootTarget, CapabilitySet, MediaRequest,
            MediaSlot, MediaType, Nic, PowerAction, PowerState, ServiceInfo, System, SystemKind,
        }
    );
}

/// `podium:plugin@0.3.0`'s hardware driver: 0.2.0's with the calls new in 0.3.0. The host
/// speaks it to 0.2.0 drivers too (`call/exchange.rs` turns one into the other).
pub(crate) mod driver_0_3 {
    wasmtime::component::bindgen!({
        path: "../../wit/podium-plugin@0.3.0",
        world: "hardware-driver",
        imports: { default: async },
        exports: { default: async },
        with: {
            "podium:plugin/types@0.3.0": self::types_0_3,
            "podium:plugin/http@0.3.0": self::http_0_3,
            "podium:plugin/hardware@0.3.0": self::hardware_0_3,
            "podium:plugin/components@0.3.0": self::components_0_3,
            "podium:plugin/composition@0.3.0": self::composition_0_3,
            "podium:plugin/settings@0.3.0": self::settings_0_3,
            "podium:plugin/inventory@0.3.0": self::inventory_0_3,
            "podium:plugin/firmware@0.3.0": self::firmware_0_3,
        },
    });

    types_only!(
        types_0_3,
        "podium:plugin/types@0.3.0",
        super::super::driver_0_2::types_0_2::*
    );
    types_only!(
        http_0_3,
        "podium:plugin/http@0.3.0",
        super::super::driver_0_2::http_0_2::*
    );
    types_only!(
        hardware_0_3,
        "podium:plugin/hardware@0.3.0",
        super::super::driver_0_2::hardware_0_2::*
    );
    types_only!(
        components_0_3,
        "podium:plugin/components@0.3.0",
        super::super::driver_0_2::podium::plugin::components::*
    );
    types_only!(
        composition_0_3,
        "podium:plugin/composition@0.3.0",
        super::super::driver_0_2::podium::plugin::composition::*
    );
    types_only!(
        settings_0_3,
        "podium:plugin/settings@0.3.0",
        super::super::driver_0_2::podium::plugin::settings::*
    );
    types_only!(
        inventory_0_3,
        "podium:plugin/inventory@0.3.0",
        super::super::driver_0_2::podium::plugin::inventory::*
    );
    types_only!(
        firmware_0_3,
        "podium:plugin/firmware@0.3.0",
        super::super::driver_0_2::podium::plugin::firmware::*
    );
}

pub(crate) use driver::exports::podium::plugin::driver as wit_driver;
pub(crate) use driver::podium::plugin::http as wit_http;
pub(crate) use driver::podium::plugin::log as wit_log;
pub(crate) use driver::podium::plugin::types as wit_types;
pub(crate) use driver_0_2::exports::podium::plugin::driver as wit_exchange_0_2;
pub(crate) use driver_0_2::podium::plugin::components as wit_components;
pub(crate) use driver_0_2::podium::plugin::composition as wit_composition;
pub(crate) use driver_0_2::podium::plugin::firmware as wit_firmware;
pub(crate) use driver_0_2::podium::plugin::inventory as wit_inventory;
pub(crate) use driver_0_2::podium::plugin::settings as wit_settings;
pub(crate) use driver_0_3::exports::podium::plugin::driver as wit_exchange;
pub(crate) use ipam::exports::podium::plugin::allocator as wit_allocator;
pub(crate) use ipam::podium::plugin::allocations as wit_allocations;
pub(crate) use renderer::exports::podium::plugin::render as wit_render;
