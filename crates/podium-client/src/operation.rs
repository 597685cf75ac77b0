//! `podium operation`: what is queued, running, done and failed on hosts and pod managers.

use anyhow::bail;
use clap::Subcommand;
use podium_types::{OperationId, OperationStatus};

use super::client::Client;
use super::input::seg;
use super::names::Named;
use super::output::{self, Column, Format};
use super::print;
use super::watch::watch_operation;

#[derive(Debug, Subcommand)]
pub(super) enum OperationCommand {
    /// List operations, newest first (`--status queued,running,failed`: what is under way or
    /// failed now).
    List {
        /// Only these states, comma-separated: queued, running, succeeded, failed.
        #[arg(long)]
        status: Option<String>,
        /// Only these kinds, comma-separated (provision, deprovision, power, inspect, ...).
        #[arg(long)]
        kind: Option<String>,
        /// Only this host's (a name or an id).
        #[arg(long)]
        host: Option<String>,
        /// Only this pod manager's (a name or a uuid).
        #[arg(long)]
        pod_manager: Option<String>,
        /// Only this claim's.
        #[arg(long)]
        claim: Option<String>,
    },
    /// Show an operation.
    Show { id: String },
    /// Follow an operation until it ends.
    Watch { id: String },
}

/// Operations, wherever they are listed (a host's, a claim's).
pub(super) const OPERATION_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("KIND", "/kind"),
    ("STATUS", "/status"),
    ("HOST", "/host"),
    ("STARTED", "/started_at"),
    ("FINISHED", "/finished_at"),
    ("ERROR", "/error"),
];

impl OperationCommand {
    /// The host and pod manager it was given, which may be names.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            OperationCommand::List {
                host, pod_manager, ..
            } => host
                .as_mut()
                .map(|h| (Named::Host, h))
                .into_iter()
                .chain(pod_manager.as_mut().map(|pm| (Named::PodManager, pm)))
                .collect(),
            OperationCommand::Show { .. } | OperationCommand::Watch { .. } => Vec::new(),
        }
    }
}

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: OperationCommand,
) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        OperationCommand::List {
            status,
            kind,
            host,
            pod_manager,
            claim,
        } => {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            for (key, value) in [
                ("status", status),
                ("kind", kind),
                ("host", host),
                ("pod_manager", pod_manager),
                ("claim", claim),
            ] {
                if let Some(value) = value {
                    query.append_pair(key, &value);
                }
            }
            let path = format!("/v1/operations?{}", query.finish());
            print(output::list(
                format,
                &c.list(&path).await?,
                OPERATION_COLUMNS,
            ));
        }
        OperationCommand::Show { id } => {
            print(output::object(
                format,
                &c.get(&format!("/v1/operations/{}", seg(&id)?)).await?,
            ));
        }
        OperationCommand::Watch { id } => {
            let op = watch_operation(&c, &OperationId::from(id)).await?;
            print(output::object(format, &serde_json::to_value(&op)?));
            if op.status == OperationStatus::Failed {
                bail!(
                    "the operation failed: {}",
                    op.error.as_deref().unwrap_or("")
                );
            }
        }
    }
    Ok(())
}
