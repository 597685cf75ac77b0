//! Who is asking: bearer tokens, their hashes, and the admin bootstrap.
//!
//! A token is `pdm_` followed by 43 characters of base64url randomness (256 bits). Only its
//! sha256 is stored; a slow hash buys nothing for secrets of that entropy, and the lookup stays a
//! single indexed read.

use podium_types::{TenantId, TenantScope, TokenId};
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::data::{Datastore, TokenRow};
use crate::error::Error;
use podium_types::Role;
use podium_types::Secret;
use podium_types::views::MeView;

/// The caller of an application function, established from its token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    Admin {
        token_id: TokenId,
        read_only: bool,
    },
    Tenant {
        tenant_id: TenantId,
        token_id: TokenId,
        read_only: bool,
    },
}

impl Caller {
    /// The token the caller came with.
    pub fn token_id(&self) -> &TokenId {
        match self {
            Caller::Admin { token_id, .. } | Caller::Tenant { token_id, .. } => token_id,
        }
    }

    /// Who the caller is, as `GET /v1/me` answers, with its tenant's name (`tenant_name`) where
    /// it has one.
    pub(crate) fn me(&self, tenant_name: Option<String>) -> MeView {
        match self {
            Caller::Admin {
                token_id,
                read_only,
            } => MeView {
                role: Role::Admin,
                tenant: None,
                tenant_name: None,
                read_only: *read_only,
                token_id: token_id.clone(),
            },
            Caller::Tenant {
                tenant_id,
                token_id,
                read_only,
            } => MeView {
                role: Role::Tenant,
                tenant: Some(tenant_id.clone()),
                tenant_name,
                read_only: *read_only,
                token_id: token_id.clone(),
            },
        }
    }

    /// Whose records the caller sees: a tenant its own, an admin every tenant's.
    pub fn scope(&self) -> TenantScope<'_> {
        match self {
            Caller::Tenant { tenant_id, .. } => TenantScope::Tenant(tenant_id),
            Caller::Admin { .. } => TenantScope::Every,
        }
    }

    /// Admin rights to change things.
    pub fn require_admin(&self) -> Result<(), Error> {
        match self {
            Caller::Admin {
                read_only: false, ..
            } => Ok(()),
            Caller::Admin {
                read_only: true, ..
            } => Err(Error::Forbidden("this admin token is read-only".into())),
            Caller::Tenant { .. } => Err(Error::Forbidden(
                "this endpoint is for admins; tenant tokens cannot use it".into(),
            )),
        }
    }

    /// Rights to change what the caller may see (a token that is not read-only, an admin's or
    /// a tenant's).
    pub fn require_writable(&self) -> Result<(), Error> {
        match self {
            Caller::Admin {
                read_only: true, ..
            }
            | Caller::Tenant {
                read_only: true, ..
            } => Err(Error::Forbidden(
                "this token is read-only: it may read, and change nothing".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Admin rights to read.
    pub fn require_admin_read(&self) -> Result<(), Error> {
        match self {
            Caller::Admin { .. } => Ok(()),
            Caller::Tenant { .. } => Err(Error::Forbidden(
                "this endpoint is for admins; tenant tokens cannot use it".into(),
            )),
        }
    }
}

const PREFIX: &str = "pdm_";

/// A new random token.
pub fn generate_token() -> Secret {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    Secret::new(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// The stored form of a token.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Establishes the caller from an `Authorization` header value.
pub(crate) async fn authenticate(
    datastore: &Datastore,
    header: Option<&str>,
) -> Result<Caller, Error> {
    let header = header.ok_or(Error::Unauthenticated(
        "missing credentials: send `Authorization: Bearer <token>`",
    ))?;
    let token = header
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.len() <= 256 && t.is_ascii())
        .ok_or(Error::Unauthenticated(
            "malformed credentials: send `Authorization: Bearer <token>`",
        ))?;
    caller_of_token(datastore, token).await
}

/// Establishes the caller from a token's secret.
pub(crate) async fn caller_of_token(datastore: &Datastore, token: &str) -> Result<Caller, Error> {
    let row = datastore
        .token_by_hash(&hash_token(token))
        .await?
        .ok_or(Error::Unauthenticated("invalid token"))?;
    caller_of_row(row)
}

/// The caller a stored token stands for, unless it is revoked or expired.
pub(crate) fn caller_of_row(row: TokenRow) -> Result<Caller, Error> {
    if row.revoked_at.is_some() {
        return Err(Error::Unauthenticated("this token was revoked"));
    }
    if let Some(expires_at) = &row.expires_at
        && *expires_at <= podium_types::Timestamp::now()
    {
        return Err(Error::Unauthenticated("this token has expired"));
    }
    Ok(match row.role {
        Role::Admin => Caller::Admin {
            token_id: row.id,
            read_only: row.read_only,
        },
        Role::Tenant => Caller::Tenant {
            tenant_id: row.tenant_id.unwrap_or_default(),
            token_id: row.id,
            read_only: row.read_only,
        },
    })
}

/// On a fresh database, creates the first admin token: `PODIUM_ADMIN_TOKEN` if given, else a
/// generated one written to `data_dir/admin.token` (mode 0600). Returns where it came from.
pub async fn bootstrap_admin(
    datastore: &Datastore,
    given: Option<Secret>,
    data_dir: &Path,
) -> anyhow::Result<Option<&'static str>> {
    if datastore.admin_token_exists().await? {
        return Ok(None);
    }
    let (token, origin) = match given {
        Some(token) => {
            anyhow::ensure!(
                token.expose().len() >= 16
                    && token.expose().len() <= 256
                    && token.expose().is_ascii(),
                "PODIUM_ADMIN_TOKEN must be 16 to 256 ASCII characters"
            );
            (token, "PODIUM_ADMIN_TOKEN")
        }
        None => {
            let token = generate_token();
            crate::sealing::write_private(&data_dir.join("admin.token"), token.expose())?;
            (token, "admin.token")
        }
    };
    let row = TokenRow {
        id: TokenId::from(uuid::Uuid::new_v4().to_string()),
        role: Role::Admin,
        tenant_id: None,
        read_only: false,
        description: format!("bootstrap admin token (from {origin})"),
        expires_at: None,
        created_at: podium_types::Timestamp::now(),
        revoked_at: None,
    };
    datastore
        .token_create(&row, &hash_token(token.expose()))
        .await?;
    Ok(Some(origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_prefixed() {
        let a = generate_token();
        let b = generate_token();
        assert!(a.expose().starts_with("pdm_"));
        assert_eq!(a.expose().len(), 4 + 43);
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "[redacted]");
    }
}
