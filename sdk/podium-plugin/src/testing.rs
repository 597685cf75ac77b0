//! The native test harness: a plugin's code, the same that runs in the component, run by
//! `cargo test` with the host's imports answered here, under the limits the host enforces. A
//! driver's call runs as the host runs it, step by step (see [`exchange`](crate::exchange)),
//! each step twice: a driver that does not send the same requests the second time fails the
//! test, as replay would answer it wrongly in the host.
//!
//! ```ignore
//! use podium_plugin::testing::Host;
//!
//! let host = Host::new()
//!     .endpoint("http://127.0.0.1:8000")       // a real service (sushy-tools for a driver)
//!     .credentials("admin", "password")
//!     .config(r#"{"root": "/redfish/v1"}"#);
//! let systems = host.driver::<MyDriver>().discover().unwrap();
//! ```
//!
//! or, with no server, `Host::new().in_process(|request| ...)` answers every request with a
//! function of it.
//!
//! What is enforced as the host enforces it ([`Limits`], the host's defaults): the endpoint is
//! the only origin a request may reach (`denied` otherwise, redirects included); the host's own
//! headers are refused (`invalid-request`); request and response bodies are bounded
//! (`too-large`); the requests and bytes of one call are bounded (`denied`, and the call fails);
//! the call's deadline bounds every request (`timeout`) and the call itself; an answer (and
//! each step of a driver's call: its requests and its state) is bounded by what the host copies
//! out of one call; log lines past the budget are dropped with
//! one notice, a line is clipped. With [`CountingAllocator`] installed as the test binary's
//! global allocator, what a call allocates is held to the memory limit. A call the host would
//! fail (past its deadline, its HTTP budget, its memory limit, or answering more than the host
//! copies out) panics here, naming the limit: a test that passes natively does not fail on
//! these limits in the host.
//!
//! Not checked natively: the rules the host applies to a driver's answers (`driver.wit` lists
//! them: id and text lengths, UUIDs, MACs, counts). Memory is measured as the native build
//! allocates it, which is close to, not the same as, the component's linear memory.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::marker::PhantomData;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use url::Url;

use crate::driver::{
    BootSettings, CapabilitySet, MediaRequest, MediaType, PowerAction, PowerState, ServiceInfo,
    System,
};
use crate::driver::{Call as DriverCall, Outcome};
use crate::exchange::{self, Step};
use crate::http::{HOST_OWNED_HEADERS, HttpError, Method, Request, Response};
use crate::ipam::AllocationRequest;
use crate::log::Level;
use crate::render::{ConsumerInput, HostFacts, NetworkPolicy, RenderInput, TemplateNeeds};
use crate::wit::exchange::exports::podium::plugin::{driver, plugin as driver_plugin};
use crate::wit::ipam::exports::podium::plugin::{allocator, plugin as ipam_plugin};
use crate::wit::renderer::exports::podium::plugin::{plugin as render_plugin, render};
use crate::{HardwareDriver, Ipam, PluginInfo, Renderer, Result};

/// The limits of one call, the host's defaults unless changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The deadline of a call (the host's `--plugin-call-timeout`).
    pub call_timeout: Duration,
    /// The deadline of a driver's `discover`.
    pub discover_timeout: Duration,
    /// Requests one call may send, redirects included.
    pub requests_per_call: u64,
    /// Bytes of request and response bodies of one call.
    pub bytes_per_call: u64,
    pub requests_per_discover: u64,
    pub bytes_per_discover: u64,
    /// The largest request body.
    pub max_request_body: usize,
    /// The largest response body.
    pub max_response_body: usize,
    /// Log lines one call may write.
    pub log_lines: usize,
    /// Log bytes one call may write.
    pub log_bytes: usize,
    /// A log line is clipped to this many bytes.
    pub log_line_max: usize,
    /// The memory a call may grow to; held to where [`CountingAllocator`] is installed. A
    /// quarter of it (all of it for a discovery) is what the host copies out of one call.
    pub memory_limit: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_timeout: Duration::from_secs(10),
            discover_timeout: Duration::from_secs(600),
            requests_per_call: 1_000,
            bytes_per_call: 256 << 20,
            requests_per_discover: 1_000_000,
            bytes_per_discover: 8 << 30,
            max_request_body: 1 << 20,
            max_response_body: 16 << 20,
            log_lines: 1000,
            log_bytes: 256 << 10,
            log_line_max: 4096,
            memory_limit: 64 << 20,
        }
    }
}

/// Answers a request in-process.
pub type Handler = dyn Fn(&Request) -> std::result::Result<Response, HttpError> + Send + Sync;

/// What the host's `allocations` import answers in a test (see [`MemoryPool`]).
pub trait AllocationsModel: Send + Sync {
    fn first_free(&self, start: &str, end: &str) -> Option<String>;
    fn is_free(&self, address: &str) -> bool;
}

#[derive(Clone)]
enum Endpoint {
    None,
    Remote {
        base: Url,
        credentials: Option<(String, String)>,
    },
    InProcess {
        base: Url,
        handler: Arc<Handler>,
    },
}

/// The host, for a test: the configuration, the endpoint, the limits, and a record of what the
/// plugin sent and logged.
#[derive(Clone)]
pub struct Host {
    config: String,
    endpoint: Endpoint,
    limits: Limits,
    allocations: Option<Arc<dyn AllocationsModel>>,
    record: Arc<Mutex<Record>>,
}

