//! `podium podm`: pod managers, their operation limits, inventory syncs and network templates.

use anyhow::bail;
use clap::{Args, Subcommand};
use podium_types::requests::{
    AuthParams, OperationLimits, PluginBindingParams, PodManagerCreate, PodManagerUpdate, TlsParams,
};
use podium_types::views::OperationView;
use podium_types::{OperationStatus, Secret};
use reqwest::Method;
use serde_json::json;

use super::client::{self, Client};
use super::input::{parsed, read_json_file, read_stdin_line, seg};
use super::names::Named;
use super::output::{self, Column, Format};
use super::print;
use super::watch::watch_operation;

#[derive(Debug, Subcommand)]
pub(super) enum PodmCommand {
    /// List the pod managers with their status (with a tenant's token: those it was granted,
    /// with its grant of each).
    List,
    /// Show a pod manager (by uuid or name; a tenant: one it was granted).
    Show { uuid: String },
    /// Register a pod manager; the BMC password is read from stdin with --password-stdin.
    Create(Box<PodmCreate>),
    /// Set how many operations of a pod manager (by uuid or name) run at once, and how many
    /// requests a call sends its shared service at once; a limit not given goes back to its
    /// default.
    Limits {
        uuid: String,
        /// At its shared Redfish service (default: the server's).
        #[arg(long, value_name = "N")]
        service: Option<u32>,
        /// At the whole site, hosts with their own BMC included (default: none).
        #[arg(long, value_name = "N")]
        site: Option<u32>,
        /// Requests one driver call sends its shared Redfish service at once (default: the
        /// server's).
        #[arg(long, value_name = "N")]
        requests: Option<u32>,
    },
    /// Set what tenants may change of the hosts they claim at a pod manager (by uuid or name):
    /// what is not given is not allowed (docs/hardware.md).
    TenantFirmware {
        uuid: String,
        /// A BIOS attribute tenants may change (repeat for more).
        #[arg(long = "bios-attribute", value_name = "NAME")]
        bios_attributes: Vec<String>,
        /// Tenants may turn secure boot on and off.
        #[arg(long)]
        secure_boot: bool,
        /// Tenants may update firmware from an image.
        #[arg(long)]
        firmware_update: bool,
    },
    /// Set what a pod manager's (by uuid or name) releases erase and which images its claims
    /// may take; what is not given goes back to its default.
    Deploy {
        uuid: String,
        /// `metadata` (default: partition tables and file system signatures), `full` (every
        /// byte) or `disabled` (nothing: the next tenant may read the last one's data).
        #[arg(long, value_parser = ["metadata", "full", "disabled"])]
        cleaning: Option<String>,
        /// Take claims whose image checksum is md5 (refused by default).
        #[arg(long)]
        allow_md5: bool,
    },
    /// Set how a pod manager's (by uuid or name) power off treats the OS.
    Power {
        uuid: String,
        /// Seconds a power off gives the OS to shut down before it forces the power off (0: at
        /// once; default 120).
        #[arg(long, value_name = "SECONDS")]
        shutdown_timeout: Option<u32>,
    },
    /// Delete a pod manager (by uuid or name) and forget its hosts.
    Delete { uuid: String },
    /// Sync the inventory now.
    Sync {
        uuid: String,
        /// Show the sync's progress until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// The pod manager's network template (docs/network-config.md).
    #[command(subcommand)]
    Template(TemplateCommand),
}

/// `podium podm create`: boxed, as it has many more fields than the other commands.
#[derive(Debug, Args)]
pub(super) struct PodmCreate {
    #[arg(long)]
    name: String,
    /// Its Redfish service, `http(s)://host[:port]`.
    #[arg(long)]
    endpoint: String,
    #[arg(long)]
    username: Option<String>,
    #[arg(long, requires = "username")]
    password_stdin: bool,
    /// Do not verify the service's TLS certificate.
    #[arg(long)]
    insecure: bool,
    /// `admin` (default), `consumer` or `layered`.
    #[arg(long, value_parser = ["admin", "consumer", "layered"])]
    network_config_owner: Option<String>,
    #[arg(long)]
    description: Option<String>,
    #[arg(long)]
    location: Option<String>,
    /// Operations at once at its shared Redfish service (default: the server's).
    #[arg(long, value_name = "N")]
    service_limit: Option<u32>,
    /// Operations at once at the whole site, hosts with their own BMC included (default:
    /// none).
    #[arg(long, value_name = "N")]
    site_limit: Option<u32>,
    /// Requests one driver call sends its shared Redfish service at once (default: the
    /// server's).
    #[arg(long, value_name = "N")]
    request_limit: Option<u32>,
    /// The hardware driver plugin, by name (default: the bundled `redfish`).
    #[arg(long, value_name = "PLUGIN")]
    driver: Option<String>,
    /// The driver's configuration as JSON, e.g. '{"root":"/redfish/v1"}'.
    #[arg(long, value_name = "JSON", requires = "driver")]
    driver_config: Option<String>,
    /// The metaData / networkData renderer plugin, by name.
    #[arg(long, value_name = "PLUGIN")]
    renderer: Option<String>,
    /// The ramdisk ISO (http or https URL) an inspection boots where the site has DHCP-less
    /// pools.
    #[arg(long, value_name = "URL")]
    preprovisioning_image: Option<String>,
    /// What releasing a host whose disks may hold a tenant's data erases: `metadata` (default:
    /// partition tables and file system signatures), `full` (every byte) or `disabled`
    /// (nothing: the next tenant may read the last one's data).
    #[arg(long, value_parser = ["metadata", "full", "disabled"])]
    cleaning: Option<String>,
    /// Take claims whose image checksum is md5 (refused by default).
    #[arg(long)]
    allow_md5: bool,
    /// Seconds a power off gives the OS to shut down before it forces the power off (0: at
    /// once; default 120).
    #[arg(long, value_name = "SECONDS")]
    shutdown_timeout: Option<u32>,
}

impl PodmCreate {
    /// The request that registers the pod manager; reads the password from stdin with
    /// --password-stdin.
    fn request(self) -> anyhow::Result<PodManagerCreate> {
        let PodmCreate {
            name,
            endpoint,
            username,
            password_stdin,
            insecure,
            network_config_owner,
            description,
            location,
            service_limit,
            site_limit,
            request_limit,
            driver,
            driver_config,
            renderer,
            preprovisioning_image,
            cleaning,
            allow_md5,
            shutdown_timeout,
        } = self;
        let driver_config = driver_config
            .map(|c| {
                serde_json::from_str(&c)
                    .map_err(|e| anyhow::anyhow!("--driver-config: not JSON: {e}"))
            })
            .transpose()?;
        let binding = |name: String, config| PluginBindingParams {
            name,
            version: None,
            sha256: None,
            config,
        };
        let auth = match username {
            Some(username) => Some(AuthParams {
                username,
                password: Secret::new(if password_stdin {
                    read_stdin_line("password")?
                } else {
                    String::new()
                }),
            }),
            None => None,
        };
        Ok(PodManagerCreate {
            name,
            url: endpoint,
            auth,
            description,
            location,
            tls: insecure.then_some(TlsParams {
                verify: false,
                ca_bundle: None,
                pinned_sha256: None,
            }),
            driver: driver.map(|d| binding(d, driver_config)),
            ipam: None,
            renderer: renderer.map(|r| binding(r, None)),
            network_config_owner: network_config_owner
                .map(|o| parsed("--network-config-owner", &o))
                .transpose()?,
            limits: Some(OperationLimits {
                service: service_limit,
                site: site_limit,
                requests: request_limit,
            }),
            preprovisioning_image,
            deploy: Some(podium_types::DeploySettings {
                cleaning: cleaning
                    .map(|c| parsed("--cleaning", &c))
                    .transpose()?
                    .unwrap_or_default(),
                allow_md5,
            }),
            power: shutdown_timeout
                .map(|shutdown_timeout| podium_types::PowerSettings { shutdown_timeout }),
            tenant_firmware: None,
            firmware_profile: None,
        })
    }
}

#[derive(Debug, Subcommand)]
pub(super) enum TemplateCommand {
    /// Print the network template of a pod manager (by uuid or name).
    Show { uuid: String },
    /// Set it from a JSON file (`-` for stdin); the renderer checks it.
    Set {
        uuid: String,
        file: std::path::PathBuf,
    },
    /// Remove the network template of a pod manager (by uuid or name).
    Delete { uuid: String },
}

const PODM_COLUMNS: &[Column] = &[
    ("UUID", "/uuid"),
    ("NAME", "/name"),
    ("URL", "/url"),
    ("STATUS", "/status"),
    ("DRIVER", "/driver/name"),
    ("NETWORK CONFIG", "/network_config_owner"),
];
/// A tenant's pod managers (`/v1/me/pod_managers`).
const GRANTED_COLUMNS: &[Column] = &[
    ("UUID", "/uuid"),
    ("NAME", "/name"),
    ("LOCATION", "/location"),
    ("STATUS", "/status"),
    ("SELECTOR", "/grant/selector"),
    ("MAX HOSTS", "/grant/max_hosts"),
    ("NETWORK CONFIG", "/network_config_owner"),
];

impl PodmCommand {
    /// Its pod manager, which may be a name.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            PodmCommand::Show { uuid }
            | PodmCommand::Delete { uuid }
            | PodmCommand::Sync { uuid, .. }
            | PodmCommand::Limits { uuid, .. }
            | PodmCommand::TenantFirmware { uuid, .. }
            | PodmCommand::Deploy { uuid, .. }
            | PodmCommand::Power { uuid, .. }
            | PodmCommand::Template(
                TemplateCommand::Show { uuid }
                | TemplateCommand::Set { uuid, .. }
                | TemplateCommand::Delete { uuid },
            ) => vec![(Named::PodManager, uuid)],
            PodmCommand::List | PodmCommand::Create { .. } => Vec::new(),
        }
    }
}

