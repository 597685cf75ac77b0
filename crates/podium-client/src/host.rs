//! `podium host`: hosts, their power, inspection, maintenance and what they boot with.

use anyhow::bail;
use clap::Subcommand;
use podium_types::requests::{ConfigDriveCreate, MaintenanceParams, PowerParams};
use podium_types::views::{List, OperationView};
use podium_types::{OperationKind, OperationStatus};
use reqwest::Method;
use serde_json::json;

use super::client::{self, Client};
use super::firmware::{BiosArgs, FirmwareArgs, SecureBootArgs, bios, firmware, secure_boot};
use super::input::{parsed, seg};
use super::names::Named;
use super::operation::OPERATION_COLUMNS;
use super::output::{self, Column, Format};
use super::print;
use super::watch::watch_operation;

/// `--phase` of the rendering commands.
const PHASES: [&str; 2] = ["preprovisioning", "provisioning"];

#[derive(Debug, Subcommand)]
pub(super) enum HostCommand {
    /// List hosts, optionally of one pod manager (uuid or name) or in one state.
    List {
        #[arg(long)]
        pod_manager: Option<String>,
        #[arg(long)]
        state: Option<String>,
    },
    /// Show a host (by id or name): inventory, NICs, media slots, state.
    Show { id: String },
    /// on, off, graceful_shutdown, force_off, graceful_restart, force_restart, reboot.
    Power {
        id: String,
        action: String,
        /// Follow the power operation until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// The host's BIOS settings (name, value, type, whether read-only, what is staged); with
    /// `--set` changes them, with `--reset` resets them to their defaults (an operation each).
    Bios {
        id: String,
        #[command(flatten)]
        args: BiosArgs,
    },
    /// The host's secure boot; with `--on` or `--off` turns it on or off from the next boot on
    /// (an operation).
    SecureBoot {
        id: String,
        #[command(flatten)]
        args: SecureBootArgs,
    },
    /// The host's full inventory as its BMC reports it now: processors, memory modules,
    /// storage and drives, NICs and their link.
    Hardware { id: String },
    /// The host's firmware components (their id, kind, name, version, whether the BMC can
    /// update them); with `--update IMAGE_URL --target ID ...` updates them from the image, an
    /// operation that follows the BMC's task.
    Firmware {
        id: String,
        #[command(flatten)]
        args: FirmwareArgs,
    },
    /// The host's operations, newest first.
    Operations { id: String },
    /// Inspect the host again through its driver (its inventory; with DHCP-less pools, its
    /// preprovisioning address and config drive first).
    Inspect {
        id: String,
        /// Follow the inspection until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// Put the host in maintenance, or end it with --off.
    Maintenance {
        id: String,
        #[arg(long, conflicts_with = "off")]
        reason: Option<String>,
        #[arg(long)]
        off: bool,
    },
    /// Set the disk a raw or qcow2 image is written to when the claim names none, or remove
    /// it with --clear.
    RootDevice {
        id: String,
        /// A root device hint, `key=value`, repeatable: `size` (GiB), `serial`, `wwn`, `name`,
        /// `model`, `vendor`, `rotational` (true or false).
        #[arg(long = "hint", value_parser = super::input::key_value, required_unless_present = "clear")]
        hints: Vec<(String, String)>,
        #[arg(long, conflicts_with = "hints")]
        clear: bool,
    },
    /// The meta_data.json and network_data.json the host boots with in a phase.
    Rendered {
        id: String,
        #[arg(long, value_parser = PHASES, default_value = "provisioning")]
        phase: String,
    },
    /// Make a config drive for the host and print its URL (shown once).
    ConfigDrive {
        id: String,
        #[arg(long, value_parser = PHASES, default_value = "provisioning")]
        phase: String,
        /// Seconds the URL works (60 to 86400; default 3600).
        #[arg(long)]
        expires_in: Option<u64>,
    },
}

const HOST_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("STATE", "/state"),
    ("POWER", "/power_state"),
    ("CPUS", "/cpu_count"),
    ("MEMORY MIB", "/memory_mib"),
    ("KIND", "/kind"),
];

impl HostCommand {
    /// Its host, or the pod manager it lists the hosts of, which may be names.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            HostCommand::List { pod_manager, .. } => pod_manager
                .as_mut()
                .map(|pm| (Named::PodManager, pm))
                .into_iter()
                .collect(),
            HostCommand::Show { id }
            | HostCommand::Power { id, .. }
            | HostCommand::Bios { id, .. }
            | HostCommand::SecureBoot { id, .. }
            | HostCommand::Hardware { id }
            | HostCommand::Firmware { id, .. }
            | HostCommand::Operations { id }
            | HostCommand::Inspect { id, .. }
            | HostCommand::Maintenance { id, .. }
            | HostCommand::RootDevice { id, .. }
            | HostCommand::Rendered { id, .. }
            | HostCommand::ConfigDrive { id, .. } => vec![(Named::Host, id)],
        }
    }
}

