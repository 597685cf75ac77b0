//! Redfish sessions: a session token (stored as its sha256) standing for the Podium token that
//! opened it, always read joined to that token.

use podium_types::Timestamp;
use podium_types::{SessionId, TenantScope, TokenId};
use sqlx::Row;

use super::{Datastore, StoreError, TokenRow, moment};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    pub id: SessionId,
    pub token_id: TokenId,
    pub user_name: String,
    pub created_at: Timestamp,
    pub last_used_at: Timestamp,
}

const COLUMNS: &str = "s.id AS session_id, s.token_id AS session_token_id, s.user_name, \
    s.created_at AS session_created_at, s.last_used_at";

fn row(r: &sqlx::any::AnyRow) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        id: r.try_get::<String, _>("session_id")?.into(),
        token_id: r.try_get::<String, _>("session_token_id")?.into(),
        user_name: r.try_get("user_name")?,
        created_at: moment(r, "session_created_at")?,
        last_used_at: moment(r, "last_used_at")?,
    })
}

impl Datastore {
    pub async fn session_create(&self, session: &SessionRow, hash: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO redfish_sessions (id, hash, token_id, user_name, created_at, last_used_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(session.id.as_str())
        .bind(hash)
        .bind(session.token_id.as_str())
        .bind(&session.user_name)
        .bind(session.created_at.to_string())
        .bind(session.last_used_at.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// The session whose token hashes to `hash`, with the Podium token it stands for.
    pub async fn session_by_hash(
        &self,
        hash: &str,
    ) -> Result<Option<(SessionRow, TokenRow)>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS}, t.id, t.role, t.tenant_id, t.read_only, t.description, \
             t.expires_at, t.created_at, t.revoked_at \
             FROM redfish_sessions s JOIN tokens t ON t.id = s.token_id WHERE s.hash = $1"
        ))
        .bind(hash)
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.map(|r| Ok((row(&r)?, super::tokens::row(&r)?)))
            .transpose()
    }

    /// Records that a session was used (its idle timeout starts again).
    pub async fn session_touch(&self, id: &SessionId, now: Timestamp) -> Result<(), StoreError> {
        sqlx::query("UPDATE redfish_sessions SET last_used_at = $2 WHERE id = $1")
            .bind(id.as_str())
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// A session opened by a token in `scope` (a tenant's tokens, or any).
    pub async fn session_get(
        &self,
        scope: TenantScope<'_>,
        id: &SessionId,
    ) -> Result<Option<SessionRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM redfish_sessions s JOIN tokens t ON t.id = s.token_id \
             WHERE s.id = $1 AND ($2 = '' OR t.tenant_id = $2)"
        ))
        .bind(id.as_str())
        .bind(scope.tenant().map_or("", |t| t.as_str()))
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// The sessions opened by tokens in `scope` and used since `since`, oldest first.
    pub async fn session_list(
        &self,
        scope: TenantScope<'_>,
        since: Timestamp,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM redfish_sessions s JOIN tokens t ON t.id = s.token_id \
             WHERE ($1 = '' OR t.tenant_id = $1) AND s.last_used_at > $2 \
             AND t.revoked_at IS NULL ORDER BY s.id LIMIT 10000"
        ))
        .bind(scope.tenant().map_or("", |t| t.as_str()))
        .bind(since.to_string())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(row).collect()
    }

    /// Ends a session; whether there was one.
    pub async fn session_delete(&self, id: &SessionId) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM redfish_sessions WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Forgets the sessions idle since before `before`; how many.
    pub async fn sessions_expire(&self, before: Timestamp) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM redfish_sessions WHERE last_used_at <= $1")
            .bind(before.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected())
    }
}
