//! The host side of the `http` import: a plugin reaches the one endpoint it acts for, with the
//! credentials and TLS trust the admin configured, and nothing else.
//!
//! **Architecture Invariant:** a request leaves the host only after its URL (and every redirect
//! target) was checked to have the endpoint's scheme, host and port. Credentials are attached
//! here and never pass through the plugin.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use url::Url;

use super::bindings::wit_http::{self, HttpError, Method, Request, Response};
use super::imports::PluginState;
use podium_types::Secret;

/// The endpoint a plugin acts for.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Scheme, host and port (a path, if any, is ignored for the origin check).
    pub base: Url,
    pub credentials: Option<Credentials>,
    pub tls: TlsPolicy,
    /// Whose endpoint this is (the pod manager's, or that of one of its hosts), for the
    /// request metrics.
    pub pod_manager: Option<podium_types::PodManagerId>,
    /// Requests one call of a 0.2.0 driver sends it at once (a step's fan-out); `None`: the
    /// runtime's [`RuntimeConfig::parallel_requests`](crate::RuntimeConfig).
    pub parallel_requests: Option<usize>,
}

/// Basic-auth credentials for an endpoint. The password never leaves the host.
#[derive(Clone, Debug)]
pub struct Credentials {
    pub username: String,
    pub password: Secret,
}

/// How the host verifies an endpoint's TLS certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TlsPolicy {
    /// The system's trusted roots.
    #[default]
    System,
    /// Only these PEM certificates as roots (a site CA, or the BMC's own self-signed certificate).
    CaBundle(String),
    /// Exactly the certificate whose DER encoding has this SHA-256 (lower-case hex), whoever
    /// signed it and whatever names it carries: pinning a BMC's self-signed certificate.
    Pinned(String),
    /// No verification at all (Metal3's `disableCertificateVerification`).
    Insecure,
}

/// Answers the `http` import in-process instead of over the network: given the request the host
/// would send (URL checked, credentials attached), returns the response. For benchmarks that
/// measure the host's side of the import without a socket; never set by `podium serve`.
#[derive(Clone)]
pub struct HttpStub(pub Arc<dyn Fn(reqwest::Request) -> ::http::Response<Vec<u8>> + Send + Sync>);

impl std::fmt::Debug for HttpStub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpStub")
    }
}

/// The `http` grant of one call.
pub(crate) struct HttpGrant {
    endpoint: Endpoint,
    client: reqwest::Client,
    /// The process's requests in flight (`max_requests`): a socket each.
    in_flight: Arc<tokio::sync::Semaphore>,
    /// The process's connections kept open idle.
    idle: Arc<IdleConnections>,
    metrics: crate::metrics::Metrics,
    stub: Option<HttpStub>,
    deadline: Instant,
    max_request: usize,
    max_response: usize,
    budget: Budget,
    /// What the answers of a 0.2.0 step hold as they are read, all requests of the step
    /// together (`begin_answers`); unbounded for 0.1.0's `http` import, whose one answer at a
    /// time is bounded by `max_response`.
    answers: Answers,
}

/// The bytes a step's answers hold so far, counted as each chunk arrives, and their bound.
#[derive(Debug, Default)]
struct Answers {
    bound: AtomicU64,
    held: AtomicU64,
    exceeded: std::sync::atomic::AtomicBool,
}

/// The bounds of one call's `http` grant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GrantLimits {
    pub(crate) deadline: Instant,
    /// The largest request body, bytes.
    pub(crate) max_request: usize,
    /// The largest response body, bytes.
    pub(crate) max_response: usize,
    pub(crate) budget: Option<HttpBudget>,
}

/// What one call may send to its endpoint, all requests together: a plugin that loops on its
/// BMC fails its own call instead of flooding the BMC until its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpBudget {
    /// Requests, redirects followed included.
    pub requests: u64,
    /// Bytes of request and response bodies.
    pub bytes: u64,
}