#[derive(Default)]
struct Record {
    sent: Vec<Request>,
    logs: Vec<(Level, String)>,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endpoint = match &self.endpoint {
            Endpoint::None => "none".to_owned(),
            Endpoint::Remote { base, .. } => base.to_string(),
            Endpoint::InProcess { .. } => "in-process".to_owned(),
        };
        f.debug_struct("Host")
            .field("config", &self.config)
            .field("endpoint", &endpoint)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for Host {
    fn default() -> Self {
        Host::new()
    }
}

impl Host {
    /// A host with the configuration `{}`, no endpoint and the host's default limits.
    pub fn new() -> Host {
        Host {
            config: "{}".to_owned(),
            endpoint: Endpoint::None,
            limits: Limits::default(),
            allocations: None,
            record: Arc::default(),
        }
    }

    /// The configuration document the plugin reads (JSON text).
    pub fn config(mut self, config: impl Into<String>) -> Host {
        self.config = config.into();
        self
    }

    /// A real endpoint (`http://127.0.0.1:8000`), as an admin registers a pod manager.
    pub fn endpoint(mut self, base_url: &str) -> Host {
        let base = Url::parse(base_url).unwrap_or_else(|e| panic!("endpoint {base_url}: {e}"));
        self.endpoint = Endpoint::Remote {
            base,
            credentials: None,
        };
        self
    }

    /// The credentials the host attaches (HTTP Basic), as the admin stored them.
    pub fn credentials(mut self, username: &str, password: &str) -> Host {
        match &mut self.endpoint {
            Endpoint::Remote { credentials, .. } => {
                *credentials = Some((username.to_owned(), password.to_owned()));
            }
            _ => panic!("credentials are for an endpoint: call endpoint() first"),
        }
        self
    }

    /// An endpoint in this process: `handler` answers every request (its `url` is the path and
    /// query on `http://endpoint.test`, the endpoint's base URL).
    pub fn in_process(
        self,
        handler: impl Fn(&Request) -> std::result::Result<Response, HttpError> + Send + Sync + 'static,
    ) -> Host {
        self.in_process_at("http://endpoint.test/", handler)
    }

    /// [`in_process`](Host::in_process) with the endpoint's base URL `base_url` (for a service
    /// that hands out absolute links on its own origin).
    pub fn in_process_at(
        mut self,
        base_url: &str,
        handler: impl Fn(&Request) -> std::result::Result<Response, HttpError> + Send + Sync + 'static,
    ) -> Host {
        let base = Url::parse(base_url).unwrap_or_else(|e| panic!("endpoint {base_url}: {e}"));
        self.endpoint = Endpoint::InProcess {
            base,
            handler: Arc::new(handler),
        };
        self
    }

    /// What the `allocations` import answers.
    pub fn allocations(mut self, model: impl AllocationsModel + 'static) -> Host {
        self.allocations = Some(Arc::new(model));
        self
    }

    pub fn limits(mut self, limits: Limits) -> Host {
        self.limits = limits;
        self
    }

    /// Every request the plugin sent (its `url` resolved to a path), in order.
    pub fn sent(&self) -> Vec<Request> {
        self.record.lock().expect("record").sent.clone()
    }

    /// Every line the plugin logged that the host would keep, in order.
    pub fn logs(&self) -> Vec<(Level, String)> {
        self.record.lock().expect("record").logs.clone()
    }

    /// Runs `f` as one plugin call: the imports it reaches answer from this host.
    ///
    /// Panics where the host would fail the call: past its deadline, past its HTTP budget.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        let _call = self.enter(CallKind::Call);
        f()
    }

    /// Runs `f` as one call of `kind` whose answer the host copies out: past what the host
    /// lifts from one call (a quarter of the memory limit; a discovery's, all of it), panics as
    /// the host would fail it.
    pub fn call<R: Lifted>(&self, kind: CallKind, f: impl FnOnce() -> R) -> R {
        let _call = self.enter(kind);
        let answer = f();
        let lifted = answer.lifted();
        let limit = match kind {
            CallKind::Call => self.limits.memory_limit / 4,
            CallKind::Discover => self.limits.memory_limit,
        };
        assert!(
            lifted <= limit,
            "the host would fail this call: its answer holds about {lifted} bytes to copy, more \
             than the {limit} the host copies out of one call"
        );
        answer
    }

    /// Runs `f` as one call until the returned guard is dropped (for code that keeps a value
    /// across several statements).
    pub fn enter(&self, kind: CallKind) -> Call {
        let (deadline, budget) = match kind {
            CallKind::Call => (
                self.limits.call_timeout,
                (self.limits.requests_per_call, self.limits.bytes_per_call),
            ),
            CallKind::Discover => (
                self.limits.discover_timeout,
                (
                    self.limits.requests_per_discover,
                    self.limits.bytes_per_discover,
                ),
            ),
        };
        let started = Instant::now();
        let context = Context {
            host: self.clone(),
            started,
            deadline: started + deadline,
            timeout: deadline,
            budget,
            requests: 0,
            bytes: 0,
            overspent: false,
            log_lines: 0,
            log_bytes: 0,
            log_dropped: false,
            memory_base: memory::reset_peak(),
        };
        CURRENT.with(|c| {
            let mut current = c.borrow_mut();
            assert!(
                current.is_none(),
                "podium_plugin::testing: a call is already running on this thread"
            );
            *current = Some(context);
        });
        Call {
            _not_send: PhantomData,
        }
    }

