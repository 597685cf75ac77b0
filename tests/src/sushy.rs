//! One real Redfish BMC per test: sushy-tools' emulator (the one Ironic and
//! Metal3 use in their CI) with its fake driver, run by
//! `tests/peers/sushy_emulator.py` from the `.venv-peers` that
//! `scripts/setup-peers.sh` makes (run here on first use if needed).
//!
//! What the wrapper changes from a plain `sushy-emulator`:
//! - all state is in memory: nothing survives a [`Sushy::restart`], which
//!   comes back with the systems of the config, as a freshly started BMC would;
//! - power changes show at once (or after [`SushyConfig::power_delay`]),
//!   instead of after a random 1 to 11 s;
//! - it exits when the test process dies, so a killed test leaves no orphan.
//!
//! ```text
//! let bmc = Sushy::start(SushyConfig::with_systems(2)).await?;
//! let systems = bmc.get_json("/redfish/v1/Systems").await?;
//! ```

use std::fs;
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

/// How long [`Sushy::start`] waits for the emulator to serve its systems.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How many fresh ports [`Sushy::start`] tries when another process took the
/// one it picked before the emulator could bind it.
const PORT_ATTEMPTS: usize = 3;
/// The line werkzeug logs once its socket is bound.
const BOUND_MARKER: &str = "Running on http";
/// The line written to the log before each start.
const START_MARKER: &str = "=== podium: starting sushy-emulator";

/// One system of the fake driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeSystem {
    pub uuid: String,
    pub name: String,
    /// "On" or "Off".
    pub power_state: String,
    /// MAC addresses of its NICs (`Systems/{id}/EthernetInterfaces`).
    pub nics: Vec<String>,
}

impl FakeSystem {
    /// `node-{n}`, uuid `27946b59-9e44-4fa7-8e91-{n:012x}`, powered Off, one
    /// NIC with MAC `52:54:00:{n:06x}` (bytes).
    pub fn numbered(n: u32) -> FakeSystem {
        let [_, a, b, c] = n.to_be_bytes();
        FakeSystem {
            uuid: format!("27946b59-9e44-4fa7-8e91-{n:012x}"),
            name: format!("node-{n}"),
            power_state: "Off".to_owned(),
            nics: vec![format!("52:54:00:{a:02x}:{b:02x}:{c:02x}")],
        }
    }
}

