//! Tenants and credentials, the application side: admins create tenants and hand them bearer
//! tokens (shown once, stored hashed, optionally read-only and expiring, revoked at once; within
//! a second in other processes), and admin tokens the same way.

use crate::app::Podium;
use crate::app::page;
use crate::auth::{Caller, generate_token, hash_token};
use crate::data::{TenantRow, TokenRow};
use crate::error::Error;
use crate::views;
use podium_types::ErrorCode;
use podium_types::Role;
use podium_types::requests::{TenantCreate, TokenCreate};
use podium_types::views::{List, MeView, TenantView, TokenCreatedView, TokenView};
use podium_types::{TenantId, TenantScope, Timestamp, TokenId};

fn validate_tenant_name(name: &str) -> Result<(), Error> {
    if name.is_empty()
        || name.len() > 63
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        return Err(Error::invalid(
            "name",
            "must be 1 to 63 characters of A-Z, a-z, 0-9, `.`, `_` and `-`",
        ));
    }
    Ok(())
}

/// When a new token expires, from `expires_at` or `expires_in`.
fn expiry(params: &TokenCreate) -> Result<Option<Timestamp>, Error> {
    let now = Timestamp::now();
    match (&params.expires_at, params.expires_in) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "expires_in",
            "give `expires_at` or `expires_in`, not both",
        )),
        (Some(at), None) => {
            if *at <= now {
                return Err(Error::invalid("expires_at", "is in the past"));
            }
            Ok(Some(*at))
        }
        (None, Some(seconds)) => {
            if seconds == 0 || seconds > 10 * 365 * 86_400 {
                return Err(Error::invalid("expires_in", "must be 1 second to 10 years"));
            }
            Ok(Some(now.after(std::time::Duration::from_secs(seconds))))
        }
        (None, None) => Ok(None),
    }
}

impl Podium {
    /// `GET /v1/me`: who the caller is, its tenant named.
    pub async fn me(&self, caller: &Caller) -> Result<MeView, Error> {
        let name = match caller {
            Caller::Tenant { tenant_id, .. } => self
                .datastore()
                .tenant_get(tenant_id)
                .await?
                .map(|tenant| tenant.name),
            Caller::Admin { .. } => None,
        };
        Ok(caller.me(name))
    }

    pub async fn tenant_create(
        &self,
        caller: &Caller,
        params: TenantCreate,
    ) -> Result<TenantView, Error> {
        caller.require_admin()?;
        validate_tenant_name(&params.name)?;
        let description = params.description.unwrap_or_default();
        if description.len() > 1024 {
            return Err(Error::invalid("description", "must be at most 1024 bytes"));
        }
        let tenant = TenantRow {
            id: TenantId::generate(),
            name: params.name,
            description,
            created_at: podium_types::Timestamp::now(),
        };
        match self.datastore().tenant_create(&tenant).await {
            Ok(()) => Ok(views::tenant(tenant)),
            Err(e) if crate::data::is_conflict(&e) => Err(Error::ConflictField {
                code: ErrorCode::NameTaken,
                field: "name".into(),
                message: format!("a tenant named `{}` already exists", tenant.name),
            }),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn tenant_view(&self, caller: &Caller, id: &TenantId) -> Result<TenantView, Error> {
        caller.require_admin_read()?;
        self.datastore()
            .tenant_get(id)
            .await?
            .map(views::tenant)
            .ok_or_else(|| Error::not_found("tenant", id))
    }

    pub async fn tenant_list(
        &self,
        caller: &Caller,
        name: Option<&str>,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> Result<List<TenantView>, Error> {
        caller.require_admin_read()?;
        let paged = self
            .datastore()
            .tenant_list(name, &page(limit, cursor)?)
            .await?;
        Ok(List::of(paged, views::tenant))
    }

    /// Deletes a tenant with its grants and tokens. While it holds claims this is refused,
    /// unless `release`: then its tokens are revoked and its grants dropped at once, every claim
    /// is released (its host deprovisioned, as a tenant's own release would), and the tenant
    /// goes with the last of them. Answers how many claims are still being released.
    pub async fn tenant_delete(
        &self,
        caller: &Caller,
        id: &TenantId,
        release: bool,
    ) -> Result<usize, Error> {
        caller.require_admin()?;
        if release {
            if !self
                .datastore()
                .tenant_begin_deletion(id, podium_types::Timestamp::now())
                .await?
            {
                return Err(Error::not_found("tenant", id));
            }
            // Every claim, also one whose earlier release failed (it is tried again).
            for claim in self.datastore().claim_list(TenantScope::Tenant(id)).await? {
                self.claim_release(&claim).await?;
            }
            return match self.datastore().tenant_delete(id).await? {
                Ok(_) => Ok(0),
                Err(left) => Ok(usize::try_from(left).unwrap_or(usize::MAX)),
            };
        }
        match self.datastore().tenant_delete(id).await? {
            Ok(true) => Ok(0),
            Ok(false) => Err(Error::not_found("tenant", id)),
            Err(claims) => Err(Error::Conflict {
                code: ErrorCode::TenantHasClaims,
                message: format!(
                    "the tenant holds {claims} claims; release them first (DELETE /v1/claims/{{id}}), which deprovisions their hosts"
                ),
            }),
        }
    }

    /// Creates a token for a tenant (`Some`) or an admin token (`None`). The secret is in the
    /// answer and nowhere else.
    pub async fn token_create(
        &self,
        caller: &Caller,
        tenant_id: Option<&TenantId>,
        params: TokenCreate,
    ) -> Result<TokenCreatedView, Error> {
        caller.require_admin()?;
        if let Some(id) = tenant_id {
            self.tenant_view(caller, id).await?;
            crate::grants::refuse_if_deleting(self, id).await?;
        }
        let description = params.description.clone().unwrap_or_default();
        if description.len() > 1024 {
            return Err(Error::invalid("description", "must be at most 1024 bytes"));
        }
        let row = TokenRow {
            id: TokenId::generate(),
            role: if tenant_id.is_some() {
                Role::Tenant
            } else {
                Role::Admin
            },
            tenant_id: tenant_id.cloned(),
            read_only: params.read_only,
            description,
            expires_at: expiry(&params)?,
            created_at: podium_types::Timestamp::now(),
            revoked_at: None,
        };
        let secret = generate_token();
        self.datastore()
            .token_create(&row, &hash_token(secret.expose()))
            .await?;
        Ok(views::token_created(row, secret))
    }

    pub async fn token_list(
        &self,
        caller: &Caller,
        tenant_id: Option<&TenantId>,
    ) -> Result<List<TokenView>, Error> {
        caller.require_admin_read()?;
        if let Some(id) = tenant_id {
            self.tenant_view(caller, id).await?;
        }
        let tokens = self.datastore().token_list(tenant_id).await?;
        Ok(List::all(tokens.into_iter().map(views::token).collect()))
    }

    pub async fn token_revoke(
        &self,
        caller: &Caller,
        tenant_id: Option<&TenantId>,
        token_id: &TokenId,
    ) -> Result<(), Error> {
        caller.require_admin()?;
        if !self
            .datastore()
            .token_revoke(tenant_id, token_id, podium_types::Timestamp::now())
            .await?
        {
            return Err(Error::not_found("token", token_id));
        }
        Ok(())
    }
}
