//! Calling plugins: a fresh store and instance per call, under a deadline and a memory limit,
//! with the results checked and turned into the host's own types.
//!
//! A plugin that loops, eats memory, traps or returns nonsense fails its own call with a
//! [`CallError`] that says which; nothing it does reaches another call.
//!
//! This file is the mechanics of one call (`call_export!`'s store, limits and deadline, the
//! errors); each world's calls are a file of `call/`: `driver.rs`, `ipam.rs`, `render.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, UpdateDeadline};

use super::bindings::wit_types;
use super::http::{Endpoint, GrantLimits, HttpGrant};
use super::imports::PluginState;
use super::limits::MemoryLimitExceeded;
use super::share::{Hold, LaneHook};
pub use super::system::{
    BlockLimit, BlockType, Capabilities, Chassis, ChassisType, CompositionService,
    CompositionState, Health, MediaSlot, Nic, ResourceBlock, ResourceZone, ServiceInfo, System,
    SystemKind,
};
use super::text::plugin_text;
use super::{Plugin, PluginInfo, Pre, Runtime};
pub use podium_types::{
    BootMode, BootPersistence, BootSettings, BootTarget, MediaRequest, MediaType, PowerAction,
    PowerState,
};

/// What a call may use besides the plugin's own code.
#[derive(Default)]
pub struct CallContext {
    /// The plugin's configuration (JSON text); `{}` when empty.
    pub config: String,
    /// The endpoint the `http` import may reach; none means every request is denied.
    pub endpoint: Option<Endpoint>,
    /// The host's view of a pool, for IPAM calls.
    pub allocations: Option<Box<dyn Allocations>>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("endpoint", &self.endpoint.as_ref().map(|e| e.base.as_str()))
            .finish_non_exhaustive()
    }
}

/// The host's answers to an IPAM strategy's questions about the pool it allocates from.
pub trait Allocations: Send {
    fn first_free<'a>(
        &'a mut self,
        start: &'a str,
        end: &'a str,
    ) -> futures::future::BoxFuture<'a, Option<String>>;
    fn is_free<'a>(&'a mut self, address: &'a str) -> futures::future::BoxFuture<'a, bool>;
}

/// An error a plugin reported through its WIT `error` result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    #[error("unreachable: {0}")]
    Unreachable(String),
    #[error("timeout: {0}")]
    Timeout(String),
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("remote error {status}: {message}")]
    Remote { status: u16, message: String },
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("internal plugin error: {0}")]
    Internal(String),
}