    /// The calls of the `hardware-driver` world, made as the host makes them.
    pub fn driver<T: HardwareDriver>(&self) -> DriverCalls<'_, T> {
        DriverCalls {
            host: self,
            plugin: PhantomData,
        }
    }

    /// The calls of the `ipam` world.
    pub fn ipam<T: Ipam>(&self) -> IpamCalls<'_, T> {
        IpamCalls {
            host: self,
            plugin: PhantomData,
        }
    }

    /// The calls of the `renderer` world.
    pub fn renderer<T: Renderer>(&self) -> RendererCalls<'_, T> {
        RendererCalls {
            host: self,
            plugin: PhantomData,
        }
    }
}

/// Which deadline and budget a call has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Call,
    /// A driver's `discover`, which reads every system behind the endpoint.
    Discover,
}

/// A call in progress on this thread; ends when dropped.
#[derive(Debug)]
pub struct Call {
    _not_send: PhantomData<*const ()>,
}

impl Drop for Call {
    fn drop(&mut self) {
        let Some(context) = CURRENT.with(|c| c.borrow_mut().take()) else {
            return;
        };
        if std::thread::panicking() {
            return;
        }
        let elapsed = context.started.elapsed();
        assert!(
            elapsed <= context.timeout,
            "the host would fail this call: it ran {elapsed:?}, past its deadline of {:?}",
            context.timeout
        );
        if memory::installed() {
            let used = memory::peak().saturating_sub(context.memory_base);
            let limit = context.host.limits.memory_limit;
            assert!(
                used <= limit,
                "the host would fail this call: it allocated {used} bytes at its peak, past its \
                 memory limit of {limit} bytes (measured natively by CountingAllocator; the \
                 component's own use differs, a little)"
            );
        }
        assert!(
            !context.overspent,
            "the host would fail this call: it sent {} requests and {} bytes, past its budget of {} \
             requests and {} bytes per call",
            context.requests, context.bytes, context.budget.0, context.budget.1
        );
    }
}

struct Context {
    host: Host,
    started: Instant,
    deadline: Instant,
    timeout: Duration,
    /// Requests and bytes.
    budget: (u64, u64),
    requests: u64,
    bytes: u64,
    overspent: bool,
    log_lines: usize,
    log_bytes: usize,
    log_dropped: bool,
    /// What this thread had allocated when the call started ([`CountingAllocator`]).
    memory_base: usize,
}

thread_local! {
    static CURRENT: RefCell<Option<Context>> = const { RefCell::new(None) };
}

fn with_context<R>(import: &str, f: impl FnOnce(&mut Context) -> R) -> R {
    CURRENT.with(|c| {
        let mut current = c.borrow_mut();
        let context = current.as_mut().unwrap_or_else(|| {
            panic!(
                "podium_plugin::testing: `{import}` was called outside a call; run the plugin \
                 through testing::Host (run, driver, ipam, renderer)"
            )
        });
        f(context)
    })
}

/// The imports as the SDK calls them in a native build.
pub(crate) mod imports {
    use super::*;

    pub(crate) fn config() -> String {
        with_context("config.get", |c| c.host.config.clone())
    }

    pub(crate) fn log(level: Level, message: &str) {
        with_context("log.log", |c| {
            let limits = &c.host.limits;
            if c.log_dropped {
                return;
            }
            let mut line: String = message.escape_debug().collect();
            if line.len() > limits.log_line_max {
                let mut cut = limits.log_line_max;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                line.truncate(cut);
                line.push('…');
            }
            c.log_lines += 1;
            c.log_bytes += line.len();
            let mut record = c.host.record.lock().expect("record");
            if c.log_lines > limits.log_lines || c.log_bytes > limits.log_bytes {
                c.log_dropped = true;
                record.logs.push((
                    Level::Warn,
                    format!(
                        "log budget of this call spent ({} lines, {} bytes): further lines dropped",
                        limits.log_lines, limits.log_bytes
                    ),
                ));
                return;
            }
            eprintln!("plugin log {level:?}: {line}");
            record.logs.push((level, line));
        });
    }

    pub(crate) fn first_free(start: &str, end: &str) -> Option<String> {
        allocations("allocations.first-free").first_free(start, end)
    }

    pub(crate) fn is_free(address: &str) -> bool {
        allocations("allocations.is-free").is_free(address)
    }

    fn allocations(import: &str) -> Arc<dyn AllocationsModel> {
        with_context(import, |c| c.host.allocations.clone()).unwrap_or_else(|| {
            panic!("podium_plugin::testing: `{import}` called, but the Host has no allocations()")
        })
    }

