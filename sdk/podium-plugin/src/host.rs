//! The host's imports as the SDK calls them: the component's imports in a wasm build, the
//! [`testing`](crate::testing) harness in a native one.

#[cfg(target_arch = "wasm32")]
pub(crate) use wasm::*;

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::testing::imports::*;

/// The `log` and `config` imports of the world the component exports: 0.1.0's for an IPAM
/// strategy or a renderer, 0.3.0's for a driver. Each world's exports bind theirs before the
/// plugin's code runs, so a component imports only its own world's (the other's functions are
/// never referenced, and the linker drops them).
#[cfg_attr(
    not(target_arch = "wasm32"),
    allow(dead_code, reason = "the native harness answers the imports itself")
)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Imports {
    pub(crate) log: fn(crate::log::Level, &str),
    pub(crate) config: fn() -> String,
}

/// Binds 0.1.0's imports: the exports of an IPAM strategy or a renderer call this first.
pub(crate) fn bind_0_1() {
    #[cfg(target_arch = "wasm32")]
    wasm::bind(Imports {
        log: |level, message| {
            crate::wit::hardware_driver::podium::plugin::log::log(level, message);
        },
        config: crate::wit::hardware_driver::podium::plugin::config::get,
    });
}

/// Binds the sans-IO driver world's imports (0.3.0's): the exports of a driver call this first.
pub(crate) fn bind_exchange() {
    #[cfg(target_arch = "wasm32")]
    wasm::bind(Imports {
        log: |level, message| {
            use crate::log::Level;
            use crate::wit::exchange::podium::plugin::log::{Level as L, log};
            let level = match level {
                Level::Trace => L::Trace,
                Level::Debug => L::Debug,
                Level::Info => L::Info,
                Level::Warn => L::Warn,
                Level::Error => L::Error,
            };
            log(level, message);
        },
        config: crate::wit::exchange::podium::plugin::config::get,
    });
}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use std::sync::OnceLock;

    use super::Imports;
    use crate::log::Level;
    use crate::wit::ipam::podium::plugin::allocations;

    static IMPORTS: OnceLock<Imports> = OnceLock::new();

    /// Binds the world's imports (the first world bound is the component's only one).
    pub(crate) fn bind(imports: Imports) {
        let _ = IMPORTS.set(imports);
    }

    fn imports() -> &'static Imports {
        IMPORTS
            .get()
            .expect("the component's exports bind its imports before any plugin code runs")
    }

    pub(crate) fn log(level: Level, message: &str) {
        (imports().log)(level, message);
    }

    pub(crate) fn config() -> String {
        (imports().config)()
    }

    pub(crate) fn first_free(start: &str, end: &str) -> Option<String> {
        allocations::first_free(start, end)
    }

    pub(crate) fn is_free(address: &str) -> bool {
        allocations::is_free(address)
    }
}