impl PluginError {
    /// Worth retrying later: the endpoint may come back.
    pub fn is_transient(&self) -> bool {
        match self {
            PluginError::Unreachable(_) | PluginError::Timeout(_) => true,
            PluginError::Remote { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

impl From<wit_types::Error> for PluginError {
    fn from(e: wit_types::Error) -> PluginError {
        use wit_types::Error as E;
        let clip = |s: String| clip(s, 2048);
        match e {
            E::Unreachable(m) => PluginError::Unreachable(clip(m)),
            E::Timeout(m) => PluginError::Timeout(clip(m)),
            E::Unauthorized(m) => PluginError::Unauthorized(clip(m)),
            E::NotFound(m) => PluginError::NotFound(clip(m)),
            E::Unsupported(m) => PluginError::Unsupported(clip(m)),
            E::InvalidConfig(m) => PluginError::InvalidConfig(clip(m)),
            E::InvalidInput(m) => PluginError::InvalidInput(clip(m)),
            E::Conflict(m) => PluginError::Conflict(clip(m)),
            E::Remote(r) => PluginError::Remote {
                status: r.status,
                message: clip(r.message),
            },
            E::Protocol(m) => PluginError::Protocol(clip(m)),
            E::Internal(m) => PluginError::Internal(clip(m)),
        }
    }
}

/// Why a plugin call failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CallError {
    #[error("plugin {plugin} did not finish within its deadline of {}s", limit.as_secs_f64())]
    Deadline { plugin: String, limit: Duration },
    /// Every plugin instance of the process stayed busy (or the instance pool had nothing left
    /// for one more): the call never ran (transient).
    #[error(
        "plugin {plugin} did not run: every plugin instance of this process stayed busy (waited {}s)",
        waited.as_secs_f64()
    )]
    Busy { plugin: String, waited: Duration },
    #[error("plugin {plugin} exceeded its memory limit of {limit} bytes")]
    MemoryLimit { plugin: String, limit: usize },
    #[error("plugin {plugin} trapped: {message}")]
    Trap { plugin: String, message: String },
    #[error("plugin {plugin} returned malformed data: {reason}")]
    Malformed { plugin: String, reason: String },
    #[error("plugin {plugin} failed: {error}")]
    Plugin {
        plugin: String,
        #[source]
        error: PluginError,
    },
    #[error("plugin {plugin} is not a {expected} plugin")]
    WrongWorld {
        plugin: String,
        expected: &'static str,
    },
    #[error("plugin {plugin} could not be started: {message}")]
    Instantiate { plugin: String, message: String },
    #[error("plugin {plugin} went past {spent}")]
    HttpBudget {
        plugin: String,
        spent: super::http::BudgetSpent,
    },
}

impl CallError {
    pub fn is_transient(&self) -> bool {
        match self {
            CallError::Plugin { error, .. } => error.is_transient(),
            CallError::Busy { .. } => true,
            _ => false,
        }
    }
}

/// Plugin text, escaped and clipped ([`plugin_text`]).
fn clip(s: String, max: usize) -> String {
    plugin_text(&s, max)
}

/// The deadline error the epoch callback traps with.
#[derive(Debug, thiserror::Error)]
#[error("deadline exceeded")]
pub(crate) struct DeadlineExceeded;

/// A store ready for one call: limits, deadline and imports set.
struct Prepared {
    store: Store<PluginState>,
    deadline: Instant,
    label: String,
    limit: Duration,
    memory_limit: usize,
    copy_limit: usize,
    _slot: tokio::sync::OwnedSemaphorePermit,
}

/// An ordinary call's results (and each import's arguments) may take this share of the plugin's
/// memory limit for the host to copy out; a discovery's, all of it. Sixteen calls at once then
/// hold at most four plugins' worth of host memory, whatever their results alias.
const COPY_SHARE: usize = 4;

/// Which limits a call runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bounds {
    /// `call_timeout`, `http_budget`.
    Call,
    /// A driver's discovery of every system behind its endpoint: `discover_timeout`,
    /// `discover_http_budget`.
    Discovery,
}

impl Runtime {
    async fn prepare(
        &self,
        plugin: &Plugin,
        context: CallContext,
        bounds: Bounds,
    ) -> Result<Prepared, CallError> {
        let (limit, budget, copy_limit) = self.bounds(bounds);
        let label = plugin.label();
        let slot = self.slot(&label, None).await?;
        let deadline = Instant::now() + limit;
        let share = share_of(&label, context.endpoint.as_ref());
        let http = self.grant(&label, context.endpoint, deadline, budget)?;
        let store = self.store(
            &label,
            self.hold(share, deadline),
            context.config,
            http,
            context.allocations,
            copy_limit,
        );
        Ok(Prepared {
            store,
            deadline,
            label,
            limit,
            memory_limit: self.inner.config.memory_limit,
            copy_limit,
            _slot: slot,
        })
    }

    /// A call's deadline, HTTP budget and copy limit.
    fn bounds(&self, bounds: Bounds) -> (Duration, Option<super::HttpBudget>, usize) {
        let config = &self.inner.config;
        match bounds {
            Bounds::Call => (
                config.call_timeout,
                config.http_budget,
                config.memory_limit / COPY_SHARE,
            ),
            Bounds::Discovery => (
                config.discover_timeout.max(config.call_timeout),
                config.discover_http_budget,
                config.memory_limit,
            ),
        }
    }

    /// A slot for one instance. An exhausted pool fails instantiation instead of waiting, so
    /// wait here. The first wait is not the plugin's time: a call's deadline starts with its
    /// first instance, and a call that waits past `slot_wait` for it fails as `Busy`, which is
    /// worth trying again. A later step of an exchange, whose call has begun, waits until the
    /// call's `deadline`.
    async fn slot(
        &self,
        label: &str,
        deadline: Option<Instant>,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, CallError> {
        let waited = match deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => self.inner.config.slot_wait,
        };
        let slot = tokio::time::timeout(waited, self.inner.slots.clone().acquire_owned())
            .await
            .map_err(|_| CallError::Busy {
                plugin: label.to_owned(),
                waited,
            })?
            .expect("the slot semaphore is never closed");
        Ok(slot)
    }