    pub(crate) fn send(request: &Request) -> std::result::Result<Response, HttpError> {
        // Checks first, and the budget, under the context; the request itself outside it.
        let (endpoint, url, timeout, max_response) = with_context("a request", |c| {
            let limits = c.host.limits.clone();
            if request.body.len() > limits.max_request_body {
                return Err(HttpError::TooLarge(format!(
                    "request body of {} bytes exceeds the limit of {} bytes",
                    request.body.len(),
                    limits.max_request_body
                )));
            }
            for (name, _) in &request.headers {
                if HOST_OWNED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                    return Err(HttpError::InvalidRequest(format!(
                        "the header `{name}` is set by the host, not by plugins"
                    )));
                }
            }
            let base = match &c.host.endpoint {
                Endpoint::None => {
                    return Err(HttpError::Denied(
                        "this plugin was given no endpoint (testing::Host::endpoint or in_process)"
                            .to_owned(),
                    ));
                }
                Endpoint::Remote { base, .. } | Endpoint::InProcess { base, .. } => base.clone(),
            };
            let url = resolve(&base, &request.url)?;
            c.requests += 1;
            c.bytes += request.body.len() as u64;
            if c.requests > c.budget.0 || c.bytes > c.budget.1 {
                c.overspent = true;
                return Err(HttpError::Denied(format!(
                    "this call used up its budget of {} requests and {} bytes to the endpoint",
                    c.budget.0, c.budget.1
                )));
            }
            let now = Instant::now();
            if now >= c.deadline {
                return Err(HttpError::Timeout(
                    "the call's deadline has passed".to_owned(),
                ));
            }
            let mut recorded = request.clone();
            recorded.url = path_of(&url);
            c.host.record.lock().expect("record").sent.push(recorded);
            Ok((
                c.host.endpoint.clone(),
                url,
                c.deadline - now,
                limits.max_response_body,
            ))
        })?;
        let response = match endpoint {
            Endpoint::None => unreachable!("refused above"),
            Endpoint::InProcess { handler, .. } => {
                let mut request = request.clone();
                request.url = path_of(&url);
                handler(&request)?
            }
            Endpoint::Remote {
                base, credentials, ..
            } => remote(&base, credentials.as_ref(), request, url, timeout)?,
        };
        if response.body.len() > max_response {
            return Err(HttpError::TooLarge(format!(
                "response body of {} bytes exceeds the limit of {max_response} bytes",
                response.body.len()
            )));
        }
        with_context("a request", |c| {
            c.bytes += response.body.len() as u64;
            if c.bytes > c.budget.1 {
                c.overspent = true;
            }
        });
        Ok(response)
    }
}

/// Resolves a plugin's `url` against the endpoint and refuses anything outside it.
fn resolve(base: &Url, url: &str) -> std::result::Result<Url, HttpError> {
    let resolved = if url.starts_with('/') {
        base.join(url)
    } else {
        Url::parse(url)
    }
    .map_err(|e| HttpError::InvalidRequest(format!("`{url}` is not a URL or path: {e}")))?;
    if !same_origin(&resolved, base) {
        return Err(HttpError::Denied(format!(
            "`{}` is outside {}, the only endpoint this plugin may reach",
            resolved.origin().ascii_serialization(),
            base.origin().ascii_serialization()
        )));
    }
    Ok(resolved)
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
        && a.username().is_empty()
        && a.password().is_none()
}

fn path_of(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    }
}

fn remote(
    base: &Url,
    credentials: Option<&(String, String)>,
    request: &Request,
    url: Url,
    timeout: Duration,
) -> std::result::Result<Response, HttpError> {
    let origin = base.clone();
    let client = reqwest::blocking::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                attempt.error("more than 5 redirects")
            } else if !same_origin(attempt.url(), &origin) {
                let outside = attempt.url().origin().ascii_serialization();
                attempt.error(format!("redirected to {outside}, outside the endpoint"))
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|e| HttpError::InvalidRequest(e.to_string()))?;
    let method = match request.method {
        Method::Get => reqwest::Method::GET,
        Method::Head => reqwest::Method::HEAD,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    };
    let mut builder = client.request(method, url.clone());
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    if let Some((user, password)) = credentials {
        builder = builder.basic_auth(user, Some(password));
    }
    let response = builder
        .body(request.body.clone())
        .send()
        .map_err(|e| transport_error(&e, &url))?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let body = response
        .bytes()
        .map_err(|e| transport_error(&e, &url))?
        .to_vec();
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn transport_error(e: &reqwest::Error, url: &Url) -> HttpError {
    let target = url.origin().ascii_serialization();
    if e.is_timeout() {
        HttpError::Timeout(format!("{target} did not answer in time"))
    } else if e.is_redirect() {
        HttpError::Denied(format!("{target}: {e}"))
    } else {
        HttpError::Unreachable(format!("{target}: {e}"))
    }
}

/// The `hardware-driver` calls of a test, made as the host makes them (configuration read,
/// then the call), each one call under the limits.
#[derive(Debug)]
pub struct DriverCalls<'h, T> {
    host: &'h Host,
    plugin: PhantomData<T>,
}

type DriverExport<T> = crate::driver::Export<T>;