pub(super) async fn run(url: Option<&str>, format: Format, cmd: PodmCommand) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        // A tenant sees the pod managers it was granted, as `/v1/me/pod_managers` shows them.
        PodmCommand::List if c.is_tenant().await? => {
            let items = c.list("/v1/me/pod_managers").await?;
            print(output::list(format, &items, GRANTED_COLUMNS));
        }
        PodmCommand::List => {
            let items = c.list("/v1/pod_managers").await?;
            print(output::list(format, &items, PODM_COLUMNS));
        }
        PodmCommand::Show { uuid } => {
            let collection = if c.is_tenant().await? {
                "/v1/me/pod_managers"
            } else {
                "/v1/pod_managers"
            };
            print(output::object(
                format,
                &c.get(&format!("{collection}/{}", seg(&uuid)?)).await?,
            ));
        }
        PodmCommand::Create(create) => {
            let body = create.request()?;
            print(output::object(
                format,
                &c.post("/v1/pod_managers", &body).await?,
            ));
        }
        PodmCommand::Limits {
            uuid,
            service,
            site,
            requests,
        } => {
            let body = PodManagerUpdate {
                limits: Some(OperationLimits {
                    service,
                    site,
                    requests,
                }),
                ..Default::default()
            };
            update(&c, format, &uuid, &body).await?;
        }
        PodmCommand::TenantFirmware {
            uuid,
            bios_attributes,
            secure_boot,
            firmware_update,
        } => {
            let body = PodManagerUpdate {
                tenant_firmware: Some(podium_types::TenantFirmware {
                    bios_attributes: bios_attributes.into_iter().collect(),
                    secure_boot,
                    firmware_update,
                }),
                ..Default::default()
            };
            update(&c, format, &uuid, &body).await?;
        }
        PodmCommand::Deploy {
            uuid,
            cleaning,
            allow_md5,
        } => {
            let body = PodManagerUpdate {
                deploy: Some(podium_types::DeploySettings {
                    cleaning: cleaning
                        .map(|c| parsed("--cleaning", &c))
                        .transpose()?
                        .unwrap_or_default(),
                    allow_md5,
                }),
                ..Default::default()
            };
            update(&c, format, &uuid, &body).await?;
        }
        PodmCommand::Power {
            uuid,
            shutdown_timeout,
        } => {
            let defaults = podium_types::PowerSettings::default();
            let body = PodManagerUpdate {
                power: Some(podium_types::PowerSettings {
                    shutdown_timeout: shutdown_timeout.unwrap_or(defaults.shutdown_timeout),
                }),
                ..Default::default()
            };
            update(&c, format, &uuid, &body).await?;
        }
        PodmCommand::Delete { uuid } => {
            c.delete(&format!("/v1/pod_managers/{}", seg(&uuid)?))
                .await?;
            eprintln!("deleted pod manager {uuid}");
        }
        PodmCommand::Sync { uuid, wait } => {
            let op: OperationView = client::view(
                c.post(
                    &format!("/v1/pod_managers/{}/sync", seg(&uuid)?),
                    &json!({}),
                )
                .await?,
            )?;
            let op = if wait {
                watch_operation(&c, &op.id).await?
            } else {
                op
            };
            print(output::object(format, &serde_json::to_value(&op)?));
            if op.status == OperationStatus::Failed {
                bail!("the sync failed: {}", op.error.as_deref().unwrap_or(""));
            }
        }
        PodmCommand::Template(cmd) => template(&c, cmd).await?,
    }
    Ok(())
}

