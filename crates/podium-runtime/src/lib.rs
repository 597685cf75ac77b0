//! The plugin runtime: the only module of the host that uses wasmtime directly.
//!
//! One [`Runtime`] per process owns the wasmtime `Engine` (pooling allocator where the machine
//! allows it, epoch interruption), compiles each component once per content hash (caching the
//! compiled artefact on disk), pre-links it for its world, and runs every call in a fresh store
//! with a wall-clock deadline, a memory limit and no ambient authority.
//!
//! **Architecture Invariant:** nothing outside this module names a wasmtime or wasmtime-wasi type;
//! an upgrade of wasmtime touches this module only.

mod bindings;
mod cache;
mod call;
mod convert;
mod detect;
mod http;
mod imports;
mod limits;
mod metrics;
mod share;
mod system;
mod text;
mod trim;
mod validate;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

pub use call::{
    Allocations, BlockLimit, BlockType, BootMode, BootPersistence, BootSettings, BootTarget,
    CallContext, CallError, Capabilities, Chassis, ChassisType, CompositionService,
    CompositionState, ConsumerInput, DriverCall, Health, IpamCall, IpamHost, IpamPool, IpamRequest,
    MediaRequest, MediaSlot, MediaType, NetworkPolicy, Nic, PluginError, PoolNeed, PowerAction,
    PowerState, RenderAddress, RenderCall, RenderHost, RenderInput, ResourceBlock, ResourceZone,
    ServiceInfo, System, SystemKind,
};
pub use detect::LoadError;
pub use http::{
    BudgetSpent, Credentials, Endpoint, HttpBudget, HttpStub, TlsPolicy, certificate_sha256,
    pinned_client,
};
pub use imports::{LOG_BUDGET, LOG_LINE_MAX};
pub use metrics::latency_histogram;
pub use share::default_lanes;

use self::bindings::{driver, driver_0_2, driver_0_3, ipam, renderer};
use self::imports::PluginState;

/// The component-model world a plugin implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum World {
    HardwareDriver,
    Ipam,
    Renderer,
}

impl World {
    pub const ALL: [World; 3] = [World::HardwareDriver, World::Ipam, World::Renderer];

    pub fn as_str(self) -> &'static str {
        match self {
            World::HardwareDriver => "hardware-driver",
            World::Ipam => "ipam",
            World::Renderer => "renderer",
        }
    }

    pub fn parse(s: &str) -> Option<World> {
        World::ALL.into_iter().find(|w| w.as_str() == s)
    }
}

impl std::fmt::Display for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version of the plugin contract (`wit/podium-plugin@VERSION`) this host serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Contract {
    /// Every world; a driver's call holds its instance while its BMC answers.
    V0_1_0,
    /// The hardware-driver world only, sans-IO: a driver's call is an exchange of steps that
    /// holds no instance while its BMC answers (`call/exchange.rs`).
    V0_2_0,
    /// 0.2.0's hardware-driver world with chassis power.
    V0_3_0,
}

impl Contract {
    pub const ALL: [Contract; 3] = [Contract::V0_1_0, Contract::V0_2_0, Contract::V0_3_0];
    /// What `podium plugin new` builds and the SDK speaks, for drivers.
    pub const NEWEST: Contract = Contract::V0_3_0;

    /// The WIT package: `podium:plugin@0.3.0`.
    pub fn as_str(self) -> &'static str {
        match self {
            Contract::V0_1_0 => "podium:plugin@0.1.0",
            Contract::V0_2_0 => "podium:plugin@0.2.0",
            Contract::V0_3_0 => "podium:plugin@0.3.0",
        }
    }
}