impl HttpBudget {
    /// The default of one call: the bundled Redfish driver's largest (an inspection, a
    /// provisioning's media insert) takes a few dozen requests of a few KiB.
    pub const CALL: HttpBudget = HttpBudget {
        requests: 1_000,
        bytes: 256 << 20,
    };
    /// The default of a discovery: the bundled driver reads a system in about six requests of
    /// a few KiB, so 100,000 systems (the most a discovery may report) fit.
    pub const DISCOVERY: HttpBudget = HttpBudget {
        requests: 1_000_000,
        bytes: 8 << 30,
    };
}

/// What a call spent of its [`HttpBudget`].
#[derive(Debug, Default)]
struct Budget {
    limit: Option<HttpBudget>,
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// A call's requests went past its budget: the call fails with this, whatever the plugin made of
/// the refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetSpent {
    pub limit: HttpBudget,
    pub requests: u64,
    pub bytes: u64,
}

impl std::fmt::Display for BudgetSpent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "its limit of {} requests and {} bytes per call to its endpoint ({} requests and {} bytes asked for)",
            self.limit.requests, self.limit.bytes, self.requests, self.bytes
        )
    }
}

impl Budget {
    fn spend(&self, requests: u64, bytes: u64) -> Result<(), HttpError> {
        let requests = self.requests.fetch_add(requests, Ordering::AcqRel) + requests;
        let bytes = self.bytes.fetch_add(bytes, Ordering::AcqRel) + bytes;
        match self.limit {
            Some(limit) if requests > limit.requests || bytes > limit.bytes => {
                Err(HttpError::Denied(format!(
                    "this call used up its budget of {} requests and {} bytes to the endpoint",
                    limit.requests, limit.bytes
                )))
            }
            _ => Ok(()),
        }
    }

    fn spent(&self) -> Option<BudgetSpent> {
        let limit = self.limit?;
        let requests = self.requests.load(Ordering::Acquire);
        let bytes = self.bytes.load(Ordering::Acquire);
        (requests > limit.requests || bytes > limit.bytes).then_some(BudgetSpent {
            limit,
            requests,
            bytes,
        })
    }
}

/// Clients shared across calls, one per TLS policy, so connections are reused: the
/// [`CLIENTS_KEPT`] policies used last (a host whose BMC's own certificate is pinned or trusted is
/// a policy of its own, so a site of such hosts has one per host; see BENCHMARKS.md for what a
/// client and its connections hold).
pub(super) struct Clients {
    by_policy: Mutex<hashlink::LruCache<TlsPolicy, reqwest::Client>>,
}

/// TLS policies whose clients (and idle connections) are kept; the one used longest ago goes
/// first. A fleet of hosts each trusting its own BMC's certificate, read in turn by the periodic
/// refresh, keeps a client per host up to this many.
pub(super) const CLIENTS_KEPT: usize = 16_384;

impl Default for Clients {
    fn default() -> Self {
        Clients::keeping(CLIENTS_KEPT)
    }
}

const MAX_REDIRECTS: usize = 5;

/// How long a connection to a BMC is kept once idle.
const IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// The BMCs whose connection is kept open idle, as far as the host can tell (the connection
/// pool has no bound of its own across origins): an origin answered within the last
/// [`IDLE_CONNECTION_TIMEOUT`] over a connection the host let stay open. At most `bound`: past
/// it, a request to a BMC without one asks its BMC to close the connection after the answer
/// (`Connection: close`), so a fleet of 10,000 BMCs read at once does not keep 10,000 sockets
/// and their buffers (about 25 KiB each, BENCHMARKS.md) for the next seconds. A BMC with a
/// connection kept reuses it whatever the bound. Open connections are then at most the
/// requests in flight (`max_requests`) plus `bound`.
pub(super) struct IdleConnections {
    bound: usize,
    /// Origin to when its last answer came, oldest first.
    warm: Mutex<hashlink::LinkedHashMap<String, Instant>>,
}

