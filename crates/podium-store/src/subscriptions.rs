//! Redfish event subscriptions and how far delivery to each has come.

use podium_types::{SubscriptionId, TenantId, TenantScope, Timestamp};
use sqlx::Row;

use super::{Datastore, StoreError, decode, json, moment};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionRow {
    pub id: SubscriptionId,
    /// `None`: an admin's.
    pub tenant_id: Option<TenantId>,
    pub destination: String,
    pub context: String,
    pub event_types: Vec<String>,
    /// The HTTP headers sent with each event, sealed; never shown.
    pub headers_sealed: Option<String>,
    /// The last event handled (delivered, or given up on).
    pub delivered_through: i64,
    /// Failed tries of the next batch in a row.
    pub failures: i64,
    pub last_error: Option<String>,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, tenant_id, destination, context, event_types, headers_sealed, \
    delivered_through, failures, last_error, created_at";

fn row(r: &sqlx::any::AnyRow) -> Result<SubscriptionRow, StoreError> {
    Ok(SubscriptionRow {
        id: r.try_get::<String, _>("id")?.into(),
        tenant_id: r.try_get::<Option<String>, _>("tenant_id")?.map(Into::into),
        destination: r.try_get("destination")?,
        context: r.try_get("context")?,
        event_types: decode("event types", &r.try_get::<String, _>("event_types")?)?,
        headers_sealed: r.try_get("headers_sealed")?,
        delivered_through: r.try_get("delivered_through")?,
        failures: r.try_get("failures")?,
        last_error: r.try_get("last_error")?,
        created_at: moment(r, "created_at")?,
    })
}

impl Datastore {
    /// Records a subscription, where its owner holds fewer than `max`; whether it did.
    pub async fn subscription_create(
        &self,
        s: &SubscriptionRow,
        max: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(&format!(
            "INSERT INTO event_subscriptions ({COLUMNS}) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
             WHERE (SELECT COUNT(*) FROM event_subscriptions \
                    WHERE COALESCE(tenant_id, '') = COALESCE($2, '')) < $11"
        ))
        .bind(s.id.as_str())
        .bind(s.tenant_id.as_ref().map(|t| t.as_str().to_owned()))
        .bind(&s.destination)
        .bind(&s.context)
        .bind(json(&s.event_types))
        .bind(&s.headers_sealed)
        .bind(s.delivered_through)
        .bind(s.failures)
        .bind(&s.last_error)
        .bind(s.created_at.to_string())
        .bind(max)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The subscriptions of `scope` (a tenant's own, or with [`TenantScope::Every`] every
    /// one), oldest first.
    pub async fn subscription_list(
        &self,
        scope: TenantScope<'_>,
    ) -> Result<Vec<SubscriptionRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM event_subscriptions \
             WHERE ($1 = '' OR tenant_id = $1) ORDER BY id LIMIT 10000"
        ))
        .bind(scope.tenant().map_or("", |t| t.as_str()))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(row).collect()
    }

    /// Every subscription, the admin's and every tenant's (for delivery).
    pub async fn subscription_all(&self) -> Result<Vec<SubscriptionRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM event_subscriptions ORDER BY id"
        ))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(row).collect()
    }

    /// One subscription in `scope`.
    pub async fn subscription_get(
        &self,
        scope: TenantScope<'_>,
        id: &SubscriptionId,
    ) -> Result<Option<SubscriptionRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM event_subscriptions \
             WHERE id = $1 AND ($2 = '' OR tenant_id = $2)"
        ))
        .bind(id.as_str())
        .bind(scope.tenant().map_or("", |t| t.as_str()))
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// Deletes one subscription in `scope`; whether there was one.
    pub async fn subscription_delete(
        &self,
        scope: TenantScope<'_>,
        id: &SubscriptionId,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "DELETE FROM event_subscriptions WHERE id = $1 AND ($2 = '' OR tenant_id = $2)",
        )
        .bind(id.as_str())
        .bind(scope.tenant().map_or("", |t| t.as_str()))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Takes the sending of a subscription's next batch until `until`, where no process holds
    /// it (or its hold ran out before `now`); whether it did.
    pub async fn subscription_lease(
        &self,
        id: &SubscriptionId,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE event_subscriptions SET leased_until = $3 \
             WHERE id = $1 AND (leased_until IS NULL OR leased_until < $2)",
        )
        .bind(id.as_str())
        .bind(now.to_string())
        .bind(until.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves a subscription's delivery from `from` on to `through` (the events up to it
    /// handled), clearing its failures, where no other process moved it meanwhile; whether it
    /// did.
    pub async fn subscription_advance(
        &self,
        id: &SubscriptionId,
        from: i64,
        through: i64,
        last_error: Option<&str>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE event_subscriptions SET delivered_through = $3, failures = 0, \
             last_error = COALESCE($4, last_error), leased_until = NULL \
             WHERE id = $1 AND delivered_through = $2",
        )
        .bind(id.as_str())
        .bind(from)
        .bind(through)
        .bind(last_error)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a failed try of the batch after `from`.
    pub async fn subscription_failed(
        &self,
        id: &SubscriptionId,
        from: i64,
        error: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE event_subscriptions SET failures = failures + 1, last_error = $3, \
             leased_until = NULL WHERE id = $1 AND delivered_through = $2",
        )
        .bind(id.as_str())
        .bind(from)
        .bind(error)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }
}