    /// One of the process's `max_calls` driver calls in flight, waited for as a slot is (and a
    /// call that does not get one in `slot_wait` never ran: `Busy`).
    pub(super) async fn call_permit(
        &self,
        label: &str,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, CallError> {
        let waited = self.inner.config.slot_wait;
        let permit = tokio::time::timeout(waited, self.inner.calls.clone().acquire_owned())
            .await
            .map_err(|_| CallError::Busy {
                plugin: label.to_owned(),
                waited,
            })?
            .expect("the call semaphore is never closed");
        Ok(permit)
    }

    /// The `http` grant of a call to `endpoint`; none without one.
    fn grant(
        &self,
        label: &str,
        endpoint: Option<Endpoint>,
        deadline: Instant,
        budget: Option<super::HttpBudget>,
    ) -> Result<Option<HttpGrant>, CallError> {
        let Some(endpoint) = endpoint else {
            return Ok(None);
        };
        let config = &self.inner.config;
        let client =
            self.inner
                .http
                .get(&endpoint.tls)
                .map_err(|message| CallError::Instantiate {
                    plugin: label.to_owned(),
                    message: format!("TLS settings of the endpoint: {message}"),
                })?;
        Ok(Some(HttpGrant::new(
            endpoint,
            client,
            self.inner.requests.clone(),
            self.inner.idle.clone(),
            self.inner.metrics.clone(),
            config.http_stub.clone(),
            GrantLimits {
                deadline,
                max_request: config.max_http_request,
                max_response: config.max_http_response,
                budget,
            },
        )))
    }

    /// A call's hold on the lanes, in `share`'s turn, until `deadline`.
    pub(super) fn hold(&self, share: Arc<str>, deadline: Instant) -> Hold {
        Hold::new(self.inner.lanes.clone(), share, deadline)
    }

    /// A store for one instance: the memory limit, the copy limit, the deadline, the imports.
    fn store(
        &self,
        label: &str,
        hold: Hold,
        config_text: String,
        http: Option<HttpGrant>,
        allocations: Option<Box<dyn Allocations>>,
        copy_limit: usize,
    ) -> Store<PluginState> {
        let deadline = hold.deadline();
        let config_text = if config_text.is_empty() {
            "{}".to_owned()
        } else {
            config_text
        };
        let state = PluginState::new(
            Arc::from(label),
            self.inner.config.memory_limit,
            config_text,
            http,
            allocations,
        );
        let mut store = Store::new(&self.inner.engine, state);
        store.limiter(|state| &mut state.limiter);
        // What the host copies out of the plugin's memory, each time it lifts a result or an
        // import's arguments (wasmtime's "hostcall fuel"; 128 MiB unless set).
        store.set_hostcall_fuel(copy_limit);
        // The plugin's code runs only while its call holds a lane (`share.rs`).
        store.call_hook_async(LaneHook(hold.clone()));
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Err(DeadlineExceeded.into())
            } else if hold.contended() {
                // Another call waits for a lane: this one gives its lane up and queues again,
                // behind every other pod manager's turn.
                let hold = hold.clone();
                Ok(UpdateDeadline::YieldCustom(
                    1,
                    Box::pin(async move {
                        hold.give_up();
                        // A missed deadline is caught at the next tick.
                        hold.take().await;
                    }),
                ))
            } else {
                // Yield to tokio every tick so a busy plugin cannot hold a worker thread.
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store
    }
}

/// Whose turn a call's code runs in (`share.rs`): its endpoint's pod manager, or the plugin
/// for a call with none (an IPAM or renderer call, a driver's configuration check).
pub(super) fn share_of(label: &str, endpoint: Option<&Endpoint>) -> Arc<str> {
    match endpoint.and_then(|e| e.pod_manager.as_ref()) {
        Some(pod_manager) => Arc::from(format!("pod-manager:{pod_manager}")),
        None => Arc::from(format!("plugin:{label}")),
    }
}

impl Prepared {
    /// Runs `fut` (which uses this store) under the deadline, turning traps into `CallError`s.
    async fn guard<T>(
        label: &str,
        limit: Duration,
        memory_limit: usize,
        deadline: Instant,
        fut: impl Future<Output = wasmtime::Result<T>>,
    ) -> Result<T, CallError> {
        // Epochs do not interrupt a host import that blocks; the timeout does.
        let grace = Duration::from_millis(250);
        match tokio::time::timeout_at((deadline + grace).into(), fut).await {
            Err(_) => Err(CallError::Deadline {
                plugin: label.to_owned(),
                limit,
            }),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(trap_error(label, limit, memory_limit, e)),
        }
    }