impl std::fmt::Display for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Limits applied to every plugin call.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Wall-clock deadline of one call, instantiation included.
    pub call_timeout: Duration,
    /// The deadline of a driver's `discover`, which reads the inventory of every system behind
    /// an endpoint (a pod manager of a thousand systems takes minutes): at least `call_timeout`.
    pub discover_timeout: Duration,
    /// Linear memory a call may grow to, all memories of the component together.
    pub memory_limit: usize,
    /// Plugin instances alive at once, process-wide; further calls wait for a slot. A 0.1.0
    /// driver's call holds one while it waits on its endpoint; a 0.2.0 driver's, only while a
    /// step runs.
    pub max_instances: u32,
    /// 0.2.0 driver calls in flight at once, process-wide, each waiting on its endpoint with
    /// its state and sockets (and at most `parallel_requests` requests): what bounds the BMC
    /// exchanges of a process, and the operations it runs at once.
    pub max_calls: u32,
    /// Plugins' requests to their endpoints in flight at once, process-wide: a socket each, so
    /// a bound below the open files limit (`podium serve` sets half of it, the other half for
    /// the idle connections kept, `idle_connections`, the database and the listeners).
    pub max_requests: usize,
    /// Connections to endpoints kept open idle, process-wide, for an endpoint's next request
    /// (one an endpoint at most, for a few seconds): past it, an endpoint without one has its
    /// connection closed after each answer.
    pub idle_connections: usize,
    /// How long a call waits for a slot before it fails as `Busy` (not counted in its
    /// deadline, which starts with its instance).
    pub slot_wait: Duration,
    /// Largest request body a plugin may send through the `http` import.
    pub max_http_request: usize,
    /// Largest response body the `http` import hands back to a plugin.
    pub max_http_response: usize,
    /// What one call may send to its endpoint in all; `None` for no bound.
    pub http_budget: Option<HttpBudget>,
    /// The same for a driver's `discover`, which reads every system behind the endpoint.
    pub discover_http_budget: Option<HttpBudget>,
    /// Requests of one step of a 0.2.0 driver's exchange in flight at once (a step may ask for
    /// a collection's thousand members): what one call asks of its BMC at a time.
    pub parallel_requests: usize,
    /// Plugin calls whose code runs at once, process-wide (`share.rs`): fewer than the
    /// process's worker threads, so that plugins never hold them all; handed out round-robin
    /// between pod managers. By default one fewer than the machine's threads, at least one.
    pub lanes: usize,
    /// Where compiled components are cached; `None` compiles on every start.
    pub cache_dir: Option<PathBuf>,
    /// Answer the `http` import in-process (benchmarks only).
    pub http_stub: Option<HttpStub>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_timeout: Duration::from_secs(10),
            discover_timeout: Duration::from_secs(600),
            memory_limit: 64 << 20,
            max_instances: 256,
            max_calls: 4096,
            max_requests: 4096,
            idle_connections: 1024,
            slot_wait: Duration::from_secs(60),
            max_http_request: 1 << 20,
            max_http_response: 16 << 20,
            http_budget: Some(HttpBudget::CALL),
            discover_http_budget: Some(HttpBudget::DISCOVERY),
            parallel_requests: 16,
            lanes: share::default_lanes(),
            cache_dir: None,
            http_stub: None,
        }
    }
}

/// The process-wide plugin runtime.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    config: RuntimeConfig,
    pooling: bool,
    slots: Arc<Semaphore>,
    /// Turns to run plugin code (`lanes`).
    lanes: Arc<share::Lanes>,
    /// Calls that ended, for the memory trim after a burst.
    ended: Arc<trim::Ended>,
    /// Driver calls of 0.2.0 in flight (`max_calls`).
    calls: Arc<Semaphore>,
    /// Requests of plugins in flight (`max_requests`).
    requests: Arc<Semaphore>,
    /// Connections kept open idle (`idle_connections`).
    idle: Arc<http::IdleConnections>,
    http: http::Clients,
    driver_linker: Linker<PluginState>,
    exchange_linker: Linker<PluginState>,
    exchange_linker_0_3: Linker<PluginState>,
    ipam_linker: Linker<PluginState>,
    renderer_linker: Linker<PluginState>,
    metrics: metrics::Metrics,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.inner.config)
            .field("pooling", &self.inner.pooling)
            .finish_non_exhaustive()
    }
}

/// How often the epoch ticker advances; the granularity of deadlines, of yields to tokio and of
/// the turns plugins take at the lanes (`share.rs`): the longest a step waits for a lane that
/// a spinning plugin holds.
const EPOCH_TICK: Duration = Duration::from_millis(1);

