//! `podium tenant`: tenants and their tokens.

use clap::Subcommand;
use podium_types::TenantId;
use podium_types::requests::{TenantCreate, TokenCreate};

use super::client::Client;
use super::input::seg;
use super::names::Named;
use super::output::{self, Column, Format};
use super::print;
use super::watch::watch_tenant_deletion;

#[derive(Debug, Subcommand)]
pub(super) enum TenantCommand {
    /// List the tenants.
    List,
    /// Show a tenant (by id or name).
    Show { id: String },
    /// Create a tenant.
    Create {
        name: String,
        #[arg(long)]
        description: Option<String>,
    },
    /// Delete a tenant; with --release, its claims are released (their hosts deprovisioned)
    /// first.
    Delete {
        id: String,
        #[arg(long)]
        release: bool,
        /// With --release: follow the releases until the tenant is deleted.
        #[arg(long, requires = "release")]
        wait: bool,
    },
    /// Create a token for a tenant; the secret is printed once.
    TokenCreate {
        tenant: String,
        #[arg(long)]
        read_only: bool,
        /// Seconds until it expires.
        #[arg(long)]
        expires_in: Option<u64>,
        #[arg(long)]
        description: Option<String>,
    },
    /// List the tokens of a tenant (never their secrets).
    Tokens { tenant: String },
    /// Revoke a token of a tenant; it stops working at once.
    TokenRevoke { tenant: String, token: String },
}

const TENANT_COLUMNS: &[Column] = &[("ID", "/id"), ("NAME", "/name"), ("CREATED", "/created_at")];
const TOKEN_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("READ ONLY", "/read_only"),
    ("EXPIRES", "/expires_at"),
    ("DESCRIPTION", "/description"),
];

impl TenantCommand {
    /// Its tenant, which may be a name.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            TenantCommand::Show { id } | TenantCommand::Delete { id, .. } => {
                vec![(Named::Tenant, id)]
            }
            TenantCommand::TokenCreate { tenant, .. }
            | TenantCommand::Tokens { tenant }
            | TenantCommand::TokenRevoke { tenant, .. } => vec![(Named::Tenant, tenant)],
            TenantCommand::List | TenantCommand::Create { .. } => Vec::new(),
        }
    }
}

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: TenantCommand,
) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        TenantCommand::List => {
            print(output::list(
                format,
                &c.list("/v1/tenants").await?,
                TENANT_COLUMNS,
            ));
        }
        TenantCommand::Show { id } => {
            print(output::object(
                format,
                &c.get(&format!("/v1/tenants/{}", seg(&id)?)).await?,
            ));
        }
        TenantCommand::Create { name, description } => {
            let body = TenantCreate { name, description };
            print(output::object(format, &c.post("/v1/tenants", &body).await?));
        }
        TenantCommand::Delete { id, release, wait } => {
            delete(&c, format, &id, release, wait).await?
        }
        TenantCommand::TokenCreate {
            tenant,
            read_only,
            expires_in,
            description,
        } => {
            let body = TokenCreate {
                read_only,
                expires_at: None,
                expires_in,
                description,
            };
            let token = c
                .post(&format!("/v1/tenants/{}/tokens", seg(&tenant)?), &body)
                .await?;
            print(output::object(format, &token));
            if format == Format::Table {
                eprintln!("the token is shown once: keep it now");
            }
        }
        TenantCommand::Tokens { tenant } => {
            let items = c
                .list(&format!("/v1/tenants/{}/tokens", seg(&tenant)?))
                .await?;
            print(output::list(format, &items, TOKEN_COLUMNS));
        }
        TenantCommand::TokenRevoke { tenant, token } => {
            c.delete(&format!(
                "/v1/tenants/{}/tokens/{}",
                seg(&tenant)?,
                seg(&token)?
            ))
            .await?;
            eprintln!("revoked token {token}");
        }
    }
    Ok(())
}

/// `podium tenant delete`: with `release`, its claims are released first; with `wait`, followed
/// until the tenant is gone.
async fn delete(
    c: &Client,
    format: Format,
    id: &str,
    release: bool,
    wait: bool,
) -> anyhow::Result<()> {
    let path = if release {
        format!("/v1/tenants/{}?release=true", seg(id)?)
    } else {
        format!("/v1/tenants/{}", seg(id)?)
    };
    // The stream first: a release that ends after the request is an event.
    let events = if wait {
        Some(c.events("/v1/events?kind=claim,operation").await?)
    } else {
        None
    };
    let answer = c.delete(&path).await?;
    if answer.is_null() {
        eprintln!("deleted tenant {id}");
    } else if let Some(events) = events {
        watch_tenant_deletion(c, events, &TenantId::from(id)).await?;
        eprintln!("released the claims of tenant {id} and deleted it");
    } else {
        eprintln!("releasing the claims of tenant {id}; it is deleted once they are released");
        print(output::object(format, &answer));
    }
    Ok(())
}
