//! `podium grant`: which tenant may claim hosts of which pod manager.

use clap::Subcommand;
use podium_types::requests::GrantCreate;

use super::client::Client;
use super::input::{key_value, seg};
use super::names::Named;
use super::output::{self, Column, Format};
use super::print;

#[derive(Debug, Subcommand)]
pub(super) enum GrantCommand {
    /// List the grants.
    List,
    /// Let a tenant (id or name) claim hosts of a pod manager (uuid or name).
    Create {
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        pod_manager: String,
        /// `key=value`, repeatable: hosts must carry every label.
        #[arg(long = "selector", value_parser = key_value)]
        selector: Vec<(String, String)>,
        #[arg(long)]
        max_hosts: Option<u32>,
        /// Only the hosts of this chassis (a rack, an enclosure: its id) and of those within it.
        #[arg(long)]
        chassis: Option<String>,
    },
    /// Delete a grant.
    Delete { id: String },
}

const GRANT_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("TENANT", "/tenant"),
    ("POD MANAGER", "/pod_manager"),
    ("SELECTOR", "/selector"),
    ("MAX HOSTS", "/max_hosts"),
    ("CHASSIS", "/chassis"),
];

impl GrantCommand {
    /// The tenant and pod manager it was given, which may be names.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            GrantCommand::Create {
                tenant,
                pod_manager,
                ..
            } => vec![(Named::Tenant, tenant), (Named::PodManager, pod_manager)],
            GrantCommand::List | GrantCommand::Delete { .. } => Vec::new(),
        }
    }
}

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: GrantCommand,
) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        GrantCommand::List => {
            print(output::list(
                format,
                &c.list("/v1/grants").await?,
                GRANT_COLUMNS,
            ));
        }
        GrantCommand::Create {
            tenant,
            pod_manager,
            selector,
            max_hosts,
            chassis,
        } => {
            let body = GrantCreate {
                tenant: tenant.into(),
                pod_manager: pod_manager.into(),
                selector: selector.into_iter().collect(),
                max_hosts,
                chassis: chassis.map(Into::into),
            };
            print(output::object(format, &c.post("/v1/grants", &body).await?));
        }
        GrantCommand::Delete { id } => {
            c.delete(&format!("/v1/grants/{}", seg(&id)?)).await?;
            eprintln!("deleted grant {id}");
        }
    }
    Ok(())
}