impl<T: HardwareDriver> DriverCalls<'_, T> {
    pub fn info(&self) -> PluginInfo {
        self.host.call(
            CallKind::Call,
            <DriverExport<T> as driver_plugin::Guest>::info,
        )
    }

    /// `validate-config` of `config` (not the host's).
    pub fn validate_config(&self, config: &str) -> Result<()> {
        self.host.call(CallKind::Call, || {
            <DriverExport<T> as driver_plugin::Guest>::validate_config(config.to_owned())
        })
    }

    pub fn capabilities(&self) -> CapabilitySet {
        self.host.call(
            CallKind::Call,
            <DriverExport<T> as driver::Guest>::capabilities,
        )
    }

    /// Runs `call` as the host does, step by step, each step's requests sent before the next;
    /// every step runs twice, and panics if the two runs differ (the driver is not
    /// deterministic: replay would answer it wrong in the host).
    pub fn exchange(&self, kind: CallKind, call: DriverCall) -> Result<Outcome> {
        self.host.call(kind, || {
            let mut state: Option<Vec<u8>> = None;
            let mut answers: Vec<std::result::Result<Response, HttpError>> = Vec::new();
            for step in 1.. {
                let once = |muted| {
                    exchange::step_with(
                        state.as_deref(),
                        answers.clone(),
                        crate::driver::run::<T>(call.clone()),
                        muted,
                    )
                };
                let (first, second) = (once(false), once(true));
                assert!(
                    first == second,
                    "the driver is not deterministic: step {step} of {call:?} run twice on the same answers came to {first:?} and then to {second:?}"
                );
                match first {
                    Step::Finished(result) => return result,
                    Step::Send(requests, next) => {
                        let lifted = next.len()
                            + requests
                                .iter()
                                .map(|r| {
                                    r.url.len()
                                        + r.body.len()
                                        + r.headers
                                            .iter()
                                            .map(|(n, v)| n.len() + v.len() + 16)
                                            .sum::<usize>()
                                        + 32
                                })
                                .sum::<usize>();
                        let limit = match kind {
                            CallKind::Call => self.host.limits.memory_limit / 4,
                            CallKind::Discover => self.host.limits.memory_limit,
                        };
                        assert!(
                            lifted <= limit,
                            "the host would fail this call: step {step} holds about {lifted} \
                             bytes of requests and state to copy, more than the {limit} the host \
                             copies out of one step"
                        );
                        answers = requests.iter().map(imports::send).collect();
                        state = Some(next);
                    }
                }
            }
            unreachable!("the steps are counted without end")
        })
    }

    pub fn probe(&self) -> Result<ServiceInfo> {
        match self.exchange(CallKind::Call, DriverCall::Probe)? {
            Outcome::ServiceInfo(info) => Ok(info),
            other => panic!("probe finished with {other:?}"),
        }
    }

    /// Under the deadline and budget of a discovery.
    pub fn discover(&self) -> Result<Vec<System>> {
        match self.exchange(CallKind::Discover, DriverCall::Discover)? {
            Outcome::Systems(systems) => Ok(systems),
            other => panic!("discover finished with {other:?}"),
        }
    }

    /// Under the deadline and budget of a discovery, as the host runs it.
    pub fn discover_chassis(&self) -> Result<Vec<crate::driver::Chassis>> {
        match self.exchange(CallKind::Discover, DriverCall::DiscoverChassis)? {
            Outcome::Chassis(chassis) => Ok(chassis),
            other => panic!("discover-chassis finished with {other:?}"),
        }
    }

    /// Under the deadline and budget of a discovery, as the host runs it.
    pub fn read_composition(&self) -> Result<crate::driver::CompositionService> {
        match self.exchange(CallKind::Discover, DriverCall::ReadComposition)? {
            Outcome::Composition(service) => Ok(service),
            other => panic!("read-composition finished with {other:?}"),
        }
    }

    pub fn compose(&self, request: crate::driver::ComposeRequest) -> Result<String> {
        match self.exchange(CallKind::Call, DriverCall::Compose(request))? {
            Outcome::Composed(id) => Ok(id),
            other => panic!("compose finished with {other:?}"),
        }
    }

    pub fn decompose(&self, system_id: &str) -> Result<()> {
        self.done(DriverCall::Decompose(system_id.to_owned()))
    }

    pub fn read_bios(&self, system_id: &str) -> Result<crate::driver::Bios> {
        match self.exchange(CallKind::Call, DriverCall::ReadBios(system_id.to_owned()))? {
            Outcome::Bios(bios) => Ok(bios),
            other => panic!("read-bios finished with {other:?}"),
        }
    }

    pub fn set_bios(&self, system_id: &str, change: crate::driver::BiosChange) -> Result<()> {
        self.done(DriverCall::SetBios((system_id.to_owned(), change)))
    }

    pub fn reset_bios(&self, system_id: &str) -> Result<()> {
        self.done(DriverCall::ResetBios(system_id.to_owned()))
    }

    pub fn read_secure_boot(&self, system_id: &str) -> Result<crate::driver::SecureBoot> {
        match self.exchange(
            CallKind::Call,
            DriverCall::ReadSecureBoot(system_id.to_owned()),
        )? {
            Outcome::SecureBoot(state) => Ok(state),
            other => panic!("read-secure-boot finished with {other:?}"),
        }
    }

    pub fn read_hardware(&self, system_id: &str) -> Result<crate::driver::HardwareInventory> {
        match self.exchange(
            CallKind::Call,
            DriverCall::ReadHardware(system_id.to_owned()),
        )? {
            Outcome::Hardware(inventory) => Ok(inventory),
            other => panic!("read-hardware finished with {other:?}"),
        }
    }

    pub fn set_secure_boot(&self, system_id: &str, enabled: bool) -> Result<()> {
        self.done(DriverCall::SetSecureBoot((system_id.to_owned(), enabled)))
    }

    pub fn read_firmware(&self, system_id: &str) -> Result<Vec<crate::driver::FirmwareComponent>> {
        match self.exchange(
            CallKind::Call,
            DriverCall::ReadFirmware(system_id.to_owned()),
        )? {
            Outcome::Firmware(components) => Ok(components),
            other => panic!("read-firmware finished with {other:?}"),
        }
    }

    pub fn update_firmware(
        &self,
        system_id: &str,
        update: crate::driver::FirmwareUpdate,
    ) -> Result<Option<String>> {
        match self.exchange(
            CallKind::Call,
            DriverCall::UpdateFirmware((system_id.to_owned(), update)),
        )? {
            Outcome::TaskStarted(task) => Ok(task),
            other => panic!("update-firmware finished with {other:?}"),
        }
    }

    pub fn read_task(&self, system_id: &str, task: &str) -> Result<crate::driver::TaskStatus> {
        match self.exchange(
            CallKind::Call,
            DriverCall::ReadTask((system_id.to_owned(), task.to_owned())),
        )? {
            Outcome::Task(status) => Ok(status),
            other => panic!("read-task finished with {other:?}"),
        }
    }

    pub fn inspect(&self, system_id: &str) -> Result<System> {
        match self.exchange(CallKind::Call, DriverCall::Inspect(system_id.to_owned()))? {
            Outcome::System(system) => Ok(system),
            other => panic!("inspect finished with {other:?}"),
        }
    }

    pub fn get_power(&self, system_id: &str) -> Result<PowerState> {
        match self.exchange(CallKind::Call, DriverCall::GetPower(system_id.to_owned()))? {
            Outcome::Power(power) => Ok(power),
            other => panic!("get-power finished with {other:?}"),
        }
    }

    pub fn set_power(&self, system_id: &str, action: PowerAction) -> Result<()> {
        self.done(DriverCall::SetPower((system_id.to_owned(), action)))
    }

    pub fn get_chassis_power(&self, chassis_id: &str) -> Result<PowerState> {
        match self.exchange(
            CallKind::Call,
            DriverCall::GetChassisPower(chassis_id.to_owned()),
        )? {
            Outcome::Power(power) => Ok(power),
            other => panic!("get-chassis-power finished with {other:?}"),
        }
    }

    pub fn set_chassis_power(&self, chassis_id: &str, action: PowerAction) -> Result<()> {
        self.done(DriverCall::SetChassisPower((chassis_id.to_owned(), action)))
    }

    pub fn set_boot_override(&self, system_id: &str, settings: BootSettings) -> Result<()> {
        self.done(DriverCall::SetBootOverride((
            system_id.to_owned(),
            settings,
        )))
    }

    pub fn insert_media(&self, system_id: &str, request: MediaRequest) -> Result<()> {
        self.done(DriverCall::InsertMedia((system_id.to_owned(), request)))
    }

    pub fn eject_media(&self, system_id: &str, media_type: MediaType) -> Result<()> {
        self.done(DriverCall::EjectMedia((system_id.to_owned(), media_type)))
    }

    fn done(&self, call: DriverCall) -> Result<()> {
        match self.exchange(CallKind::Call, call)? {
            Outcome::Done => Ok(()),
            other => panic!("the call finished with {other:?}"),
        }
    }
}