/// What one emulator serves.
#[derive(Debug, Clone, Default)]
pub struct SushyConfig {
    pub systems: Vec<FakeSystem>,
    /// HTTP basic auth (user, password). The emulator takes bcrypt hashes
    /// only; they are made with cost 4 so requests stay fast.
    pub basic_auth: Option<(String, String)>,
    /// Serve HTTPS with a fresh self-signed certificate for 127.0.0.1 and
    /// localhost (see [`Sushy::cert_pem`]). The emulator speaks TLS 1.2 only.
    pub tls: bool,
    /// `SUSHY_EMULATOR_FEATURE_SET`: "full" (default), "vmedia" or "minimum".
    pub feature_set: Option<String>,
    /// `SUSHY_EMULATOR_VMEDIA_DEVICES`, e.g.
    /// `{"Cd": {"Name": "Virtual CD", "MediaTypes": ["CD", "DVD"]}}`.
    /// None: the emulator's default Cd and Floppy.
    pub vmedia_devices: Option<Value>,
    /// Fixed delay before a power change shows in `PowerState`.
    /// None: at once.
    pub power_delay: Option<Duration>,
    /// sushy-tools' libvirt driver in front of real virtual machines, instead of its fake
    /// driver (`systems` is then unused).
    pub libvirt: Option<LibvirtBackend>,
    /// Further `SUSHY_EMULATOR_*` settings, written as Python literals (JSON's `null`, `true`
    /// are `None`, `True`).
    pub settings: Vec<(&'static str, Value)>,
}

/// What the emulator's libvirt driver fronts.
#[derive(Debug, Clone)]
pub struct LibvirtBackend {
    /// `SUSHY_EMULATOR_LIBVIRT_URI`, e.g. `qemu:///system`.
    pub uri: String,
    /// The UUIDs of the domains it serves (`SUSHY_EMULATOR_ALLOWED_INSTANCES`): no other.
    pub domains: Vec<String>,
    /// The storage pool it uploads inserted media into (`SUSHY_EMULATOR_STORAGE_POOL`).
    pub storage_pool: String,
}

impl SushyConfig {
    /// `n` systems made by [`FakeSystem::numbered`] (1..=n), no auth, HTTP.
    pub fn with_systems(n: u32) -> SushyConfig {
        SushyConfig {
            systems: (1..=n).map(FakeSystem::numbered).collect(),
            ..SushyConfig::default()
        }
    }
}

/// A running emulator. Dropping it kills the process (kill + wait).
#[derive(Debug)]
pub struct Sushy {
    config: SushyConfig,
    root: PathBuf,
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
    cert_pem: Option<String>,
    client: reqwest::Client,
}

impl Sushy {
    /// Writes the config into a fresh temp dir, starts the emulator on a free
    /// 127.0.0.1 port and waits (at most 30 s) until `GET /redfish/v1/Systems`
    /// lists every configured system.
    pub async fn start(config: SushyConfig) -> Result<Sushy> {
        let root = repo_root();
        {
            let root = root.clone();
            tokio::task::spawn_blocking(move || ensure_peers(&root))
                .await
                .context("setup-peers task")??;
        }
        let dir = tempfile::Builder::new()
            .prefix("podium-sushy-")
            .tempdir()
            .context("creating the emulator's temp dir")?;
        let cert_pem = write_config(&root, dir.path(), &config).await?;
        let client = http_client(cert_pem.as_deref())?;
        let mut sushy = Sushy {
            config,
            root,
            port: 0,
            dir,
            child: None,
            cert_pem,
            client,
        };
        let mut attempt = 1;
        loop {
            sushy.port = free_port();
            match sushy.launch().await {
                Ok(()) => return Ok(sushy),
                Err(e) if attempt < PORT_ATTEMPTS && sushy.port_was_taken() => {
                    eprintln!(
                        "sushy: port {} was taken, trying another: {e:#}",
                        sushy.port
                    );
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// `http://127.0.0.1:PORT`, or `https://…` with [`SushyConfig::tls`].
    pub fn url(&self) -> String {
        let scheme = if self.config.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn config(&self) -> &SushyConfig {
        &self.config
    }

    /// The self-signed certificate (PEM) the emulator serves, with `tls`.
    pub fn cert_pem(&self) -> Option<&str> {
        self.cert_pem.as_deref()
    }

    /// Where the emulator's stdout and stderr go (one file across restarts).
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("emulator.log")
    }

    /// A client that trusts [`Sushy::cert_pem`] and uses no proxy.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// A request to `path` (e.g. `/redfish/v1/Systems`) on this emulator,
    /// with its basic auth if it has one.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.client.request(method, format!("{}{path}", self.url()));
        match &self.config.basic_auth {
            Some((user, password)) => request.basic_auth(user, Some(password)),
            None => request,
        }
    }

    /// GETs `path` from the emulator directly, so a test can check what the
    /// BMC itself reports. Fails on a non-2xx answer.
    pub async fn get_json(&self, path: &str) -> Result<Value> {
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .with_context(|| format!("GET {path} from sushy at {}", self.url()))?;
        let status = response.status();
        let body = response.text().await.context("reading the body")?;
        if !status.is_success() {
            bail!("GET {path} from sushy: {status}: {body}");
        }
        serde_json::from_str(&body).with_context(|| format!("GET {path}: not JSON: {body}"))
    }

    /// The emulator's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the emulator (kill + wait). A no-op when it is not running.
    pub async fn stop(&mut self) {
        self.kill();
    }

    /// Stops the emulator and starts it again on the same port with the same
    /// config. State is kept in memory only, so it comes back as configured:
    /// power states, boot settings and inserted media are reset.
    pub async fn restart(&mut self) -> Result<()> {
        self.kill();
        self.launch().await
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Spawns the emulator on `self.port` and waits until it is ready.
    async fn launch(&mut self) -> Result<()> {
        self.kill();
        let log_path = self.log_path();
        let mut log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        writeln!(log, "{START_MARKER} on port {} ===", self.port)?;
        let log_start = log.metadata()?.len();

        let mut command = Command::new(venv_python(&self.root));
        command
            .arg(self.root.join("tests/peers/sushy_emulator.py"))
            .arg("--parent-pid")
            .arg(std::process::id().to_string());
        if let Some(delay) = self.config.power_delay {
            command
                .arg("--power-delay")
                .arg(delay.as_secs_f64().to_string());
        }
        command
            .arg("--config")
            .arg(self.dir.path().join("emu.py"))
            .args(["-i", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log))
            .env("PYTHONUNBUFFERED", "1")
            .env("NO_COLOR", "1")
            // The libvirt driver downloads inserted media here and never deletes them: the
            // temp dir goes with the emulator.
            .env("TMPDIR", self.dir.path());
        for var in [
            "SUSHY_EMULATOR_CONFIG",
            "SUSHY_EMULATOR_LIBVIRT_URI",
            "SUSHY_EMULATOR_LIBVIRT_URL",
            "OS_CLOUD",
        ] {
            command.env_remove(var);
        }
        let child = command
            .spawn()
            .with_context(|| format!("spawning {command:?}"))?;
        self.child = Some(child);

        match self.wait_ready(log_start).await {
            Ok(()) => Ok(()),
            Err(e) => {
                self.kill();
                Err(e.context(format!(
                    "sushy emulator did not start on port {}; log {}:\n{}",
                    self.port,
                    log_path.display(),
                    log_tail(&log_path, log_start, 40)
                )))
            }
        }
    }

    /// Waits until this child has bound its port (werkzeug's "Running on"
    /// line: so we never mistake another process on the port for ours) and
    /// `GET /redfish/v1/Systems` lists every configured system (the fake
    /// driver loads them on that first GET).
    async fn wait_ready(&mut self, log_start: u64) -> Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        let want = match &self.config.libvirt {
            Some(libvirt) => libvirt.domains.len(),
            None => self.config.systems.len(),
        };
        let mut bound = false;
        let mut last = String::from("no answer yet");
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                bail!("the emulator exited ({status}) before it was ready");
            }
            if !bound {
                bound = log_since(&self.log_path(), log_start).contains(BOUND_MARKER);
            }
            if bound {
                match self.get_json("/redfish/v1/Systems").await {
                    Ok(systems) => {
                        let members = systems["Members"].as_array().map_or(0, Vec::len);
                        if members == want {
                            return Ok(());
                        }
                        last = format!("{members} of {want} systems listed");
                    }
                    Err(e) => last = format!("{e:#}"),
                }
            }
            if Instant::now() >= deadline {
                bail!(
                    "not ready after {:?} (bound: {bound}; last: {last})",
                    START_TIMEOUT
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    fn port_was_taken(&self) -> bool {
        port_taken_in(&log_since(&self.log_path(), 0))
    }
}

/// Whether the last start logged in `log` failed because the port was in use.
fn port_taken_in(log: &str) -> bool {
    log.lines()
        .rev()
        .take_while(|line| !line.starts_with(START_MARKER))
        .any(|line| line.contains("Address already in use"))
}

impl Drop for Sushy {
    fn drop(&mut self) {
        self.kill();
    }
}

/// sushy-tools' `sushy-static`: one of DMTF's mockups (`tests/peers/dmtf-mockups/`, see
/// [`crate::composition::mockup`]) served as it is, read-only (a POST or PATCH changes nothing),
/// by a peer nobody here wrote. It takes no credentials and ignores any sent. Dropping it kills
/// the process; it dies with the test process too (`setpriv --pdeathsig`).
#[derive(Debug)]
pub struct SushyStatic {
    port: u16,
    child: Child,
    log: tempfile::NamedTempFile,
}

impl SushyStatic {
    /// Serves `mockup` on a free 127.0.0.1 port; ready once its service root answers.
    pub async fn start(mockup: &Path) -> Result<SushyStatic> {
        let root = repo_root();
        {
            let root = root.clone();
            tokio::task::spawn_blocking(move || ensure_peers(&root))
                .await
                .context("setup-peers task")??;
        }
        let client = http_client(None)?;
        let mut attempt = 1;
        loop {
            let port = free_port();
            let log = tempfile::Builder::new()
                .prefix("podium-sushy-static-")
                .suffix(".log")
                .tempfile()?;
            let child = Command::new("setpriv")
                .args(["--pdeathsig", "KILL", "--"])
                .arg(venv_python(&root))
                .arg(root.join(".venv-peers/bin/sushy-static"))
                .args(["-i", "127.0.0.1", "-p"])
                .arg(port.to_string())
                .arg("-m")
                .arg(mockup)
                .stdin(Stdio::null())
                .stdout(Stdio::from(log.reopen()?))
                .stderr(Stdio::from(log.reopen()?))
                .env("PYTHONUNBUFFERED", "1")
                .spawn()
                .context("spawning sushy-static")?;
            let mut server = SushyStatic { port, child, log };
            match server.wait_ready(&client).await {
                Ok(()) => return Ok(server),
                Err(e) => {
                    let log = fs::read_to_string(server.log.path()).unwrap_or_default();
                    if attempt < PORT_ATTEMPTS && log.contains("Address already in use") {
                        attempt += 1;
                        continue;
                    }
                    return Err(e.context(format!("sushy-static did not start; its log:\n{log}")));
                }
            }
        }
    }

    async fn wait_ready(&mut self, client: &reqwest::Client) -> Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        let root = format!("{}/redfish/v1", self.url());
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("sushy-static exited ({status}) before it was ready");
            }
            if let Ok(answer) = client.get(&root).send().await
                && answer.status().is_success()
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!("sushy-static did not answer {root} within {START_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// `http://127.0.0.1:PORT`, the service root at `/redfish/v1`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What it logged so far: each request's line (`"POST /redfish/v1/... HTTP/1.1" 204`), its
    /// headers, and the body of each POST and PATCH (`Data: b'...'`).
    pub fn log(&self) -> String {
        fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

impl Drop for SushyStatic {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("binding 127.0.0.1:0")
}

/// The repo root: `$PODIUM_REPO_ROOT`, else the parent of this crate
/// (`tests/`).
fn repo_root() -> PathBuf {
    if let Some(root) = std::env::var_os("PODIUM_REPO_ROOT") {
        return PathBuf::from(root);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate has a parent dir")
        .to_path_buf()
}

fn venv_python(root: &Path) -> PathBuf {
    root.join(".venv-peers/bin/python")
}

/// Runs `scripts/setup-peers.sh` once per process. The script returns at once
/// when all is installed, and locks against other processes itself.
fn ensure_peers(root: &Path) -> Result<()> {
    static SETUP: OnceLock<Result<(), String>> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let script = root.join("scripts/setup-peers.sh");
            let output = Command::new("bash")
                .arg(&script)
                .current_dir(root)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("running bash {}: {e}", script.display()))?;
            if output.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{} failed ({}); run `bash scripts/setup-peers.sh` in {} and fix what it says:\n{}{}",
                    script.display(),
                    output.status,
                    root.display(),
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr),
                ))
            }
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// Writes `emu.py` (and htpasswd, cert.pem, key.pem as needed) into `dir`.
/// Returns the certificate PEM with `tls`.
async fn write_config(root: &Path, dir: &Path, config: &SushyConfig) -> Result<Option<String>> {
    let path_value = |name: &str| Value::String(dir.join(name).to_string_lossy().into_owned());
    let systems: Vec<Value> = config
        .systems
        .iter()
        .map(|s| {
            json!({
                "uuid": s.uuid,
                "name": s.name,
                "power_state": s.power_state,
                "nics": s.nics.iter().map(|mac| json!({"mac": mac})).collect::<Vec<_>>(),
            })
        })
        .collect();
    // Unused while state is in memory; set so nothing lands in /tmp/sushy-emulator.
    let mut settings: Vec<(&str, Value)> = vec![("SUSHY_EMULATOR_STATE_DIR", path_value("state"))];
    match &config.libvirt {
        None => {
            settings.push(("SUSHY_EMULATOR_FAKE_DRIVER", Value::Bool(true)));
            settings.push(("SUSHY_EMULATOR_FAKE_SYSTEMS", Value::Array(systems)));
        }
        Some(libvirt) => {
            settings.push(("SUSHY_EMULATOR_LIBVIRT_URI", json!(libvirt.uri)));
            settings.push(("SUSHY_EMULATOR_ALLOWED_INSTANCES", json!(libvirt.domains)));
            settings.push(("SUSHY_EMULATOR_STORAGE_POOL", json!(libvirt.storage_pool)));
        }
    }
    settings.extend(config.settings.iter().cloned());
    if let Some((user, password)) = &config.basic_auth {
        if user.contains(':') || user.contains('\n') {
            bail!("basic auth user {user:?}: no ':' or newline allowed");
        }
        let hash = bcrypt_hash(root, password).await?;
        fs::write(dir.join("htpasswd"), format!("{user}:{hash}\n"))?;
        settings.push(("SUSHY_EMULATOR_AUTH_FILE", path_value("htpasswd")));
    }
    let mut cert_pem = None;
    if config.tls {
        let rcgen::CertifiedKey { cert, signing_key } = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
        ])
        .context("generating a self-signed certificate")?;
        let pem = cert.pem();
        fs::write(dir.join("cert.pem"), &pem)?;
        fs::write(dir.join("key.pem"), signing_key.serialize_pem())?;
        settings.push(("SUSHY_EMULATOR_SSL_CERT", path_value("cert.pem")));
        settings.push(("SUSHY_EMULATOR_SSL_KEY", path_value("key.pem")));
        cert_pem = Some(pem);
    }
    if let Some(feature_set) = &config.feature_set {
        settings.push((
            "SUSHY_EMULATOR_FEATURE_SET",
            Value::String(feature_set.clone()),
        ));
    }
    if let Some(devices) = &config.vmedia_devices {
        settings.push(("SUSHY_EMULATOR_VMEDIA_DEVICES", devices.clone()));
    }

    let mut emu = String::from(
        "# Written by tests/src/sushy.rs for one test; read by sushy-emulator --config.\n",
    );
    for (key, value) in &settings {
        emu.push_str(key);
        emu.push_str(" = ");
        python_literal(value, &mut emu);
        emu.push('\n');
    }
    fs::write(dir.join("emu.py"), emu)?;
    Ok(cert_pem)
}

/// A bcrypt hash of cost 4, made by the venv's `bcrypt` (the module that
/// checks it in the emulator).
async fn bcrypt_hash(root: &Path, password: &str) -> Result<String> {
    use tokio::io::AsyncWriteExt;

    let mut child = tokio::process::Command::new(venv_python(root))
        .args([
            "-c",
            "import sys, bcrypt; sys.stdout.write(bcrypt.hashpw(sys.stdin.buffer.read(), bcrypt.gensalt(rounds=4)).decode())",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawning python to hash the password")?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin.write_all(password.as_bytes()).await?;
    drop(stdin);
    let output = child.wait_with_output().await?;
    if !output.status.success() {
        bail!(
            "hashing the password with bcrypt failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8(output.stdout).context("bcrypt hash is not UTF-8")
}

fn http_client(cert_pem: Option<&str>) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10));
    if let Some(pem) = cert_pem {
        builder = builder.add_root_certificate(
            reqwest::Certificate::from_pem(pem.as_bytes()).context("parsing our own cert")?,
        );
    }
    builder.build().context("building the HTTP client")
}

/// JSON as a Python literal (for `emu.py`). JSON strings are valid Python
/// string literals.
fn python_literal(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_literal(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                python_literal(item, out);
            }
            out.push('}');
        }
    }
}

/// The log from byte `start` on (lossy UTF-8; empty if unreadable).
fn log_since(path: &Path, start: u64) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = usize::try_from(start)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

fn log_tail(path: &Path, start: u64, lines: usize) -> String {
    let log = log_since(path, start);
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs `tool`, one of the programs installed in the peers' venv (`rf_power_reset.py`,
/// `rf_protocol_validator`, ...), with `args` in `dir`; its exit status and both outputs.
pub async fn run_peer_tool(
    tool: &str,
    args: &[&str],
    dir: &Path,
) -> Result<(std::process::ExitStatus, String, String)> {
    let root = repo_root();
    ensure_peers(&root)?;
    let output = tokio::process::Command::new(venv_python(&root))
        .arg(root.join(".venv-peers/bin").join(tool))
        .args(args)
        .current_dir(dir)
        // Where these are set (this machine sets both), `requests` puts them before what a
        // session was told to verify with (a tool's `--ca-bundle`).
        .env_remove("REQUESTS_CA_BUNDLE")
        .env_remove("CURL_CA_BUNDLE")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("running {tool}"))?;
    Ok((
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// Runs `tests/peers/{script}` with `args` in the peers' Python (the venv sushy-tools runs
/// from, which also has the Redfish clients `redfish` and `sushy`); its standard output when it
/// exits 0, else an error with both of its outputs.
pub async fn run_peer_script(script: &str, args: &[&str]) -> Result<String> {
    let root = repo_root();
    ensure_peers(&root)?;
    let output = tokio::process::Command::new(venv_python(&root))
        .arg(root.join("tests/peers").join(script))
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("running {script}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!(
            "{script} failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "admin";
    const PASSWORD: &str = "s3cret:with colon";

    fn config(tls: bool) -> SushyConfig {
        SushyConfig {
            basic_auth: Some((USER.to_owned(), PASSWORD.to_owned())),
            tls,
            ..SushyConfig::with_systems(2)
        }
    }

    async fn power_state(bmc: &Sushy, uuid: &str) -> Result<String> {
        let system = bmc.get_json(&format!("/redfish/v1/Systems/{uuid}")).await?;
        system["PowerState"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("no PowerState in {system}"))
    }

    async fn reset(bmc: &Sushy, uuid: &str, reset_type: &str) -> Result<()> {
        let response = bmc
            .request(
                reqwest::Method::POST,
                &format!("/redfish/v1/Systems/{uuid}/Actions/ComputerSystem.Reset"),
            )
            .json(&json!({ "ResetType": reset_type }))
            .send()
            .await?;
        let status = response.status();
        if status != reqwest::StatusCode::NO_CONTENT {
            bail!("reset {reset_type}: {status}: {}", response.text().await?);
        }
        Ok(())
    }

    /// Lists the systems, refuses a wrong password, powers one on at once.
    async fn exercise(tls: bool) -> Result<Sushy> {
        let started = Instant::now();
        let bmc = Sushy::start(config(tls)).await?;
        eprintln!("emulator (tls: {tls}) ready in {:?}", started.elapsed());
        assert!(bmc.url().starts_with(if tls {
            "https://127.0.0.1:"
        } else {
            "http://127.0.0.1:"
        }));
        assert_eq!(bmc.cert_pem().is_some(), tls);

        let systems = bmc.get_json("/redfish/v1/Systems").await?;
        let mut ids: Vec<&str> = systems["Members"]
            .as_array()
            .context("Members")?
            .iter()
            .filter_map(|m| m["@odata.id"].as_str())
            .collect();
        ids.sort_unstable();
        let one = FakeSystem::numbered(1);
        let two = FakeSystem::numbered(2);
        assert_eq!(
            ids,
            [
                format!("/redfish/v1/Systems/{}", one.uuid),
                format!("/redfish/v1/Systems/{}", two.uuid)
            ]
        );

        let nics = bmc
            .get_json(&format!(
                "/redfish/v1/Systems/{}/EthernetInterfaces",
                one.uuid
            ))
            .await?;
        assert_eq!(nics["Members"].as_array().map(Vec::len), Some(1), "{nics}");

        let wrong = bmc
            .client()
            .get(format!("{}/redfish/v1/Systems", bmc.url()))
            .basic_auth(USER, Some("wrong"))
            .send()
            .await?;
        assert_eq!(wrong.status(), reqwest::StatusCode::UNAUTHORIZED);
        let none = bmc
            .client()
            .get(format!("{}/redfish/v1/Systems", bmc.url()))
            .send()
            .await?;
        assert_eq!(none.status(), reqwest::StatusCode::UNAUTHORIZED);

        assert_eq!(power_state(&bmc, &one.uuid).await?, "Off");
        reset(&bmc, &one.uuid, "On").await?;
        assert_eq!(power_state(&bmc, &one.uuid).await?, "On");
        assert_eq!(power_state(&bmc, &two.uuid).await?, "Off");
        Ok(bmc)
    }

    #[tokio::test]
    async fn http_with_basic_auth() -> Result<()> {
        exercise(false).await?;
        Ok(())
    }

    #[tokio::test]
    async fn https_with_basic_auth() -> Result<()> {
        let bmc = exercise(true).await?;
        // Plain HTTP on the TLS port gets no Redfish answer.
        let plain = bmc
            .client()
            .get(format!(
                "http://127.0.0.1:{}/redfish/v1/Systems",
                bmc.port()
            ))
            .basic_auth(USER, Some(PASSWORD))
            .send()
            .await;
        assert!(plain.map_or(true, |r| !r.status().is_success()));
        Ok(())
    }

    #[tokio::test]
    async fn restart_keeps_port_and_resets_state() -> Result<()> {
        let mut bmc = Sushy::start(SushyConfig::with_systems(1)).await?;
        let uuid = FakeSystem::numbered(1).uuid;
        let url = bmc.url();
        reset(&bmc, &uuid, "On").await?;
        assert_eq!(power_state(&bmc, &uuid).await?, "On");

        bmc.stop().await;
        assert!(bmc.get_json("/redfish/v1/Systems").await.is_err());

        let started = Instant::now();
        bmc.restart().await?;
        eprintln!("emulator restarted in {:?}", started.elapsed());
        assert_eq!(bmc.url(), url);
        assert_eq!(power_state(&bmc, &uuid).await?, "Off");
        Ok(())
    }

    #[tokio::test]
    async fn power_delay_is_fixed() -> Result<()> {
        let bmc = Sushy::start(SushyConfig {
            power_delay: Some(Duration::from_millis(1500)),
            ..SushyConfig::with_systems(1)
        })
        .await?;
        let uuid = FakeSystem::numbered(1).uuid;
        let asked = Instant::now();
        reset(&bmc, &uuid, "On").await?;
        while power_state(&bmc, &uuid).await? != "On" {
            assert!(asked.elapsed() < Duration::from_secs(5), "never powered on");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let took = asked.elapsed();
        assert!(
            took >= Duration::from_millis(1400) && took < Duration::from_millis(2500),
            "{took:?}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn options_reach_the_emulator() -> Result<()> {
        let bmc = Sushy::start(SushyConfig {
            systems: vec![FakeSystem {
                uuid: "0b7ae6bc-6a52-4a1b-9d0e-000000000042".to_owned(),
                name: "quoted \"name\" \u{e9}".to_owned(),
                power_state: "On".to_owned(),
                nics: vec![
                    "52:54:00:aa:00:01".to_owned(),
                    "52:54:00:aa:00:02".to_owned(),
                ],
            }],
            vmedia_devices: Some(json!({
                "Cd": {"Name": "Virtual CD", "MediaTypes": ["CD", "DVD"]},
            })),
            feature_set: Some("vmedia".to_owned()),
            ..SushyConfig::default()
        })
        .await?;
        let path = "/redfish/v1/Systems/0b7ae6bc-6a52-4a1b-9d0e-000000000042";
        let system = bmc.get_json(path).await?;
        assert_eq!(system["Name"], "quoted \"name\" \u{e9}");
        assert_eq!(system["PowerState"], "On");
        let nics = bmc.get_json(&format!("{path}/EthernetInterfaces")).await?;
        assert_eq!(nics["Members"].as_array().map(Vec::len), Some(2), "{nics}");
        let media = bmc.get_json(&format!("{path}/VirtualMedia")).await?;
        let ids: Vec<&str> = media["Members"]
            .as_array()
            .context("Members")?
            .iter()
            .filter_map(|m| m["@odata.id"].as_str())
            .collect();
        assert_eq!(ids, [format!("{path}/VirtualMedia/Cd")]);
        Ok(())
    }

    #[test]
    fn a_port_conflict_is_seen_in_the_last_start_only() {
        let taken = format!(
            "{START_MARKER} on port 1 ===\n * Debug mode: off\n\
             Address already in use\nPort 1 is in use by another program.\n"
        );
        assert!(port_taken_in(&taken));
        let later = format!("{taken}{START_MARKER} on port 2 ===\nsome other failure\n");
        assert!(!port_taken_in(&later));
    }

    #[test]
    fn python_literals() {
        let mut out = String::new();
        let value = json!({"a": [null, true, false, 1.5, -2], "k\"": "x'\\\n\u{e9}"});
        python_literal(&value, &mut out);
        assert_eq!(
            out,
            r#"{"a": [None, True, False, 1.5, -2], "k\"": "x'\\\n"#.to_owned() + "\u{e9}\"}"
        );
    }

    #[tokio::test]
    async fn a_bad_config_fails_with_the_log() {
        let err = Sushy::start(SushyConfig {
            feature_set: Some("everything".to_owned()),
            ..SushyConfig::with_systems(1)
        })
        .await
        .expect_err("an unknown feature set is refused");
        let message = format!("{err:#}");
        assert!(message.contains("exited"), "{message}");
        assert!(message.contains("Invalid feature set"), "{message}");
    }

    /// The wrapper exits when its parent dies: a killed test leaves no orphan.
    #[tokio::test]
    async fn the_emulator_dies_with_its_parent() -> Result<()> {
        let root = repo_root();
        {
            let root = root.clone();
            tokio::task::spawn_blocking(move || ensure_peers(&root)).await??;
        }
        let dir = tempfile::tempdir()?;
        let config = SushyConfig::with_systems(1);
        write_config(&root, dir.path(), &config).await?;
        let port = free_port();
        // bash starts the wrapper with itself as the parent to watch, prints
        // the wrapper's pid, and waits; then we kill bash.
        let mut parent = tokio::process::Command::new("bash")
            .arg("-c")
            .arg(r#""$0" "$1" --parent-pid $$ --config "$2" -i 127.0.0.1 -p "$3" >"$4" 2>&1 & echo $!; wait"#)
            .arg(venv_python(&root))
            .arg(root.join("tests/peers/sushy_emulator.py"))
            .arg(dir.path().join("emu.py"))
            .arg(port.to_string())
            .arg(dir.path().join("emulator.log"))
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut stdout = parent.stdout.take().expect("piped");
        let mut line = String::new();
        {
            use tokio::io::AsyncBufReadExt;
            let mut reader = tokio::io::BufReader::new(&mut stdout);
            reader.read_line(&mut line).await?;
        }
        let pid: u32 = line
            .trim()
            .parse()
            .with_context(|| format!("pid {line:?}"))?;

        let client = http_client(None)?;
        let deadline = Instant::now() + START_TIMEOUT;
        let url = format!("http://127.0.0.1:{port}/redfish/v1/Systems");
        while !client
            .get(&url)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            assert!(Instant::now() < deadline, "emulator never answered");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        parent.kill().await?;
        let deadline = Instant::now() + Duration::from_secs(5);
        // Gone, or a zombie that nobody reaps (PID 1 in some containers).
        let alive = || {
            fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit(") ")
                    .next()
                    .is_some_and(|s| !s.starts_with('Z'))
            })
        };
        while alive() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if alive() {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("emulator {pid} outlived its parent");
        }
        assert!(
            client.get(&url).send().await.is_err(),
            "port {port} still answers"
        );
        Ok(())
    }
}