impl IdleConnections {
    pub(super) fn new(bound: usize) -> IdleConnections {
        IdleConnections {
            bound,
            warm: Mutex::new(hashlink::LinkedHashMap::new()),
        }
    }

    /// Whether a request to `origin` may leave its connection open for the next one.
    fn may_keep(&self, origin: &str, now: Instant) -> bool {
        let mut warm = self.warm.lock().expect("idle connections poisoned");
        while let Some((_, at)) = warm.front()
            && now.saturating_duration_since(*at) >= IDLE_CONNECTION_TIMEOUT
        {
            warm.pop_front();
        }
        warm.contains_key(origin) || warm.len() < self.bound
    }

    /// `origin` answered over a connection kept open.
    fn answered(&self, origin: String, now: Instant) {
        self.warm
            .lock()
            .expect("idle connections poisoned")
            .insert(origin, now);
    }
}

impl Clients {
    fn keeping(kept: usize) -> Clients {
        Clients {
            by_policy: Mutex::new(hashlink::LruCache::new(kept)),
        }
    }

    pub(super) fn get(&self, policy: &TlsPolicy) -> Result<reqwest::Client, String> {
        let mut map = self.by_policy.lock().expect("http client map poisoned");
        if let Some(client) = map.get(policy) {
            return Ok(client.clone());
        }
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            // An idle connection serves the next step of a call and the next operation on
            // the same BMC, milliseconds later; the periodic refresh comes back after a whole
            // sync interval, when any idle timeout worth keeping has expired. A connection kept
            // idle holds its buffers and its dispatch channel (about half of Podium's heap at
            // 2,000 hosts registering, BENCHMARKS.md), so it goes after a few seconds, and no
            // more than `IdleConnections`' bound are kept across BMCs: open connections are at
            // most the requests in flight plus that bound.
            .pool_idle_timeout(IDLE_CONNECTION_TIMEOUT)
            // One warm connection a BMC: a fleet of BMCs each keeps one socket idle, not one per
            // request of its last fan-out (10,000 BMCs at 8 each would be past the open files
            // a process has).
            .pool_max_idle_per_host(1)
            .user_agent(concat!("podium/", env!("CARGO_PKG_VERSION")));
        match policy {
            TlsPolicy::System => {}
            TlsPolicy::CaBundle(pem) => {
                let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                    .map_err(|e| format!("the CA bundle is not valid PEM: {e}"))?;
                builder = builder.tls_built_in_root_certs(false);
                for cert in certs {
                    builder = builder.add_root_certificate(cert);
                }
            }
            TlsPolicy::Pinned(sha256) => {
                builder = builder.use_preconfigured_tls(pinned_tls(sha256)?);
            }
            TlsPolicy::Insecure => {
                builder = builder.danger_accept_invalid_certs(true);
            }
        }
        let client = builder.build().map_err(|e| e.to_string())?;
        map.insert(policy.clone(), client.clone());
        Ok(client)
    }
}

impl HttpGrant {
    pub(super) fn new(
        endpoint: Endpoint,
        client: reqwest::Client,
        in_flight: Arc<tokio::sync::Semaphore>,
        idle: Arc<IdleConnections>,
        metrics: crate::metrics::Metrics,
        stub: Option<HttpStub>,
        limits: GrantLimits,
    ) -> HttpGrant {
        HttpGrant {
            endpoint,
            client,
            in_flight,
            idle,
            metrics,
            stub,
            deadline: limits.deadline,
            max_request: limits.max_request,
            max_response: limits.max_response,
            budget: Budget {
                limit: limits.budget,
                ..Budget::default()
            },
            answers: Answers::default(),
        }
    }

    /// Starts counting the answers of one step against `bound` bytes: past it, every read of
    /// the step stops and fails as too large, and [`Self::answers_exceeded`] says so.
    pub(crate) fn begin_answers(&self, bound: usize) {
        self.answers.bound.store(bound as u64, Ordering::Relaxed);
        self.answers.held.store(0, Ordering::Relaxed);
        self.answers.exceeded.store(false, Ordering::Relaxed);
    }