    fn explain(&self, e: CallError) -> CallError {
        explain(&self.store, self.copy_limit, e)
    }
}

/// Says what a trap was: more to copy than the host lifts from one call, or the plugin's own
/// failure, with its stderr (usually its panic message).
fn explain(store: &Store<PluginState>, copy_limit: usize, e: CallError) -> CallError {
    match e {
        // wasmtime's error for it is private: its words are all there is to match (pinned by
        // the `bulky` fault test).
        CallError::Trap { plugin, message }
            if message.contains("fuel allocated for hostcalls has been exhausted") =>
        {
            CallError::Malformed {
                plugin,
                reason: format!(
                    "it gave the host more than {copy_limit} bytes to copy at once, the limit of one call"
                ),
            }
        }
        CallError::Trap { plugin, message } => {
            let stderr = stderr_tail(store);
            let message = if stderr.is_empty() {
                message
            } else {
                format!("{message}; it wrote: {}", plugin_text(&stderr, 1024))
            };
            CallError::Trap { plugin, message }
        }
        other => other,
    }
}

fn stderr_tail(store: &Store<PluginState>) -> String {
    let bytes = store.data().stderr.contents();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

fn trap_error(label: &str, limit: Duration, memory_limit: usize, e: wasmtime::Error) -> CallError {
    let plugin = label.to_owned();
    // The pool had no memory, table or stack left: the process is busy, the plugin is not at
    // fault.
    if e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>()
        .is_some()
    {
        return CallError::Busy {
            plugin,
            waited: Duration::ZERO,
        };
    }
    if e.downcast_ref::<DeadlineExceeded>().is_some() {
        return CallError::Deadline { plugin, limit };
    }
    if e.downcast_ref::<MemoryLimitExceeded>().is_some() {
        return CallError::MemoryLimit {
            plugin,
            limit: memory_limit,
        };
    }
    if let Some(trap) = e.downcast_ref::<wasmtime::Trap>() {
        return CallError::Trap {
            plugin,
            message: trap.to_string(),
        };
    }
    CallError::Trap {
        plugin,
        message: plugin_text(&format!("{e:#}"), 1024),
    }
}

/// Runs one export call on a fresh instance of a plugin of a given world.
macro_rules! call_export {
    ($runtime:expr, $plugin:expr, $context:expr, $variant:ident, $expected:literal, |$b:ident, $s:ident| $call:expr) => {
        call_export!(
            bounds = $crate::call::Bounds::Call,
            $runtime,
            $plugin,
            $context,
            $variant,
            $expected,
            |$b, $s| $call
        )
    };
    (bounds = $bounds:expr, $runtime:expr, $plugin:expr, $context:expr, $variant:ident, $expected:literal, |$b:ident, $s:ident| $call:expr) => {{
        let plugin: &Plugin = $plugin;
        let runtime: &Runtime = &$runtime;
        let started = std::time::Instant::now();
        // Boxed, as the 0.2.0 exchange is (`finished!`): neither path's future makes the
        // other's caller larger.
        let outcome = Box::pin(async {
            let Pre::$variant(pre) = &plugin.inner.pre else {
                return Err(CallError::WrongWorld {
                    plugin: plugin.label(),
                    expected: $expected,
                });
            };
            let mut prepared = runtime.prepare(plugin, $context, $bounds).await?;
            let (label, limit, memory_limit, deadline) = (
                prepared.label.clone(),
                prepared.limit,
                prepared.memory_limit,
                prepared.deadline,
            );
            let result = Prepared::guard(&label, limit, memory_limit, deadline, async {
                let $b = pre.instantiate_async(&mut prepared.store).await?;
                let $s = &mut prepared.store;
                $call.await
            })
            .await;
            if prepared.store.data().limiter.memory_exceeded {
                return Err(CallError::MemoryLimit {
                    plugin: label,
                    limit: memory_limit,
                });
            }
            if let Some(spent) = prepared
                .store
                .data()
                .http
                .as_ref()
                .and_then(|g| g.budget_spent())
            {
                return Err(CallError::HttpBudget {
                    plugin: label,
                    spent,
                });
            }
            let result = result.map_err(|e| prepared.explain(e))?;
            Ok((label, result))
        })
        .await;
        runtime.inner.ended.one();
        runtime.inner.metrics.call(
            &plugin.info().name,
            $crate::metrics::export_name(stringify!($call)),
            started.elapsed(),
            outcome.as_ref().err(),
        );
        outcome?
    }};
}

mod driver;
mod exchange;
mod exchange_0_2;
mod ipam;
mod render;
pub use driver::DriverCall;
pub use ipam::{IpamCall, IpamHost, IpamPool, IpamRequest};
pub use render::{
    ConsumerInput, NetworkPolicy, PoolNeed, RenderAddress, RenderCall, RenderHost, RenderInput,
};

/// Asks a plugin of any world for its name, version and description.
pub(super) async fn info(runtime: &Runtime, plugin: &Plugin) -> Result<PluginInfo, CallError> {
    let context = CallContext::default();
    let (label, info) = match &plugin.inner.pre {
        Pre::Driver(_) => call_export!(
            runtime,
            plugin,
            context,
            Driver,
            "hardware-driver",
            |b, s| b.podium_plugin_plugin().call_info(s)
        ),
        Pre::Exchange(_) => call_export!(
            runtime,
            plugin,
            context,
            Exchange,
            "hardware-driver",
            |b, s| b.podium_plugin_plugin().call_info(s)
        ),
        Pre::Exchange0_2(_) => call_export!(
            runtime,
            plugin,
            context,
            Exchange0_2,
            "hardware-driver",
            |b, s| b.podium_plugin_plugin().call_info(s)
        ),
        Pre::Ipam(_) => call_export!(runtime, plugin, context, Ipam, "ipam", |b, s| b
            .podium_plugin_plugin()
            .call_info(s)),
        Pre::Renderer(_) => call_export!(runtime, plugin, context, Renderer, "renderer", |b, s| b
            .podium_plugin_plugin()
            .call_info(s)),
    };
    let _ = label;
    Ok(PluginInfo {
        name: clip(info.name, 256),
        version: clip(info.version, 256),
        description: clip(info.description, 8192),
    })
}

impl Runtime {
    /// Asks a plugin of any world to check a configuration document.
    pub async fn validate_config(&self, plugin: &Plugin, config: &str) -> Result<(), CallError> {
        let context = CallContext::default();
        let config = config.to_owned();
        let (label, result) = match &plugin.inner.pre {
            Pre::Driver(_) => {
                call_export!(self, plugin, context, Driver, "hardware-driver", |b, s| b
                    .podium_plugin_plugin()
                    .call_validate_config(s, &config))
            }
            Pre::Exchange(_) => {
                call_export!(
                    self,
                    plugin,
                    context,
                    Exchange,
                    "hardware-driver",
                    |b, s| b.podium_plugin_plugin().call_validate_config(s, &config)
                )
            }
            Pre::Exchange0_2(_) => {
                call_export!(
                    self,
                    plugin,
                    context,
                    Exchange0_2,
                    "hardware-driver",
                    |b, s| b.podium_plugin_plugin().call_validate_config(s, &config)
                )
            }
            Pre::Ipam(_) => call_export!(self, plugin, context, Ipam, "ipam", |b, s| b
                .podium_plugin_plugin()
                .call_validate_config(s, &config)),
            Pre::Renderer(_) => {
                call_export!(self, plugin, context, Renderer, "renderer", |b, s| b
                    .podium_plugin_plugin()
                    .call_validate_config(s, &config))
            }
        };
        result.map_err(|e| CallError::Plugin {
            plugin: label,
            error: e.into(),
        })
    }
}

pub(super) fn plugin_err(label: String) -> impl FnOnce(wit_types::Error) -> CallError {
    move |e| CallError::Plugin {
        plugin: label,
        error: e.into(),
    }
}
