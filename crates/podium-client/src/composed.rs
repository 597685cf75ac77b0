//! `podium composed`: a pod manager's resource blocks and the nodes composed of them (admin).

use clap::{Args, Subcommand};
use podium_types::requests::{ComposedNodeCreate, CompositionRequirement};

use super::client::Client;
use super::input::seg;
use super::names::Named;
use super::output::{self, Column, Format};
use super::print;

#[derive(Debug, Subcommand)]
pub(super) enum ComposedCommand {
    /// The resource blocks of a pod manager (uuid or name), as its service has them now: what
    /// each holds, its state and the systems it is composed into.
    Blocks { pod_manager: String },
    /// The nodes composed at a pod manager.
    List { pod_manager: String },
    /// Compose a node of the blocks named (--block, again for each), or of blocks Podium picks
    /// for what the node must hold (--cores, --memory-mib, --drives, ...).
    Create {
        pod_manager: String,
        /// The composed system's name.
        name: String,
        /// A resource block, by id (`podium composed blocks` lists them).
        #[arg(long = "block", value_name = "ID", conflicts_with_all = ["processors", "cores", "memory_mib", "drives", "drive_bytes", "nics"])]
        blocks: Vec<String>,
        #[command(flatten)]
        requirement: Requirement,
    },
    /// Show a composed node.
    Show { id: String },
    /// Decompose a node: its blocks are free again, its host is gone.
    Delete { id: String },
}

/// What a node must hold at least.
#[derive(Debug, Args)]
pub(super) struct Requirement {
    #[arg(long)]
    processors: Option<u32>,
    #[arg(long)]
    cores: Option<u32>,
    #[arg(long)]
    memory_mib: Option<u64>,
    #[arg(long)]
    drives: Option<u32>,
    #[arg(long)]
    drive_bytes: Option<u64>,
    #[arg(long)]
    nics: Option<u32>,
}

impl Requirement {
    fn request(&self) -> CompositionRequirement {
        CompositionRequirement {
            processors: self.processors,
            cores: self.cores,
            memory_mib: self.memory_mib,
            drives: self.drives,
            drive_bytes: self.drive_bytes,
            nics: self.nics,
        }
    }
}

impl ComposedCommand {
    /// The pod manager it was given, which may be a name.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            ComposedCommand::Blocks { pod_manager }
            | ComposedCommand::List { pod_manager }
            | ComposedCommand::Create { pod_manager, .. } => vec![(Named::PodManager, pod_manager)],
            ComposedCommand::Show { .. } | ComposedCommand::Delete { .. } => Vec::new(),
        }
    }
}

const NODES: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("STATE", "/state"),
    ("ZONE", "/zone"),
    ("BLOCKS", "/blocks"),
];

const BLOCKS: &[Column] = &[
    ("ID", "/id"),
    ("TYPES", "/block_types"),
    ("STATE", "/state"),
    ("ZONES", "/zones"),
    ("CORES", "/cores"),
    ("MEMORY MIB", "/memory_mib"),
    ("DRIVES", "/drives"),
    ("NICS", "/nics"),
    ("SYSTEMS", "/systems"),
];

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: ComposedCommand,
) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        ComposedCommand::Blocks { pod_manager } => {
            let service = c
                .get(&format!(
                    "/v1/pod_managers/{}/composition",
                    seg(&pod_manager)?
                ))
                .await?;
            match format {
                Format::Json => print(output::pretty(&service)),
                Format::Table => {
                    let blocks = service["blocks"].as_array().cloned().unwrap_or_default();
                    print(output::list(format, &blocks, BLOCKS));
                }
            }
        }
        ComposedCommand::List { pod_manager } => {
            let items = c
                .list(&format!(
                    "/v1/pod_managers/{}/composed_nodes",
                    seg(&pod_manager)?
                ))
                .await?;
            print(output::list(format, &items, NODES));
        }
        ComposedCommand::Create {
            pod_manager,
            name,
            blocks,
            requirement,
        } => {
            let body = if blocks.is_empty() {
                ComposedNodeCreate {
                    name,
                    blocks: None,
                    requirement: Some(requirement.request()),
                }
            } else {
                ComposedNodeCreate {
                    name,
                    blocks: Some(blocks),
                    requirement: None,
                }
            };
            let node = c
                .post(
                    &format!("/v1/pod_managers/{}/composed_nodes", seg(&pod_manager)?),
                    &body,
                )
                .await?;
            print(output::object(format, &node));
        }
        ComposedCommand::Show { id } => {
            let node = c.get(&format!("/v1/composed_nodes/{}", seg(&id)?)).await?;
            print(output::object(format, &node));
        }
        ComposedCommand::Delete { id } => {
            c.delete(&format!("/v1/composed_nodes/{}", seg(&id)?))
                .await?;
            eprintln!("decomposed {id}: its blocks are free");
        }
    }
    Ok(())
}