    /// Whether the answers of this step went past their bound as they were read.
    pub(crate) fn answers_exceeded(&self) -> bool {
        self.answers.exceeded.load(Ordering::Relaxed)
    }

    /// Counts `bytes` more of a step's answers held; an error once past the bound.
    fn hold(&self, bytes: usize) -> Result<(), HttpError> {
        let bound = self.answers.bound.load(Ordering::Relaxed);
        if bound == 0 {
            return Ok(());
        }
        let held = self.answers.held.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        if held > bound || self.answers.exceeded.load(Ordering::Relaxed) {
            self.answers.exceeded.store(true, Ordering::Relaxed);
            return Err(HttpError::TooLarge(format!(
                "the answers of this step exceed the plugin's memory limit of {bound} bytes"
            )));
        }
        Ok(())
    }

    /// Counts a request that reached the endpoint (or was sent and got no answer); one the host
    /// refused before sending counts nowhere.
    fn count(&self, result: &Result<Response, HttpError>) {
        let status = match result {
            Ok(response) => response.status.to_string(),
            Err(HttpError::Timeout(_)) => "timeout".to_owned(),
            Err(HttpError::Unreachable(_)) => "unreachable".to_owned(),
            Err(HttpError::Tls(_)) => "tls".to_owned(),
            Err(_) => return,
        };
        let pod_manager = self
            .endpoint
            .pod_manager
            .as_ref()
            .map_or("", |id| id.as_str());
        self.metrics.endpoint_request(pod_manager, status);
    }

    /// Whether this call went past its budget, and by how much.
    pub(crate) fn budget_spent(&self) -> Option<BudgetSpent> {
        self.budget.spent()
    }

    /// Resolves `url` against the endpoint and refuses anything outside it.
    fn resolve(&self, url: &str) -> Result<Url, HttpError> {
        let resolved = if url.starts_with('/') {
            self.endpoint.base.join(url)
        } else {
            Url::parse(url)
        }
        .map_err(|e| HttpError::InvalidRequest(format!("`{url}` is not a URL or path: {e}")))?;
        if !same_origin(&resolved, &self.endpoint.base) {
            return Err(HttpError::Denied(format!(
                "`{}` is outside {}, the only endpoint this plugin may reach",
                origin(&resolved),
                origin(&self.endpoint.base)
            )));
        }
        Ok(resolved)
    }

