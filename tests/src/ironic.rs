//! Standalone OpenStack Ironic, unmodified (PyPI `ironic`, installed into `.peers/ironic` by
//! `scripts/setup-peers.sh --ironic`): one `ironic` process serving the API and running the
//! conductor, on SQLite, `auth_strategy = noauth`, `rpc_transport = none`, with the `redfish`
//! hardware type (its `redfish` power, management and inspect interfaces, `redfish-virtual-media`
//! boot). The benchmarks run it beside Podium against the same emulators and latency proxies.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The API microversion asked for: Ironic 39's.
const API_VERSION: &str = "1.95";

/// The venv Ironic is installed in.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join(".peers/ironic")
}

/// A running Ironic, killed when dropped.
#[derive(Debug)]
pub struct Ironic {
    child: tokio::process::Child,
    dir: tempfile::TempDir,
    url: String,
    http: reqwest::Client,
}

impl Ironic {
    /// Starts Ironic with its periodic power-state sync every `power_sync` and waits until its
    /// API answers.
    pub async fn start(power_sync: Duration) -> Result<Ironic> {
        let bin = root().join("bin");
        ensure!(
            bin.join("ironic").exists(),
            "Ironic is not installed: run scripts/setup-peers.sh --ironic"
        );
        let dir = tempfile::tempdir()?;
        let port = crate::sushy::free_port();
        let conf = dir.path().join("ironic.conf");
        std::fs::write(
            &conf,
            format!(
                "[DEFAULT]\n\
                 auth_strategy = noauth\n\
                 rpc_transport = none\n\
                 host = podium-bench\n\
                 enabled_hardware_types = redfish\n\
                 enabled_power_interfaces = redfish\n\
                 enabled_management_interfaces = redfish\n\
                 enabled_boot_interfaces = redfish-virtual-media\n\
                 enabled_inspect_interfaces = redfish,no-inspect\n\
                 enabled_deploy_interfaces = ramdisk\n\
                 enabled_bios_interfaces = no-bios,redfish\n\
                 default_bios_interface = no-bios\n\
                 enabled_raid_interfaces = no-raid\n\
                 enabled_vendor_interfaces = no-vendor,redfish\n\
                 default_vendor_interface = no-vendor\n\
                 enabled_network_interfaces = noop\n\
                 enabled_console_interfaces = no-console\n\
                 enabled_firmware_interfaces = no-firmware,redfish\n\
                 default_firmware_interface = no-firmware\n\
                 use_stderr = true\n\
                 [api]\n\
                 host_ip = 127.0.0.1\n\
                 port = {port}\n\
                 [database]\n\
                 connection = sqlite:///{}\n\
                 [conductor]\n\
                 automated_clean = false\n\
                 sync_power_state_interval = {}\n\
                 [redfish]\n\
                 firmware_update_status_interval = 2\n\
                 firmware_update_validation_interval = 1\n\
                 [dhcp]\n\
                 dhcp_provider = none\n",
                dir.path().join("ironic.sqlite").display(),
                power_sync.as_secs().max(1),
            ),
        )?;
        let log = std::fs::File::create(dir.path().join("ironic.log"))?;
        let dbsync = tokio::process::Command::new(bin.join("ironic-dbsync"))
            .arg("--config-file")
            .arg(&conf)
            .arg("create_schema")
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log.try_clone()?))
            .status()
            .await
            .context("running ironic-dbsync")?;
        ensure!(dbsync.success(), "ironic-dbsync failed: {dbsync}");
        let child = tokio::process::Command::new(bin.join("ironic"))
            .arg("--config-file")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .context("spawning ironic")?;
        let ironic = Ironic {
            child,
            dir,
            url: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = ironic.http.get(format!("{}/v1", ironic.url)).send().await
                && r.status().is_success()
            {
                return Ok(ironic);
            }
            if Instant::now() > deadline {
                bail!("Ironic did not answer in 60 s; its log:\n{}", ironic.log());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The end of Ironic's log.
    pub fn log(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("ironic.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// A request to Ironic's API; its answer must be a success. A node locked by other work
    /// (409, "locked", as when the periodic power sync holds it) is asked again a second later,
    /// up to a minute, as Ironic's own clients do.
    pub async fn request(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value> {
        let mut tries = 0;
        let (status, text) = loop {
            let mut request = self
                .http
                .request(method.clone(), format!("{}/v1{path}", self.url))
                .header("X-OpenStack-Ironic-API-Version", API_VERSION);
            if let Some(body) = &body {
                request = request.json(body);
            }
            let response = request.send().await?;
            let status = response.status();
            let text = response.text().await?;
            tries += 1;
            if status == StatusCode::CONFLICT && text.contains("locked") && tries < 60 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            break (status, text);
        };
        ensure!(
            status.is_success(),
            "Ironic answered {method} {path} with {status}: {text}"
        );
        if text.is_empty() || status == StatusCode::NO_CONTENT {
            return Ok(Value::Null);
        }
        Ok(serde_json::from_str(&text)?)
    }

    /// Enrolls a node of the `redfish` hardware type at `address` (its BMC) and `system` (the
    /// system's path there); answers its uuid.
    pub async fn node_create(&self, address: &str, system: &str) -> Result<String> {
        self.node_create_with(address, system, "admin", "password")
            .await
    }

    /// Enrolls a node as [`Ironic::node_create`] does, with the given Redfish credentials.
    pub async fn node_create_with(
        &self,
        address: &str,
        system: &str,
        username: &str,
        password: &str,
    ) -> Result<String> {
        self.enroll(json!({}), address, system, username, password)
            .await
    }

    /// Enrolls a node as [`Ironic::node_create_with`] does, with the hardware interfaces
    /// `interfaces` names (`{"bios_interface": "redfish", "inspect_interface": "redfish"}`
    /// for a node whose BIOS Ironic reads and which it inspects out of band;
    /// `{"vendor_interface": "redfish"}` for event subscriptions; `{"firmware_interface":
    /// "redfish"}` for firmware updates in servicing).
    pub async fn node_create_with_interfaces(
        &self,
        interfaces: Value,
        address: &str,
        system: &str,
        username: &str,
        password: &str,
    ) -> Result<String> {
        self.enroll(interfaces, address, system, username, password)
            .await
    }

    /// Enrolls a `redfish` node with the interfaces `node` names.
    async fn enroll(
        &self,
        mut node: Value,
        address: &str,
        system: &str,
        username: &str,
        password: &str,
    ) -> Result<String> {
        node["driver"] = json!("redfish");
        node["driver_info"] = json!({
            "redfish_address": address,
            "redfish_system_id": system,
            "redfish_username": username,
            "redfish_password": password,
        });
        let node = self.request(Method::POST, "/nodes", Some(node)).await?;
        node["uuid"]
            .as_str()
            .map(str::to_owned)
            .context("a node without a uuid")
    }

    /// Asks for a provision state change (`manage`, `inspect`, ...).
    pub async fn provision(&self, node: &str, target: &str) -> Result<()> {
        self.request(
            Method::PUT,
            &format!("/nodes/{node}/states/provision"),
            Some(json!({ "target": target })),
        )
        .await
        .map(drop)
    }

    /// Asks for a power state change (`power on`, `power off`).
    pub async fn power(&self, node: &str, target: &str) -> Result<()> {
        self.request(
            Method::PUT,
            &format!("/nodes/{node}/states/power"),
            Some(json!({ "target": target })),
        )
        .await
        .map(drop)
    }

    /// Every node, with its provision and power state and last error.
    pub async fn nodes(&self) -> Result<Vec<Value>> {
        let mut nodes = Vec::new();
        let mut marker = String::new();
        loop {
            let page = self
                .request(
                    Method::GET,
                    &format!(
                        "/nodes?fields=uuid,provision_state,power_state,target_power_state,\
                         last_error&limit=1000{marker}"
                    ),
                    None,
                )
                .await?;
            let items = page["nodes"].as_array().cloned().unwrap_or_default();
            let Some(last) = items.last().and_then(|n| n["uuid"].as_str()) else {
                return Ok(nodes);
            };
            marker = format!("&marker={last}");
            let full = items.len() == 1000;
            nodes.extend(items);
            if !full {
                return Ok(nodes);
            }
        }
    }
}