pub(super) async fn run(url: Option<&str>, format: Format, cmd: HostCommand) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        HostCommand::List { pod_manager, state } => {
            let mut query = Vec::new();
            if let Some(pm) = pod_manager {
                query.push(format!("pod_manager={}", seg(&pm)?));
            }
            if let Some(s) = state {
                query.push(format!("state={}", seg(&s)?));
            }
            let path = if query.is_empty() {
                "/v1/hosts".to_owned()
            } else {
                format!("/v1/hosts?{}", query.join("&"))
            };
            print(output::list(format, &c.list(&path).await?, HOST_COLUMNS));
        }
        HostCommand::Show { id } => {
            print(output::object(
                format,
                &c.get(&format!("/v1/hosts/{}", seg(&id)?)).await?,
            ));
        }
        HostCommand::Power { id, action, wait } => {
            let op = power(&c, &id, &action, wait).await?;
            print(output::object(format, &serde_json::to_value(&op)?));
            if op.status == OperationStatus::Failed {
                bail!(
                    "the power operation failed: {}",
                    op.error.as_deref().unwrap_or("")
                );
            }
        }
        HostCommand::Bios { id, args } => {
            bios(&c, format, &format!("/v1/hosts/{}", seg(&id)?), args).await?;
        }
        HostCommand::SecureBoot { id, args } => {
            secure_boot(&c, format, &format!("/v1/hosts/{}", seg(&id)?), args).await?;
        }
        HostCommand::Hardware { id } => {
            let path = format!("/v1/hosts/{}/hardware", seg(&id)?);
            print(output::object(format, &c.get(&path).await?));
        }
        HostCommand::Firmware { id, args } => {
            firmware(&c, format, &format!("/v1/hosts/{}", seg(&id)?), args).await?;
        }
        HostCommand::Inspect { id, wait } => {
            let op = inspect(&c, &id, wait).await?;
            print(output::object(format, &serde_json::to_value(&op)?));
        }
        HostCommand::Maintenance { id, reason, off } => {
            let path = format!("/v1/hosts/{}/maintenance", seg(&id)?);
            let host = if off {
                c.delete(&path).await?
            } else {
                c.send(Method::PUT, &path, Some(&MaintenanceParams { reason }))
                    .await?
            };
            print(output::object(format, &host));
        }
        HostCommand::RootDevice { id, hints, clear } => {
            let hints = if clear {
                None
            } else {
                super::claim::root_device_hints("--hint", hints)?
            };
            let body = podium_types::requests::HostUpdate {
                root_device: Some(hints),
                ..Default::default()
            };
            let host = c
                .send(
                    Method::PATCH,
                    &format!("/v1/hosts/{}", seg(&id)?),
                    Some(&body),
                )
                .await?;
            print(output::object(format, &host));
        }
        HostCommand::Operations { id } => {
            let items = c
                .list(&format!("/v1/operations?host={}", seg(&id)?))
                .await?;
            print(output::list(format, &items, OPERATION_COLUMNS));
        }
        HostCommand::Rendered { id, phase } => {
            let r = c
                .get(&format!("/v1/hosts/{}/rendered?phase={phase}", seg(&id)?))
                .await?;
            print(output::pretty(&r));
        }
        HostCommand::ConfigDrive {
            id,
            phase,
            expires_in,
        } => {
            let drive = c
                .post(
                    &format!("/v1/hosts/{}/config_drive", seg(&id)?),
                    &ConfigDriveCreate {
                        phase: Some(parsed("--phase", &phase)?),
                        expires_in,
                    },
                )
                .await?;
            print(output::object(format, &drive));
        }
    }
    Ok(())
}

/// Asks for an inspection of the host `id`; with `wait`, follows it until it ends.
async fn inspect(c: &Client, id: &str, wait: bool) -> anyhow::Result<OperationView> {
    let mut op: OperationView = client::view(
        c.post(&format!("/v1/hosts/{}/inspect", seg(id)?), &json!({}))
            .await?,
    )?;
    if wait {
        // A registration first where the last one failed: follow what it queues.
        op = watch_operation(c, &op.id).await?;
        if op.kind == OperationKind::Register && op.status == OperationStatus::Succeeded {
            let newest: List<OperationView> = c
                .get_view(&format!("/v1/operations?host={}&limit=1", seg(id)?))
                .await?;
            if let Some(next) = newest.items.first() {
                op = watch_operation(c, &next.id).await?;
            }
        }
    }
    Ok(op)
}

/// Asks the host `id` to power `action`; with `wait`, follows the operation until it ends.
async fn power(c: &Client, id: &str, action: &str, wait: bool) -> anyhow::Result<OperationView> {
    let mut op: OperationView = client::view(
        c.post(
            &format!("/v1/hosts/{}/power", seg(id)?),
            &PowerParams {
                action: parsed("ACTION", action)?,
            },
        )
        .await?,
    )?;
    if wait {
        op = watch_operation(c, &op.id).await?;
    }
    Ok(op)
}