    async fn send(&self, request: Request) -> Result<Response, HttpError> {
        if request.body.len() > self.max_request {
            return Err(HttpError::TooLarge(format!(
                "request body of {} bytes exceeds the limit of {} bytes",
                request.body.len(),
                self.max_request
            )));
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &request.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| HttpError::InvalidRequest(format!("invalid header name `{name}`")))?;
            if is_host_controlled(&name) {
                return Err(HttpError::InvalidRequest(format!(
                    "the header `{name}` is set by the host, not by plugins"
                )));
            }
            let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                HttpError::InvalidRequest(format!("invalid value for header `{name}`"))
            })?;
            headers.append(name, value);
        }
        let mut method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Patch => reqwest::Method::PATCH,
            Method::Delete => reqwest::Method::DELETE,
        };
        let mut url = self.resolve(&request.url)?;
        let mut body = Some(request.body);
        for _ in 0..=MAX_REDIRECTS {
            let remaining = self.deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(HttpError::Timeout("the call's deadline has passed".into()));
            }
            let sent = body.as_ref().map_or(0, Vec::len);
            self.budget.spend(1, sent as u64)?;
            let mut builder = self
                .client
                .request(method.clone(), url.clone())
                .headers(headers.clone())
                .timeout(remaining);
            if let Some(credentials) = &self.endpoint.credentials {
                builder =
                    builder.basic_auth(&credentials.username, Some(credentials.password.expose()));
            }
            let target = origin(&url);
            let keep = self.idle.may_keep(&target, Instant::now());
            if !keep {
                builder = builder.header(reqwest::header::CONNECTION, "close");
            }
            if let Some(body) = &body
                && !body.is_empty()
            {
                builder = builder.body(body.clone());
            }
            let response = match &self.stub {
                None => builder.send().await.map_err(|e| map_error(&e, &url))?,
                Some(stub) => {
                    let request = builder.build().map_err(|e| map_error(&e, &url))?;
                    reqwest::Response::from((stub.0)(request))
                }
            };
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(reqwest::header::LOCATION)
            {
                let location = location.to_str().map_err(|_| {
                    HttpError::InvalidRequest("redirect with an unreadable Location".into())
                })?;
                let next = url.join(location).map_err(|e| {
                    HttpError::InvalidRequest(format!("redirect to an invalid URL: {e}"))
                })?;
                if !same_origin(&next, &self.endpoint.base) {
                    return Err(HttpError::Denied(format!(
                        "redirect to `{}` refused: it is outside {}",
                        origin(&next),
                        origin(&self.endpoint.base)
                    )));
                }
                if status == reqwest::StatusCode::SEE_OTHER {
                    method = reqwest::Method::GET;
                    body = None;
                }
                url = next;
                continue;
            }
            let answer = self.read(response).await;
            if keep && answer.is_ok() {
                self.idle.answered(target, Instant::now());
            }
            return answer;
        }
        Err(HttpError::InvalidRequest(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }

    async fn read(&self, response: reqwest::Response) -> Result<Response, HttpError> {
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        if let Some(len) = response.content_length()
            && len as usize > self.max_response
        {
            return Err(self.too_large());
        }
        self.hold(
            headers
                .iter()
                .map(|(name, value)| name.len() + value.len() + 16)
                .sum::<usize>()
                + 16,
        )?;
        let mut body = Vec::new();
        let mut response = response;
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            HttpError::Unreachable(format!("reading the response: {}", e.without_url()))
        })? {
            if body.len() + chunk.len() > self.max_response {
                return Err(self.too_large());
            }
            // Counted as it arrives: the step's other answers in flight see it at once.
            self.hold(chunk.len())?;
            self.budget.spend(0, chunk.len() as u64)?;
            body.extend_from_slice(&chunk);
        }
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    fn too_large(&self) -> HttpError {
        HttpError::TooLarge(format!(
            "response body exceeds the limit of {} bytes",
            self.max_response
        ))
    }
}

fn is_host_controlled(name: &reqwest::header::HeaderName) -> bool {
    use reqwest::header;
    name == header::AUTHORIZATION
        || name == header::HOST
        || name == header::COOKIE
        || name == header::PROXY_AUTHORIZATION
        || name == header::CONNECTION
        || name == header::TRANSFER_ENCODING
        || name == header::CONTENT_LENGTH
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
        && a.username().is_empty()
        && a.password().is_none()
}

fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

fn map_error(e: &reqwest::Error, url: &Url) -> HttpError {
    let target = origin(url);
    if e.is_timeout() {
        return HttpError::Timeout(format!("{target} did not answer in time"));
    }
    let chain = error_chain(e);
    if chain.contains("certificate") || chain.contains("tls") || chain.contains("TLS") {
        return HttpError::Tls(format!("TLS with {target} failed: {chain}"));
    }
    if e.is_connect() {
        return HttpError::Unreachable(format!("cannot connect to {target}: {chain}"));
    }
    HttpError::Unreachable(format!("request to {target} failed: {chain}"))
}

/// The messages of an error's sources, without URLs (which could carry credentials).
fn error_chain(e: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    if parts.is_empty() {
        "unknown error".into()
    } else {
        parts.join(": ")
    }
}

