//! Host bindings generated from `wit/podium-plugin@0.1.0`: one `bindgen!` per world.
//!
//! The hardware-driver world generates the shared interfaces (`types`, `plugin`, `http`, `log`,
//! `config`); the other worlds reuse them through `with:` so every world sees the same Rust types.

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

pub(crate) use driver::exports::podium::plugin::driver as wit_driver;
pub(crate) use driver::podium::plugin::http as wit_http;
pub(crate) use driver::podium::plugin::log as wit_log;
pub(crate) use driver::podium::plugin::types as wit_types;
pub(crate) use ipam::exports::podium::plugin::allocator as wit_allocator;
pub(crate) use ipam::podium::plugin::allocations as wit_allocations;
pub(crate) use renderer::exports::podium::plugin::render as wit_render;