/// The `ipam` calls of a test.
#[derive(Debug)]
pub struct IpamCalls<'h, T> {
    host: &'h Host,
    plugin: PhantomData<T>,
}

type IpamExport<T> = crate::ipam::Export<T>;

impl<T: Ipam> IpamCalls<'_, T> {
    pub fn info(&self) -> PluginInfo {
        self.host
            .call(CallKind::Call, <IpamExport<T> as ipam_plugin::Guest>::info)
    }

    pub fn validate_config(&self, config: &str) -> Result<()> {
        self.host.call(CallKind::Call, || {
            <IpamExport<T> as ipam_plugin::Guest>::validate_config(config.to_owned())
        })
    }

    pub fn propose(&self, request: AllocationRequest) -> Result<Option<String>> {
        self.host.call(CallKind::Call, || {
            <IpamExport<T> as allocator::Guest>::propose(request)
        })
    }

    pub fn preprovisioning_network_data(
        &self,
        request: AllocationRequest,
        address: &str,
    ) -> Result<Option<String>> {
        self.host.call(CallKind::Call, || {
            <IpamExport<T> as allocator::Guest>::preprovisioning_network_data(
                request,
                address.to_owned(),
            )
        })
    }
}

/// The `renderer` calls of a test.
#[derive(Debug)]
pub struct RendererCalls<'h, T> {
    host: &'h Host,
    plugin: PhantomData<T>,
}

type RenderExport<T> = crate::render::Export<T>;