/// `PATCH`es the pod manager and prints what it became.
async fn update(
    c: &Client,
    format: Format,
    uuid: &str,
    body: &PodManagerUpdate,
) -> anyhow::Result<()> {
    let path = format!("/v1/pod_managers/{}", seg(uuid)?);
    print(output::object(
        format,
        &c.send(Method::PATCH, &path, Some(body)).await?,
    ));
    Ok(())
}

/// `podium podm template`: a pod manager's network template.
async fn template(c: &Client, cmd: TemplateCommand) -> anyhow::Result<()> {
    match cmd {
        TemplateCommand::Show { uuid } => {
            let path = format!("/v1/pod_managers/{}/network_template", seg(&uuid)?);
            print(output::pretty(&c.get(&path).await?));
        }
        TemplateCommand::Set { uuid, file } => {
            let path = format!("/v1/pod_managers/{}/network_template", seg(&uuid)?);
            c.send(Method::PUT, &path, Some(&read_json_file(&file)?))
                .await?;
            eprintln!("network template of pod manager {uuid} set");
        }
        TemplateCommand::Delete { uuid } => {
            let path = format!("/v1/pod_managers/{}/network_template", seg(&uuid)?);
            c.delete(&path).await?;
            eprintln!("network template of pod manager {uuid} deleted");
        }
    }
    Ok(())
}