impl Runtime {
    pub fn new(config: RuntimeConfig) -> anyhow::Result<Runtime> {
        let (engine, pooling) = make_engine(&config)?;
        let lanes = share::Lanes::new(config.lanes);
        spawn_epoch_ticker(&engine, &lanes);
        let ended = Arc::new(trim::Ended::default());
        trim::spawn(&ended);

        let driver_linker = imports::linker(&engine, |l| {
            driver::HardwareDriver::add_to_linker::<_, wasmtime::component::HasSelf<_>>(l, |s| s)
        })?;
        let exchange_linker = imports::linker(&engine, |l| {
            driver_0_2::HardwareDriver::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
                l,
                |s| s,
            )
        })?;
        let exchange_linker_0_3 = imports::linker(&engine, |l| {
            driver_0_3::HardwareDriver::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
                l,
                |s| s,
            )
        })?;
        let ipam_linker = imports::linker(&engine, |l| {
            ipam::Ipam::add_to_linker::<_, wasmtime::component::HasSelf<_>>(l, |s| s)
        })?;
        let renderer_linker = imports::linker(&engine, |l| {
            renderer::Renderer::add_to_linker::<_, wasmtime::component::HasSelf<_>>(l, |s| s)
        })?;
        if let Some(dir) = &config.cache_dir {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Runtime {
            inner: Arc::new(Inner {
                slots: Arc::new(Semaphore::new(config.max_instances as usize)),
                lanes,
                ended,
                calls: Arc::new(Semaphore::new(config.max_calls.max(1) as usize)),
                requests: Arc::new(Semaphore::new(config.max_requests.max(1))),
                idle: Arc::new(http::IdleConnections::new(config.idle_connections)),
                http: http::Clients::default(),
                engine,
                config,
                pooling,
                driver_linker,
                exchange_linker,
                exchange_linker_0_3,
                ipam_linker,
                renderer_linker,
                metrics: metrics::Metrics::default(),
            }),
        })
    }

    /// Adds what the runtime counts (plugin calls, requests to endpoints) to `registry`.
    pub fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        self.inner.metrics.register(registry);
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// Whether the pooling allocator could be had on this machine.
    pub fn pooling(&self) -> bool {
        self.inner.pooling
    }

    /// Compiles (or loads from the cache), checks and pre-links a component, and asks it who it
    /// is. Every way an upload can be wrong is a [`LoadError`] naming what is wrong.
    pub async fn load(&self, bytes: Arc<[u8]>) -> Result<Plugin, LoadError> {
        let sha256 = hex::encode(Sha256::digest(&bytes));
        detect::check_header(&bytes)?;
        let component = self.compile(&sha256, &bytes).await?;
        let (world, contract) = detect::world(&self.inner.engine, &component)?;
        let pre = self
            .linker(world, contract)
            .instantiate_pre(&component)
            .map_err(detect::link_error)?;
        let pre = typed_pre(world, contract, pre)?;
        let mut plugin = Plugin {
            inner: Arc::new(PluginInner {
                sha256,
                size: bytes.len(),
                world,
                contract,
                info: PluginInfo::default(),
                pre,
            }),
        };
        let info = call::info(self, &plugin)
            .await
            .map_err(|e| LoadError::Info(e.to_string()))?;
        detect::check_info(&info)?;
        Arc::get_mut(&mut plugin.inner)
            .expect("plugin not shared yet")
            .info = info;
        Ok(plugin)
    }

    /// Every reason [`Runtime::load`] would refuse `bytes` that can be judged without running
    /// the component, all at once: a component whose imports this host lacks is still checked
    /// for its exports (the unknown imports stubbed). Empty when only its `info` is left to
    /// check (which `load` does).
    pub async fn problems(&self, bytes: Arc<[u8]>) -> Vec<LoadError> {
        if let Err(e) = detect::check_header(&bytes) {
            return vec![e];
        }
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let component = match self.compile(&sha256, &bytes).await {
            Ok(component) => component,
            Err(e) => return vec![e],
        };
        let mut problems = Vec::new();
        let (world, contract) = match detect::world(&self.inner.engine, &component) {
            Ok(found) => found,
            Err(LoadError::MissingExport { world, detail }) => {
                let contract = Contract::ALL
                    .into_iter()
                    .rev()
                    .find(|c| detail.contains(&c.as_str()["podium:plugin".len()..]))
                    .unwrap_or(Contract::V0_1_0);
                problems.push(LoadError::MissingExport { world, detail });
                (world, contract)
            }
            Err(e) => return vec![e],
        };
        let linker = self.linker(world, contract);
        let pre = match linker.instantiate_pre(&component) {
            Ok(pre) => Some(pre),
            Err(e) => {
                problems.push(detect::link_error(e));
                let mut stubbed = linker.clone();
                stubbed
                    .define_unknown_imports_as_traps(&component)
                    .ok()
                    .and_then(|()| stubbed.instantiate_pre(&component).ok())
            }
        };
        if let Some(pre) = pre
            && let Err(e) = typed_pre(world, contract, pre)
        {
            // The world's check above already named a missing `plugin` interface.
            if problems.is_empty() || !e.to_string().contains(detect::plugin_export(contract)) {
                problems.push(e);
            }
        }
        problems
    }

    async fn compile(&self, sha256: &str, bytes: &Arc<[u8]>) -> Result<Component, LoadError> {
        let runtime = self.clone();
        let sha256 = sha256.to_owned();
        let bytes = bytes.clone();
        tokio::task::spawn_blocking(move || cache::compile(&runtime, &sha256, &bytes))
            .await
            .map_err(|e| LoadError::Internal(e.to_string()))?
    }

    fn linker(&self, world: World, contract: Contract) -> &Linker<PluginState> {
        match (world, contract) {
            (World::HardwareDriver, Contract::V0_3_0) => &self.inner.exchange_linker_0_3,
            (World::HardwareDriver, Contract::V0_2_0) => &self.inner.exchange_linker,
            (World::HardwareDriver, Contract::V0_1_0) => &self.inner.driver_linker,
            (World::Ipam, _) => &self.inner.ipam_linker,
            (World::Renderer, _) => &self.inner.renderer_linker,
        }
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.inner.engine
    }
}