impl<T: Renderer> RendererCalls<'_, T> {
    pub fn info(&self) -> PluginInfo {
        self.host.call(
            CallKind::Call,
            <RenderExport<T> as render_plugin::Guest>::info,
        )
    }

    pub fn validate_config(&self, config: &str) -> Result<()> {
        self.host.call(CallKind::Call, || {
            <RenderExport<T> as render_plugin::Guest>::validate_config(config.to_owned())
        })
    }

    pub fn validate_template(&self, template: &str) -> Result<TemplateNeeds> {
        self.host.call(CallKind::Call, || {
            <RenderExport<T> as render::Guest>::validate_template(template.to_owned())
        })
    }

    pub fn validate_consumer_input(
        &self,
        policy: NetworkPolicy,
        template: &str,
        host: Option<HostFacts>,
        input: ConsumerInput,
    ) -> Result<()> {
        self.host.call(CallKind::Call, || {
            <RenderExport<T> as render::Guest>::validate_consumer_input(
                policy,
                template.to_owned(),
                host,
                input,
            )
        })
    }

    pub fn render_meta_data(&self, input: RenderInput) -> Result<String> {
        self.host.call(CallKind::Call, || {
            <RenderExport<T> as render::Guest>::render_meta_data(input)
        })
    }

    pub fn render_network_data(&self, input: RenderInput) -> Result<String> {
        self.host.call(CallKind::Call, || {
            <RenderExport<T> as render::Guest>::render_network_data(input)
        })
    }

    pub fn render_preprovisioning_network_data(
        &self,
        host: HostFacts,
        documents: Vec<String>,
    ) -> Result<String> {
        self.host.call(CallKind::Call, || {
            <RenderExport<T> as render::Guest>::render_preprovisioning_network_data(host, documents)
        })
    }
}

/// An `allocations` model for tests: the addresses of `[start, end]` ranges not in `taken`.
#[derive(Debug, Default)]
pub struct MemoryPool {
    taken: Mutex<BTreeSet<IpAddr>>,
}

impl MemoryPool {
    /// A pool where `taken` are allocated.
    pub fn with_taken<'a>(taken: impl IntoIterator<Item = &'a str>) -> MemoryPool {
        MemoryPool {
            taken: Mutex::new(
                taken
                    .into_iter()
                    .map(|a| a.parse().expect("an IP address"))
                    .collect(),
            ),
        }
    }

    /// Marks `address` allocated, as the host does when it commits a proposal.
    pub fn take(&self, address: &str) {
        self.taken
            .lock()
            .expect("pool")
            .insert(address.parse().expect("an IP address"));
    }
}

fn ip_to_u128(ip: IpAddr) -> (bool, u128) {
    match ip {
        IpAddr::V4(v4) => (true, u32::from(v4).into()),
        IpAddr::V6(v6) => (false, u128::from(v6)),
    }
}

impl AllocationsModel for MemoryPool {
    fn first_free(&self, start: &str, end: &str) -> Option<String> {
        let (v4, start) = ip_to_u128(start.parse().ok()?);
        let (end_v4, end) = ip_to_u128(end.parse().ok()?);
        if v4 != end_v4 {
            return None;
        }
        let taken = self.taken.lock().expect("pool");
        let mut candidate = start;
        while candidate <= end {
            let ip = if v4 {
                IpAddr::from(std::net::Ipv4Addr::from(u32::try_from(candidate).ok()?))
            } else {
                IpAddr::from(std::net::Ipv6Addr::from(candidate))
            };
            if !taken.contains(&ip) {
                return Some(ip.to_string());
            }
            candidate = candidate.checked_add(1)?;
        }
        None
    }

    fn is_free(&self, address: &str) -> bool {
        address
            .parse::<IpAddr>()
            .is_ok_and(|ip| !self.taken.lock().expect("pool").contains(&ip))
    }
}

/// About how many bytes the host copies out of an answer when it lifts it from the component:
/// the bytes of its strings and its lists' elements (a record counts its fields).
pub trait Lifted {
    fn lifted(&self) -> usize;
}

impl Lifted for String {
    fn lifted(&self) -> usize {
        self.len() + 8
    }
}

impl Lifted for bool {
    fn lifted(&self) -> usize {
        1
    }
}

impl<T: Lifted> Lifted for Option<T> {
    fn lifted(&self) -> usize {
        1 + self.as_ref().map_or(0, Lifted::lifted)
    }
}

impl<T: Lifted> Lifted for Vec<T> {
    fn lifted(&self) -> usize {
        8 + self.iter().map(Lifted::lifted).sum::<usize>()
    }
}

impl<T: Lifted> Lifted for Result<T> {
    fn lifted(&self) -> usize {
        1 + match self {
            Ok(t) => t.lifted(),
            Err(e) => crate::ErrorExt::message(e).len() + 8,
        }
    }
}

/// Types whose answer is a fixed number of bytes.
macro_rules! fixed {
    ($($ty:ty),*) => {
        $(impl Lifted for $ty {
            fn lifted(&self) -> usize {
                std::mem::size_of::<$ty>()
            }
        })*
    };
}

fixed!((), u8, u32, u64, PowerState, CapabilitySet, MediaType);

impl Lifted for PluginInfo {
    fn lifted(&self) -> usize {
        self.name.lifted() + self.version.lifted() + self.description.lifted()
    }
}

impl Lifted for ServiceInfo {
    fn lifted(&self) -> usize {
        self.root_link.lifted() + self.product.lifted() + self.version.lifted()
    }
}

impl Lifted for crate::driver::Nic {
    fn lifted(&self) -> usize {
        self.id.lifted() + self.name.lifted() + self.mac.lifted() + 8
    }
}

impl Lifted for crate::driver::MediaSlot {
    fn lifted(&self) -> usize {
        self.id.lifted() + self.media_types.len() + 8 + 1 + self.image.lifted()
    }
}

