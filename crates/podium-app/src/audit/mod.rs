//! The audit log: every authenticated request that asks for a change is recorded with who made
//! it (the token's id, its role, its tenant), what it asked (the route, the path, the resource)
//! and how it ended (the status, the error's code), never with a body; `GET /v1/audit` reads it
//! (admins everything, a tenant its own), and the expiry task forgets what is past the retention.

pub(crate) mod writer;

use std::time::Duration;

use crate::data::AuditRow;
use podium_types::views::{AuditEventView, List};
use podium_types::{AuditFilter, Page, Role, Timestamp};

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

/// How long events are kept unless the admin says otherwise.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(90 * 86_400);

/// A request that asked for a change, as the HTTP layer saw it answered.
#[derive(Clone, Debug)]
pub struct AuditEntry {
    pub method: String,
    /// The route's template.
    pub route: String,
    /// The path as sent (no query).
    pub path: String,
    /// The resource the answer created, or else the last one the path names.
    pub resource: Option<String>,
    pub status: u16,
    /// The error's `code`, when it failed.
    pub error_code: Option<String>,
}

impl Podium {
    /// Sets how long audit events are kept (`None`: for ever); call before the background
    /// tasks start.
    pub fn set_audit_retention(&self, retention: Option<Duration>) {
        let _ = self.inner.audit_retention.set(retention);
    }

    /// Records a request that asked for a change, made by `caller` (as its token named it when
    /// the request came). A failure to record is logged; the answer was given already.
    pub async fn audit_record(&self, caller: &Caller, entry: AuditEntry) {
        let (token_id, role, tenant) = match caller {
            Caller::Admin { token_id, .. } => (token_id, Role::Admin, None),
            Caller::Tenant {
                token_id,
                tenant_id,
                ..
            } => (token_id, Role::Tenant, Some(tenant_id.clone())),
        };
        let row = AuditRow {
            id: crate::data::new_id(),
            at: podium_types::Timestamp::now(),
            token_id: token_id.clone(),
            role,
            tenant_id: tenant,
            method: entry.method,
            route: entry.route,
            path: entry.path,
            resource_id: entry.resource,
            status: i64::from(entry.status),
            error_code: entry.error_code,
        };
        let (method, route, status) = (row.method.clone(), row.route.clone(), row.status);
        if let Err(e) = self.inner.audit.write(self.datastore(), row).await {
            tracing::error!(error = %e, %method, %route, status,
                "cannot record a request in the audit log");
        }
    }

    /// `GET /v1/audit`: newest first; an admin's token reads every event (a read-only one will
    /// do), a tenant's only its tenant's.
    pub async fn audit_list(
        &self,
        caller: &Caller,
        mut filter: AuditFilter,
        page: Page,
    ) -> Result<List<AuditEventView>, Error> {
        if let Caller::Tenant { tenant_id, .. } = caller {
            match &filter.tenant {
                Some(asked) if asked != tenant_id => {
                    return Err(Error::Forbidden(
                        "a tenant reads only its own audit events".into(),
                    ));
                }
                _ => filter.tenant = Some(tenant_id.clone()),
            }
        }
        if let Some(resource) = &filter.resource
            && (resource.is_empty()
                || resource.len() > 200
                || !resource
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b)))
        {
            return Err(Error::invalid(
                "resource",
                "must be an id: letters, digits, `-`, `.` and `:`, at most 200",
            ));
        }
        let paged = self.datastore().audit_list(&filter, &page).await?;
        Ok(List::of(paged, view))
    }

    /// Forgets the events past the retention (the expiry task); answers how many.
    pub(crate) async fn audit_expire(&self) -> Result<u64, Error> {
        let retention = match self.inner.audit_retention.get() {
            Some(None) => return Ok(0),
            Some(Some(retention)) => *retention,
            None => DEFAULT_RETENTION,
        };
        let before = Timestamp::now().before(retention);
        Ok(self.datastore().audit_forget_before(before).await?)
    }
}

fn view(row: AuditRow) -> AuditEventView {
    let status = u16::try_from(row.status).unwrap_or(0);
    AuditEventView {
        outcome: if status < 400 { "succeeded" } else { "failed" }.into(),
        id: row.id,
        at: row.at,
        token_id: row.token_id,
        role: row.role,
        tenant: row.tenant_id,
        method: row.method,
        route: row.route,
        path: row.path,
        resource: row.resource_id,
        status,
        error_code: row.error_code,
    }
}
