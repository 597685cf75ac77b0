//! `podium login`, `logout` and `whoami`: the API's URL and the token the client uses, saved in
//! the config file (`client.rs`), and who that token is.

use anyhow::Context;
use clap::Subcommand;
use podium_types::Secret;
use podium_types::views::MeView;

use super::client::{self, Client, Login};
use super::input::read_stdin_line;
use super::output::{self, Format};
use super::print;

/// Commands of the top level (`podium login`, not `podium login ...`).
#[derive(Debug, Subcommand)]
pub(super) enum LoginCommand {
    /// Save the API's URL and a token (read from PODIUM_TOKEN or the first line of stdin) in
    /// the config file (mode 0600), after checking that they work.
    Login {
        /// The API's URL, e.g. http://127.0.0.1:8080.
        url: String,
    },
    /// Forget the saved login.
    Logout,
    /// Who the token belongs to.
    Whoami,
}

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: LoginCommand,
) -> anyhow::Result<()> {
    match cmd {
        LoginCommand::Login { url } => {
            let token = match std::env::var("PODIUM_TOKEN") {
                Ok(t) if !t.is_empty() => t,
                _ => read_stdin_line("token")?,
            };
            let token = Secret::new(token);
            let client = Client::new(&url, Some(token.clone()))?;
            let me: MeView = client
                .get_view("/v1/me")
                .await
                .context("checking the token")?;
            let path = Login { url, token }.save()?;
            match (&me.tenant, &me.tenant_name) {
                (Some(tenant), Some(name)) => eprintln!(
                    "logged in as tenant {name} ({tenant}); saved in {}",
                    path.display()
                ),
                (Some(tenant), None) => {
                    eprintln!("logged in as tenant {tenant}; saved in {}", path.display())
                }
                (None, _) => eprintln!("logged in as {}; saved in {}", me.role, path.display()),
            }
        }
        LoginCommand::Logout => {
            let path = client::config_path()?;
            match std::fs::remove_file(&path) {
                Ok(()) => eprintln!("removed {}", path.display()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => eprintln!("not logged in"),
                Err(e) => return Err(e).context(format!("removing {}", path.display())),
            }
        }
        LoginCommand::Whoami => {
            let c = Client::from_env(url)?;
            print(output::object(format, &c.get("/v1/me").await?));
        }
    }
    Ok(())
}
