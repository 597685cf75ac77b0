//! The audit log (`audit_events`): written once per authenticated request that asks for a
//! change, read newest first, forgotten after the retention.

use sqlx::Row;

use crate::{Datastore, StoreError};
use podium_types::{AuditFilter, Page, Paged, Role, TenantId, TokenId};

/// One audit event, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    pub id: String,
    pub at: String,
    pub token_id: TokenId,
    pub role: Role,
    pub tenant_id: Option<TenantId>,
    pub method: String,
    pub route: String,
    pub path: String,
    pub resource_id: Option<String>,
    pub status: i64,
    pub error_code: Option<String>,
}

const COLUMNS: &str = "id, at, token_id, role, tenant_id, method, route, path, resource_id, \
                       status, error_code";

fn row(r: &sqlx::any::AnyRow) -> Result<AuditRow, StoreError> {
    Ok(AuditRow {
        id: r.try_get("id")?,
        at: r.try_get("at")?,
        token_id: r.try_get::<String, _>("token_id")?.into(),
        role: r.try_get::<String, _>("role")?.parse::<Role>()?,
        tenant_id: r
            .try_get::<Option<String>, _>("tenant_id")?
            .map(TenantId::from),
        method: r.try_get("method")?,
        route: r.try_get("route")?,
        path: r.try_get("path")?,
        resource_id: r.try_get("resource_id")?,
        status: r.try_get("status")?,
        error_code: r.try_get("error_code")?,
    })
}

impl Datastore {
    pub async fn audit_insert(&self, event: &AuditRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO audit_events ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        ))
        .bind(&event.id)
        .bind(&event.at)
        .bind(event.token_id.as_str())
        .bind(event.role.as_str())
        .bind(event.tenant_id.as_ref().map(TenantId::as_str))
        .bind(&event.method)
        .bind(&event.route)
        .bind(&event.path)
        .bind(&event.resource_id)
        .bind(event.status)
        .bind(&event.error_code)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Newest first. A `resource` matches the resource recorded or any segment of the path
    /// (it holds no `%`, `_` or `/`: the application checks).
    pub async fn audit_list(
        &self,
        filter: &AuditFilter,
        page: &Page,
    ) -> Result<Paged<AuditRow>, StoreError> {
        let cursor = page.cursor.clone().unwrap_or_else(|| "~".into());
        let resource = filter.resource.as_deref().unwrap_or("");
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM audit_events WHERE id < $1 \
             AND ($2 = '' OR tenant_id = $2) \
             AND ($3 = '' OR resource_id = $3 OR path LIKE $4 OR path LIKE $5) \
             AND ($6 = '' OR at >= $6) AND ($7 = '' OR at < $7) \
             ORDER BY id DESC LIMIT $8"
        ))
        .bind(cursor)
        .bind(filter.tenant.as_ref().map_or("", |t| t.as_str()))
        .bind(resource)
        .bind(format!("%/{resource}"))
        .bind(format!("%/{resource}/%"))
        .bind(filter.since.as_deref().unwrap_or(""))
        .bind(filter.until.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |e| e.id.clone()))
    }

    /// Forgets the events older than `before`, a few thousand at a time (other writers go
    /// between the batches); answers how many.
    pub async fn audit_forget_before(&self, before: &str) -> Result<u64, StoreError> {
        let mut forgotten = 0;
        loop {
            let n = sqlx::query(
                "DELETE FROM audit_events WHERE id IN \
                 (SELECT id FROM audit_events WHERE at < $1 LIMIT 5000)",
            )
            .bind(before)
            .execute(&mut *self.writer().await?)
            .await?
            .rows_affected();
            forgotten += n;
            if n < 5000 {
                return Ok(forgotten);
            }
        }
    }
}