/// A loaded, pre-linked plugin. Cheap to clone; every call instantiates it afresh.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<PluginInner>,
}

struct PluginInner {
    sha256: String,
    size: usize,
    world: World,
    contract: Contract,
    info: PluginInfo,
    pre: Pre,
}

/// The world's typed pre-instance: checks the component's exports against the world.
fn typed_pre(
    world: World,
    contract: Contract,
    pre: wasmtime::component::InstancePre<PluginState>,
) -> Result<Pre, LoadError> {
    Ok(match (world, contract) {
        (World::HardwareDriver, Contract::V0_3_0) => {
            Pre::Exchange(driver_0_3::HardwareDriverPre::new(pre).map_err(detect::export_error)?)
        }
        (World::HardwareDriver, Contract::V0_2_0) => {
            Pre::Exchange0_2(driver_0_2::HardwareDriverPre::new(pre).map_err(detect::export_error)?)
        }
        (World::HardwareDriver, Contract::V0_1_0) => {
            Pre::Driver(driver::HardwareDriverPre::new(pre).map_err(detect::export_error)?)
        }
        (World::Ipam, _) => Pre::Ipam(ipam::IpamPre::new(pre).map_err(detect::export_error)?),
        (World::Renderer, _) => {
            Pre::Renderer(renderer::RendererPre::new(pre).map_err(detect::export_error)?)
        }
    })
}

enum Pre {
    Driver(driver::HardwareDriverPre<PluginState>),
    /// A 0.3.0 driver: its calls are exchanges of steps.
    Exchange(driver_0_3::HardwareDriverPre<PluginState>),
    /// A 0.2.0 driver: the same exchange, with fewer calls (`call/exchange.rs` speaks 0.3.0's
    /// to it).
    Exchange0_2(driver_0_2::HardwareDriverPre<PluginState>),
    Ipam(ipam::IpamPre<PluginState>),
    Renderer(renderer::RendererPre<PluginState>),
}

/// What a plugin says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginInfo {
    pub name: String,
    pub version: String,
    pub description: String,
}

