//! `podium plugin`: the registered plugins, uploads, and `plugin new` (a new plugin crate, in
//! `new.rs`). `podium plugin check FILE` is the `podium` binary's, which has the plugin runtime:
//! it adds the command to this parser only for the help.

use anyhow::Context;
use clap::Subcommand;

use super::client::Client;
use super::input::seg;
use super::output::{self, Column, Format};
use super::{new, print};

#[derive(Debug, Subcommand)]
pub(super) enum PluginCommand {
    /// List the registered plugins.
    List,
    /// Show one plugin, by its sha256.
    Show { sha256: String },
    /// Upload a component (`.wasm`); it is checked, compiled and registered.
    Upload { file: std::path::PathBuf },
    /// Write a new plugin crate, built on the podium-plugin SDK, in the folder NAME: a working
    /// starting point with a README and a test; `cargo build --target wasm32-wasip2 --release`
    /// builds it. Needs no server.
    New {
        /// The plugin's name: the folder, the crate and the name it registers under.
        name: String,
        #[arg(long, value_enum)]
        world: new::World,
        /// Where the SDK is: a path to `sdk/podium-plugin` or a git URL of Podium's
        /// repository (default: the SDK of the source tree this binary was built from, where it
        /// still is, else the repository).
        #[arg(long, value_name = "PATH|URL")]
        sdk: Option<String>,
    },
}

const PLUGIN_COLUMNS: &[Column] = &[
    ("NAME", "/name"),
    ("VERSION", "/version"),
    ("WORLD", "/world"),
    ("SOURCE", "/source"),
    ("SHA256", "/sha256"),
];

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: PluginCommand,
) -> anyhow::Result<()> {
    match cmd {
        PluginCommand::List => {
            let c = Client::from_env(url)?;
            print(output::list(
                format,
                &c.list("/v1/plugins").await?,
                PLUGIN_COLUMNS,
            ));
        }
        PluginCommand::Show { sha256 } => {
            let c = Client::from_env(url)?;
            let plugin = c.get(&format!("/v1/plugins/{}", seg(&sha256)?)).await?;
            print(output::object(format, &plugin));
        }
        PluginCommand::Upload { file } => {
            let c = Client::from_env(url)?;
            let bytes =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let plugin = c
                .post_bytes("/v1/plugins", "application/wasm", bytes)
                .await?;
            print(output::object(format, &plugin));
        }
        // Needs no server, so no client.
        PluginCommand::New { name, world, sdk } => {
            let dir = new::new_plugin(&name, world, sdk.as_deref())?;
            eprintln!(
                "wrote {}: `cargo build --target wasm32-wasip2 --release` there builds the \
                 component (see its README.md)",
                dir.display()
            );
        }
    }
    Ok(())
}
