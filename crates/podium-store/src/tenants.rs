//! Stored tenants, and the listing and revocation of tokens.

use podium_types::Timestamp;
use podium_types::{TenantId, TokenId};
use sqlx::Row;

use super::{Datastore, StoreError, TokenRow, moment};
use podium_types::{Page, Paged};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantRow {
    pub id: TenantId,
    pub name: String,
    pub description: String,
    pub created_at: Timestamp,
}

fn row(r: &sqlx::any::AnyRow) -> Result<TenantRow, StoreError> {
    Ok(TenantRow {
        id: r.try_get::<String, _>("id")?.into(),
        name: r.try_get("name")?,
        description: r.try_get("description")?,
        created_at: moment(r, "created_at")?,
    })
}

impl Datastore {
    pub async fn tenant_create(&self, t: &TenantRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tenants (id, name, description, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(t.id.as_str())
        .bind(&t.name)
        .bind(&t.description)
        .bind(t.created_at.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    pub async fn tenant_get(&self, id: &TenantId) -> Result<Option<TenantRow>, StoreError> {
        let r = sqlx::query("SELECT id, name, description, created_at FROM tenants WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.as_ref().map(row).transpose()
    }

    /// Tenants, by id; only the one named `name` where given.
    pub async fn tenant_list(
        &self,
        name: Option<&str>,
        page: &Page,
    ) -> Result<Paged<TenantRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, description, created_at FROM tenants \
             WHERE id > $1 AND ($3 = '' OR name = $3) ORDER BY id LIMIT $2",
        )
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .bind(name.unwrap_or(""))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |t| t.id.to_string()))
    }

    /// Deletes a tenant, its grants and its tokens, unless it holds claims: then nothing is
    /// deleted and the number of its claims is returned.
    pub async fn tenant_delete(&self, id: &TenantId) -> Result<Result<bool, i64>, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let claims: i64 = sqlx::query("SELECT COUNT(*) AS n FROM claims WHERE tenant_id = $1")
            .bind(id.as_str())
            .fetch_one(&mut *tx)
            .await?
            .try_get("n")?;
        if claims > 0 {
            return Ok(Err(claims));
        }
        sqlx::query("DELETE FROM grants WHERE tenant_id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "DELETE FROM redfish_sessions WHERE token_id IN (SELECT id FROM tokens WHERE tenant_id = $1)",
        )
        .bind(id.as_str())
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM tokens WHERE tenant_id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        let done = sqlx::query("DELETE FROM tenants WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.tokens_changed();
        Ok(Ok(done.rows_affected() == 1))
    }

    /// Starts deleting a tenant: revokes its tokens, drops its grants (so nothing more binds)
    /// and marks it. `false` when there is no such tenant.
    pub async fn tenant_begin_deletion(
        &self,
        id: &TenantId,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let marked =
            sqlx::query("UPDATE tenants SET deleting_at = COALESCE(deleting_at, $2) WHERE id = $1")
                .bind(id.as_str())
                .bind(now.to_string())
                .execute(&mut *tx)
                .await?;
        if marked.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE tokens SET revoked_at = $2 WHERE tenant_id = $1 AND revoked_at IS NULL",
        )
        .bind(id.as_str())
        .bind(now.to_string())
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM grants WHERE tenant_id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.tokens_changed();
        Ok(true)
    }

    /// Whether a tenant is being deleted.
    pub async fn tenant_deleting(&self, id: &TenantId) -> Result<bool, StoreError> {
        let r = sqlx::query("SELECT deleting_at FROM tenants WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(match r {
            Some(r) => r.try_get::<Option<String>, _>("deleting_at")?.is_some(),
            None => false,
        })
    }

    /// Tokens of a tenant (`Some`) or the admin tokens (`None`), newest first.
    pub async fn token_list(
        &self,
        tenant_id: Option<&TenantId>,
    ) -> Result<Vec<TokenRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, role, tenant_id, read_only, description, expires_at, created_at, revoked_at \
             FROM tokens WHERE ($1 = '' AND role = 'admin') OR ($1 <> '' AND tenant_id = $1) \
             ORDER BY created_at DESC, id DESC",
        )
        .bind(tenant_id.map_or("", TenantId::as_str))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(super::tokens::row).collect()
    }

    /// Revokes a token of a tenant (`Some`) or an admin token (`None`). False if there is none.
    pub async fn token_revoke(
        &self,
        tenant_id: Option<&TenantId>,
        token_id: &TokenId,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE tokens SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND \
             (($2 = '' AND role = 'admin') OR ($2 <> '' AND tenant_id = $2))",
        )
        .bind(token_id.as_str())
        .bind(tenant_id.map_or("", TenantId::as_str))
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        self.tokens_changed();
        Ok(done.rows_affected() == 1)
    }
}