impl Plugin {
    pub fn sha256(&self) -> &str {
        &self.inner.sha256
    }
    pub fn size(&self) -> usize {
        self.inner.size
    }
    pub fn world(&self) -> World {
        self.inner.world
    }
    /// The contract the component speaks.
    pub fn contract(&self) -> Contract {
        self.inner.contract
    }
    pub fn info(&self) -> &PluginInfo {
        &self.inner.info
    }
    /// `name@version`, for logs and messages.
    pub fn label(&self) -> String {
        format!("{}@{}", self.inner.info.name, self.inner.info.version)
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("sha256", &self.inner.sha256)
            .field("world", &self.inner.world)
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

fn base_config(config: &RuntimeConfig) -> Config {
    let mut c = Config::new();
    c.epoch_interruption(true);
    // A host-side stack overflow aborts the process: keep the wasm stack well inside the
    // async stack the call runs on.
    c.max_wasm_stack(512 << 10);
    c.async_stack_size(2 << 20);
    c.wasm_component_model(true);
    // Linear memories never need more than the memory limit; a smaller reservation keeps the
    // pool's virtual address space modest.
    let reservation = (config.memory_limit as u64)
        .next_power_of_two()
        .max(64 << 20);
    c.memory_reservation(reservation);
    c.memory_guard_size(2 << 20);
    c.memory_reservation_for_growth(0);
    c
}

/// The pooling allocator first, resetting memory with `PAGEMAP_SCAN` where the kernel has it;
/// on-demand allocation where the machine will not reserve the pool's address space (as
/// `wasmtime serve` and Spin do).
fn make_engine(config: &RuntimeConfig) -> anyhow::Result<(Engine, bool)> {
    let pooled = |pagemap: bool| {
        let mut c = base_config(config);
        c.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config(
            config, pagemap,
        )));
        Engine::new(&c)
    };
    let pooled = pooled(true).or_else(|e| {
        tracing::debug!(error = %e, "PAGEMAP_SCAN unavailable, resetting memories by madvise");
        pooled(false)
    });
    match pooled {
        Ok(engine) => Ok((engine, true)),
        Err(e) => {
            tracing::warn!(error = %e, "pooling allocator unavailable, allocating instances on demand");
            let mut on_demand = base_config(config);
            on_demand.allocation_strategy(InstanceAllocationStrategy::OnDemand);
            let engine = Engine::new(&on_demand).map_err(|e| anyhow::anyhow!("{e:#}"))?;
            Ok((engine, false))
        }
    }
}

fn pool_config(config: &RuntimeConfig, pagemap: bool) -> PoolingAllocationConfig {
    let instances = config.max_instances;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(instances)
        .total_core_instances(instances * 4)
        .total_memories(instances * 2)
        .total_tables(instances * 4)
        // A call can hold a second stack for a moment (seen at 256 calls at once: the pool of
        // stacks ran out while the slots had not); stacks are address space until touched.
        .total_stacks(instances * 2)
        .max_core_instances_per_component(8)
        .max_memories_per_component(2)
        .max_tables_per_component(8)
        .max_memory_size(config.memory_limit)
        .max_unused_warm_slots(16)
        .table_keep_resident(16 << 10);
    if pagemap {
        // A slot's memory is reset between calls without handing it back to the kernel: only
        // the pages the last call touched in the low 2 MiB (a Rust guest's 1 MiB shadow stack,
        // its data, the start of its heap) are rewritten, so the next call neither page-faults
        // nor shoots down TLBs. Measured (BENCHMARKS.md): a driver call 35 to 60 % faster.
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(2 << 20);
    } else {
        // Without the ioctl that much would be memset whether touched or not, which measured
        // slower than the page faults it saves.
        pool.linear_memory_keep_resident(64 << 10);
    }
    pool
}

/// Advances the epoch every tick, and takes the lanes of calls that stayed in the host past a
/// tick for the calls waiting (`share.rs`).
fn spawn_epoch_ticker(engine: &Engine, lanes: &Arc<share::Lanes>) {
    let weak = engine.weak();
    let lanes = Arc::downgrade(lanes);
    std::thread::Builder::new()
        .name("podium-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                if let Some(lanes) = lanes.upgrade() {
                    lanes.revoke_idle(std::time::Instant::now(), EPOCH_TICK);
                }
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch ticker thread");
}

/// Compiles `bytes` without caching; used by the cache module.
fn compile_uncached(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
    Component::new(engine, bytes)
}