impl HttpGrant {
    /// Sends one request of `plugin`'s, counted in the endpoint's metrics: a 0.1.0 plugin's
    /// `http.send`, or a request of a 0.2.0 driver's step.
    pub(crate) async fn carry(
        &self,
        plugin: &str,
        request: Request,
    ) -> Result<Response, HttpError> {
        // A socket is a file: the process's requests in flight are bounded below its open files
        // limit, and a request waits for its turn, until the call's deadline.
        let result = match tokio::time::timeout_at(
            self.deadline.into(),
            self.in_flight.clone().acquire_owned(),
        )
        .await
        {
            Ok(permit) => {
                let _permit = permit.expect("the request semaphore is never closed");
                self.send(request).await
            }
            Err(_) => Err(HttpError::Timeout(
                "every request this process may have in flight was in flight until the call's \
                 deadline"
                    .into(),
            )),
        };
        if let Err(e) = &result {
            // The plugin's URL may be in it: escaped and clipped as any plugin text.
            let error = super::text::plugin_text(&format!("{e:?}"), 512);
            tracing::debug!(plugin, error, "a plugin's request was refused or failed");
        }
        self.count(&result);
        result
    }
}

impl wit_http::Host for PluginState {
    async fn send(&mut self, request: Request) -> Result<Response, HttpError> {
        let Some(grant) = &self.http else {
            return Err(HttpError::Denied(
                "this call was given no endpoint to reach".into(),
            ));
        };
        grant.carry(&self.plugin, request).await
    }
}

/// A client of its own (no plugin's budget or grant) that trusts exactly one certificate, by the
/// SHA-256 of its DER, and follows no redirect: how Podium calls a deploy agent, whose
/// self-signed certificate came with its heartbeat.
pub fn pinned_client(sha256: &str, timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(timeout)
        .user_agent(concat!("podium/", env!("CARGO_PKG_VERSION")))
        .use_preconfigured_tls(pinned_tls(sha256)?)
        .build()
        .map_err(|e| e.to_string())
}

/// The SHA-256 (lower-case hex) of the DER of the first certificate in `pem`: what
/// [`pinned_client`] pins.
pub fn certificate_sha256(pem: &str) -> Result<String, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use sha2::{Digest, Sha256};
    let der = CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| format!("not a PEM certificate: {e}"))?;
    Ok(hex::encode(Sha256::digest(der.as_ref())))
}

/// A TLS client configuration that accepts exactly one certificate, by its SHA-256.
fn pinned_tls(sha256: &str) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = PinnedVerifier {
        sha256: sha256.to_ascii_lowercase(),
        provider: provider.clone(),
    };
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

