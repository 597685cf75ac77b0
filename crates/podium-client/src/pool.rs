//! `podium pool`: IP pools and the addresses claimed from them.

use std::collections::BTreeMap;

use anyhow::Context;
use clap::Subcommand;
use podium_types::requests::{IpClaimCreate, IpPoolCreate, IpRangeParams, PluginBindingParams};
use serde_json::json;

use super::client::Client;
use super::input::seg;
use super::names::Named;
use super::output::{self, Column, Format};
use super::print;

#[derive(Debug, Subcommand)]
pub(super) enum PoolCommand {
    /// List the IP pools with their usage.
    List,
    /// Show an IP pool (by id or name).
    Show { id: String },
    /// Create an IP pool.
    Create {
        #[arg(long)]
        name: String,
        /// `START-END` or a subnet `A.B.C.D/N`, repeatable.
        #[arg(long = "range", required = true)]
        ranges: Vec<String>,
        #[arg(long)]
        prefix: u8,
        #[arg(long)]
        gateway: Option<String>,
        /// Repeatable.
        #[arg(long = "dns")]
        dns_servers: Vec<String>,
        #[arg(long)]
        pod_manager: Option<String>,
        /// The IPAM plugin; default the pod manager's, else ipam-static.
        #[arg(long)]
        plugin: Option<String>,
        /// The plugin's configuration as JSON, e.g. '{"strategy":"random"}'.
        #[arg(long, requires = "plugin")]
        plugin_config: Option<String>,
    },
    /// Delete an IP pool (by id or name).
    Delete { id: String },
    /// Claim an address for an owner (`host:<id>`, `claim:<id>` or a name).
    Claim {
        pool: String,
        #[arg(long)]
        owner: String,
        #[arg(long)]
        address: Option<String>,
    },
    /// The addresses claimed from a pool.
    Claims { pool: String },
    /// Release an address claimed from a pool.
    Release { pool: String, claim: String },
}

const POOL_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("SUBNET", "/subnet"),
    ("PLUGIN", "/plugin/name"),
    ("TOTAL", "/usage/total"),
    ("ALLOCATED", "/usage/allocated"),
    ("FREE", "/usage/free"),
];
const IP_CLAIM_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("OWNER", "/owner"),
    ("ADDRESS", "/address"),
    ("PREFIX", "/prefix"),
    ("GATEWAY", "/gateway"),
];

impl PoolCommand {
    /// Its pool, or the pod manager of a new one, which may be names.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            PoolCommand::Show { id } | PoolCommand::Delete { id } => vec![(Named::Pool, id)],
            PoolCommand::Claim { pool, .. }
            | PoolCommand::Claims { pool }
            | PoolCommand::Release { pool, .. } => vec![(Named::Pool, pool)],
            PoolCommand::Create { pod_manager, .. } => pod_manager
                .as_mut()
                .map(|pm| (Named::PodManager, pm))
                .into_iter()
                .collect(),
            PoolCommand::List => Vec::new(),
        }
    }
}

pub(super) async fn run(url: Option<&str>, format: Format, cmd: PoolCommand) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        PoolCommand::List => {
            print(output::list(
                format,
                &c.list("/v1/ip_pools").await?,
                POOL_COLUMNS,
            ));
        }
        PoolCommand::Show { id } => {
            print(output::object(
                format,
                &c.get(&format!("/v1/ip_pools/{}", seg(&id)?)).await?,
            ));
        }
        PoolCommand::Create {
            name,
            ranges,
            prefix,
            gateway,
            dns_servers,
            pod_manager,
            plugin,
            plugin_config,
        } => {
            let ranges = parse_ranges(&ranges);
            let plugin = plugin_binding(plugin, plugin_config)?;
            let body = IpPoolCreate {
                name,
                ranges,
                prefix,
                gateway,
                dns_servers,
                reserved: Vec::new(),
                pre_allocations: BTreeMap::new(),
                plugin,
                pod_manager: pod_manager.map(Into::into),
                tenants: Vec::new(),
            };
            print(output::object(
                format,
                &c.post("/v1/ip_pools", &body).await?,
            ));
        }
        PoolCommand::Delete { id } => {
            c.delete(&format!("/v1/ip_pools/{}", seg(&id)?)).await?;
            eprintln!("deleted pool {id}");
        }
        PoolCommand::Claim {
            pool,
            owner,
            address,
        } => {
            let body = IpClaimCreate { owner, address };
            let claim = c
                .post(&format!("/v1/ip_pools/{}/claims", seg(&pool)?), &body)
                .await?;
            print(output::object(format, &claim));
        }
        PoolCommand::Claims { pool } => {
            let items = c
                .list(&format!("/v1/ip_pools/{}/claims", seg(&pool)?))
                .await?;
            print(output::list(format, &items, IP_CLAIM_COLUMNS));
        }
        PoolCommand::Release { pool, claim } => {
            c.delete(&format!(
                "/v1/ip_pools/{}/claims/{}",
                seg(&pool)?,
                seg(&claim)?
            ))
            .await?;
            eprintln!("released {claim}");
        }
    }
    Ok(())
}

/// `--range`s: `START-END` or a subnet `A.B.C.D/N`.
fn parse_ranges(ranges: &[String]) -> Vec<IpRangeParams> {
    ranges
        .iter()
        .map(|r| match r.split_once('-') {
            Some((start, end)) => IpRangeParams {
                start: Some(start.into()),
                end: Some(end.into()),
                subnet: None,
            },
            None => IpRangeParams {
                subnet: Some(r.clone()),
                ..IpRangeParams::default()
            },
        })
        .collect()
}

/// `--plugin` with its `--plugin-config` (`{}` without one).
fn plugin_binding(
    plugin: Option<String>,
    config: Option<String>,
) -> anyhow::Result<Option<PluginBindingParams>> {
    Ok(match plugin {
        Some(name) => Some(PluginBindingParams {
            name,
            config: Some(match config {
                Some(text) => serde_json::from_str(&text).context("--plugin-config is not JSON")?,
                None => json!({}),
            }),
            ..PluginBindingParams::default()
        }),
        None => None,
    })
}
