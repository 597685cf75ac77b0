//! The host side of the imports every plugin gets: `log`, `config`, `http` (in `http.rs`),
//! `allocations`, and a WASI p2 context that grants nothing.

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::{driver, driver_0_2, driver_0_3, wit_allocations, wit_log};
use super::call::Allocations;
use super::http::HttpGrant;
use super::limits::Limiter;

/// Everything a store holds for one call.
pub(crate) struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(super) limiter: Limiter,
    /// `name@version`, for the log.
    pub(super) plugin: Arc<str>,
    pub(super) config: String,
    pub(super) http: Option<HttpGrant>,
    pub(super) allocations: Option<Box<dyn Allocations>>,
    /// What the plugin wrote to stderr (a panic message, usually), bounded.
    pub(super) stderr: MemoryOutputPipe,
    /// Bytes and lines of log this call may still write (an exchange carries it from step to
    /// step).
    pub(super) log_budget: (usize, usize),
}

/// Bytes and lines of log one call may write; past either, messages are dropped with one
/// notice. Every line counts, an empty one too.
pub const LOG_BUDGET: (usize, usize) = (256 << 10, 1000);
/// One message is clipped to this many bytes (after escaping).
pub const LOG_LINE_MAX: usize = 4096;

impl PluginState {
    pub(super) fn new(
        plugin: Arc<str>,
        memory_limit: usize,
        config: String,
        http: Option<HttpGrant>,
        allocations: Option<Box<dyn Allocations>>,
    ) -> PluginState {
        let stderr = MemoryOutputPipe::new(4096);
        // No environment, arguments, stdin, stdout, preopened directories or sockets.
        let wasi = WasiCtx::builder()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .max_random_size(64 << 10)
            .build();
        PluginState {
            wasi,
            table: ResourceTable::new(),
            limiter: Limiter::new(memory_limit),
            plugin,
            config,
            http,
            allocations,
            stderr,
            log_budget: LOG_BUDGET,
        }
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// A linker with WASI p2 and the imports of one world.
pub(super) fn linker(
    engine: &Engine,
    add_world: impl FnOnce(&mut Linker<PluginState>) -> wasmtime::Result<()>,
) -> anyhow::Result<Linker<PluginState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(|e| anyhow::anyhow!("{e:#}"))?;
    add_world(&mut linker).map_err(|e| anyhow::anyhow!("{e:#}"))?;
    Ok(linker)
}

impl driver::podium::plugin::types::Host for PluginState {}

impl driver::podium::plugin::config::Host for PluginState {
    async fn get(&mut self) -> String {
        self.config.clone()
    }
}

/// Types only (chassis, composition): nothing to provide.
impl driver_0_2::podium::plugin::components::Host for PluginState {}
impl driver_0_2::podium::plugin::composition::Host for PluginState {}
impl driver_0_2::podium::plugin::settings::Host for PluginState {}
impl driver_0_2::podium::plugin::inventory::Host for PluginState {}
impl driver_0_2::podium::plugin::firmware::Host for PluginState {}

impl driver_0_2::podium::plugin::config::Host for PluginState {
    async fn get(&mut self) -> String {
        self.config.clone()
    }
}

/// 0.2.0's `log` is 0.1.0's under another name.
impl driver_0_2::podium::plugin::log::Host for PluginState {
    async fn log(&mut self, level: driver_0_2::podium::plugin::log::Level, message: String) {
        use driver_0_2::podium::plugin::log::Level;
        let level = match level {
            Level::Trace => wit_log::Level::Trace,
            Level::Debug => wit_log::Level::Debug,
            Level::Info => wit_log::Level::Info,
            Level::Warn => wit_log::Level::Warn,
            Level::Error => wit_log::Level::Error,
        };
        wit_log::Host::log(self, level, message).await;
    }
}

impl driver_0_3::podium::plugin::config::Host for PluginState {
    async fn get(&mut self) -> String {
        self.config.clone()
    }
}

/// So is 0.3.0's.
impl driver_0_3::podium::plugin::log::Host for PluginState {
    async fn log(&mut self, level: driver_0_3::podium::plugin::log::Level, message: String) {
        use driver_0_3::podium::plugin::log::Level;
        let level = match level {
            Level::Trace => wit_log::Level::Trace,
            Level::Debug => wit_log::Level::Debug,
            Level::Info => wit_log::Level::Info,
            Level::Warn => wit_log::Level::Warn,
            Level::Error => wit_log::Level::Error,
        };
        wit_log::Host::log(self, level, message).await;
    }
}

impl wit_log::Host for PluginState {
    async fn log(&mut self, level: wit_log::Level, message: String) {
        let (bytes, lines) = self.log_budget;
        if bytes == 0 || lines == 0 {
            return;
        }
        // Escaped: a newline in the message cannot start a line of its own in the log.
        let message = super::text::plugin_text(&message, LOG_LINE_MAX);
        self.log_budget = (bytes.saturating_sub(message.len()), lines - 1);
        let plugin = &*self.plugin;
        match level {
            wit_log::Level::Trace => tracing::trace!(target: "plugin", plugin, "{message}"),
            wit_log::Level::Debug => tracing::debug!(target: "plugin", plugin, "{message}"),
            wit_log::Level::Info => tracing::info!(target: "plugin", plugin, "{message}"),
            wit_log::Level::Warn => tracing::warn!(target: "plugin", plugin, "{message}"),
            wit_log::Level::Error => tracing::error!(target: "plugin", plugin, "{message}"),
        }
        if self.log_budget.0 == 0 || self.log_budget.1 == 0 {
            let (bytes, lines) = LOG_BUDGET;
            tracing::warn!(target: "plugin", plugin, "log budget of this call ({bytes} bytes, {lines} lines) used up; further messages dropped");
        }
    }
}

impl wit_allocations::Host for PluginState {
    async fn first_free(&mut self, start: String, end: String) -> Option<String> {
        match self.allocations.as_mut() {
            Some(a) => a.first_free(&start, &end).await,
            None => None,
        }
    }

    async fn is_free(&mut self, address: String) -> bool {
        match self.allocations.as_mut() {
            Some(a) => a.is_free(&address).await,
            None => false,
        }
    }
}