impl Lifted for Outcome {
    fn lifted(&self) -> usize {
        match self {
            Outcome::ServiceInfo(info) => info.lifted(),
            Outcome::Systems(systems) => systems.lifted(),
            Outcome::System(system) => system.lifted(),
            Outcome::Power(_) | Outcome::Done => 1,
            Outcome::Chassis(chassis) => chassis.lifted(),
            Outcome::Composition(service) => {
                service
                    .blocks
                    .iter()
                    .map(|b| {
                        b.id.lifted()
                            + b.name.lifted()
                            + b.zones.lifted()
                            + b.systems.lifted()
                            + b.block_types.len()
                            + 64
                    })
                    .sum::<usize>()
                    + service
                        .zones
                        .iter()
                        .map(|z| z.id.lifted() + z.name.lifted() + 16)
                        .sum::<usize>()
                    + service.offered_zones.lifted()
                    + service.limits.len() * 16
            }
            Outcome::Composed(id) => id.lifted(),
            Outcome::Bios(bios) => {
                bios.attributes.lifted()
                    + bios.pending.lifted()
                    + bios
                        .registry
                        .iter()
                        .map(|e| {
                            e.name.lifted() + e.display_name.lifted() + e.allowed.lifted() + 64
                        })
                        .sum::<usize>()
                    + bios.apply_times.len()
            }
            Outcome::SecureBoot(state) => state.mode.lifted() + 8,
            // Every record is a handful of short strings and numbers.
            Outcome::Hardware(h) => {
                (h.processors.len() + h.memory.len() + h.nics.len()) * 256
                    + h.storage
                        .iter()
                        .map(|s| 64 + s.drives.len() * 256)
                        .sum::<usize>()
            }
            Outcome::Firmware(components) => components
                .iter()
                .map(|c| c.id.lifted() + c.name.lifted() + c.version.lifted() + 8)
                .sum(),
            Outcome::TaskStarted(task) => task.lifted(),
            Outcome::Task(status) => status.messages.lifted() + 8,
        }
    }
}

impl Lifted for crate::driver::Attribute {
    fn lifted(&self) -> usize {
        let value = match &self.value {
            Some(crate::driver::AttributeValue::Text(t)) => t.lifted(),
            _ => 0,
        };
        self.name.lifted() + value + 16
    }
}

impl Lifted for crate::driver::Chassis {
    fn lifted(&self) -> usize {
        let other = match &self.chassis_type {
            crate::driver::ChassisType::Other(name) => name.lifted(),
            _ => 0,
        };
        self.id.lifted()
            + self.name.lifted()
            + other
            + self.manufacturer.lifted()
            + self.model.lifted()
            + self.serial.lifted()
            + self.location.lifted()
            + self.contained_by.lifted()
            + self.systems.lifted()
            + 32
    }
}

impl Lifted for System {
    fn lifted(&self) -> usize {
        self.id.lifted()
            + self.name.lifted()
            + self.uuid.lifted()
            + self.manufacturer.lifted()
            + self.model.lifted()
            + self.serial.lifted()
            + self.nics.lifted()
            + self.media_slots.lifted()
            + 32
    }
}

impl Lifted for TemplateNeeds {
    fn lifted(&self) -> usize {
        8 + self
            .pools
            .iter()
            .map(|p| p.name.lifted() + p.field.lifted() + 1)
            .sum::<usize>()
    }
}

/// A global allocator that counts what each thread has allocated, so the harness can hold a
/// call to the memory limit. Install it in a plugin's test binary:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOCATOR: podium_plugin::testing::CountingAllocator =
///     podium_plugin::testing::CountingAllocator;
/// ```
///
/// Without it the harness cannot see memory, and says nothing about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

// SAFETY: every method hands the call to the system allocator unchanged; the counting touches
// only thread-local cells, which allocate nothing.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        memory::grew(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        memory::shrank(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        memory::grew(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        memory::shrank(layout.size());
        memory::grew(new_size);
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// What [`CountingAllocator`] counts, per thread.
mod memory {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, Ordering};

    static INSTALLED: AtomicBool = AtomicBool::new(false);

    thread_local! {
        static IN_USE: Cell<usize> = const { Cell::new(0) };
        static PEAK: Cell<usize> = const { Cell::new(0) };
    }

    pub(super) fn installed() -> bool {
        INSTALLED.load(Ordering::Relaxed)
    }

    pub(super) fn grew(bytes: usize) {
        if !INSTALLED.load(Ordering::Relaxed) {
            INSTALLED.store(true, Ordering::Relaxed);
        }
        // A thread being torn down has no cells left: nothing to count.
        let _ = IN_USE.try_with(|in_use| {
            let now = in_use.get() + bytes;
            in_use.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        });
    }

    pub(super) fn shrank(bytes: usize) {
        let _ = IN_USE.try_with(|in_use| in_use.set(in_use.get().saturating_sub(bytes)));
    }

    /// Starts a new peak at what is in use now, and answers it.
    pub(super) fn reset_peak() -> usize {
        let now = IN_USE.try_with(Cell::get).unwrap_or(0);
        let _ = PEAK.try_with(|peak| peak.set(now));
        now
    }

    pub(super) fn peak() -> usize {
        PEAK.try_with(Cell::get).unwrap_or(0)
    }
}