#[derive(Debug)]
struct PinnedVerifier {
    sha256: String,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl rustls::client::danger::ServerCertVerifier for PinnedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use sha2::{Digest, Sha256};
        let found = hex::encode(Sha256::digest(end_entity.as_ref()));
        if found == self.sha256 {
            Ok(rustls::client::danger::ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "certificate sha256 {found} does not match the pinned {}",
                self.sha256
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pinned(n: u8) -> TlsPolicy {
        TlsPolicy::Pinned(format!("{n:064x}"))
    }

    /// Past the bound, the policy used longest ago loses its client, and only it: the others
    /// keep theirs and their connections (the map was once cleared whole at its bound, so a
    /// fleet of more hosts than that, each with its own certificate, never reused a connection).
    #[test]
    fn past_the_bound_the_least_recently_used_client_goes() {
        let clients = Clients::keeping(3);
        for n in [1, 2, 3] {
            clients.get(&pinned(n)).unwrap();
        }
        clients.get(&pinned(1)).unwrap();
        clients.get(&pinned(4)).unwrap();
        let kept = clients.by_policy.lock().unwrap();
        let kept: Vec<_> = [1, 2, 3, 4]
            .into_iter()
            .filter(|n| kept.contains_key(&pinned(*n)))
            .collect();
        assert_eq!(kept, [1, 3, 4]);
    }

    /// A server that answers every request of a connection (HTTP/1.1, kept alive unless the
    /// request says `Connection: close`) and counts the connections it accepted.
    async fn counting_server() -> (Url, Arc<AtomicU64>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        let accepted = Arc::new(AtomicU64::new(0));
        let counted = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut read = Vec::new();
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = socket.read(&mut buf).await {
                        if n == 0 {
                            return;
                        }
                        read.extend_from_slice(&buf[..n]);
                        while let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&read[..end]).to_lowercase();
                            read.drain(..end + 4);
                            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            if socket.write_all(answer).await.is_err()
                                || head.contains("connection: close")
                            {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    /// A server whose every answer declares a body of 1 MiB, sends `sent` bytes of it and then
    /// never the rest: an answer still in flight.
    async fn hanging_server(sent: usize) -> Url {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let mut read = Vec::new();
                    while !read.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => read.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = b"HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\n";
                    let _ = socket.write_all(head).await;
                    let _ = socket.write_all(&vec![b'a'; sent]).await;
                    std::future::pending::<()>().await;
                });
            }
        });
        url
    }

    /// A step's answers count against its bound as their bytes arrive: two answers still in
    /// flight whose parts add up to more than the bound stop there, before either completes.
    #[tokio::test]
    async fn answers_in_flight_count_against_the_steps_memory() {
        let base = hanging_server(700).await;
        let grant = HttpGrant::new(
            Endpoint {
                base,
                credentials: None,
                tls: TlsPolicy::System,
                pod_manager: None,
                parallel_requests: None,
            },
            Clients::default().get(&TlsPolicy::System).unwrap(),
            Arc::new(tokio::sync::Semaphore::new(16)),
            Arc::new(IdleConnections::new(16)),
            crate::metrics::Metrics::default(),
            None,
            GrantLimits {
                deadline: Instant::now() + Duration::from_secs(30),
                max_request: 1 << 10,
                max_response: 2 << 20,
                budget: None,
            },
        );
        let get = || Request {
            method: Method::Get,
            url: "/".into(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        grant.begin_answers(1000);
        let first = grant.carry("test", get());
        let second = grant.carry("test", get());
        let stopped = tokio::select! {
            answer = first => answer,
            answer = second => answer,
        };
        match stopped {
            Err(HttpError::TooLarge(message)) => {
                assert!(message.contains("memory limit of 1000 bytes"), "{message}");
            }
            other => panic!("an answer past the step's bound: {other:?}"),
        }
        assert!(grant.answers_exceeded());
        // The next step starts from nothing.
        grant.begin_answers(1000);
        assert!(!grant.answers_exceeded());
    }

    /// Past the bound of connections kept idle, a BMC without one has its connection closed
    /// after each answer; a BMC with one keeps reusing it.
    #[tokio::test]
    async fn past_the_bound_of_idle_connections_a_bmc_without_one_connects_for_each_request() {
        let idle = Arc::new(IdleConnections::new(1));
        let client = Clients::default().get(&TlsPolicy::System).unwrap();
        let grant = |base: &Url| {
            HttpGrant::new(
                Endpoint {
                    base: base.clone(),
                    credentials: None,
                    tls: TlsPolicy::System,
                    pod_manager: None,
                    parallel_requests: None,
                },
                client.clone(),
                Arc::new(tokio::sync::Semaphore::new(16)),
                idle.clone(),
                crate::metrics::Metrics::default(),
                None,
                GrantLimits {
                    deadline: Instant::now() + Duration::from_secs(30),
                    max_request: 1 << 10,
                    max_response: 1 << 10,
                    budget: None,
                },
            )
        };
        let get = || Request {
            method: Method::Get,
            url: "/redfish/v1".into(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        let (first, first_accepted) = counting_server().await;
        let (second, second_accepted) = counting_server().await;
        let (first, second) = (grant(&first), grant(&second));
        for _ in 0..3 {
            assert_eq!(first.carry("test", get()).await.unwrap().body, b"ok");
            assert_eq!(second.carry("test", get()).await.unwrap().body, b"ok");
        }
        assert_eq!(first_accepted.load(Ordering::SeqCst), 1);
        assert_eq!(second_accepted.load(Ordering::SeqCst), 3);
    }
}
