//! Grants (Metal3's host deploy policy), the application side: the admin lets a tenant claim
//! hosts of a pod manager, optionally narrowed by a label selector and a maximum number of hosts.

use podium_types::{GrantId, PodManagerId, TenantId};

use crate::app::Podium;
use crate::app::page;
use crate::auth::Caller;
use crate::error::Error;
use crate::views;
use podium_store::GrantRow;
use podium_types::requests::GrantCreate;
use podium_types::views::{GrantView, List};

impl Podium {
    pub async fn grant_create(
        &self,
        caller: &Caller,
        params: GrantCreate,
    ) -> Result<GrantView, Error> {
        caller.require_admin()?;
        if self.datastore().tenant_get(&params.tenant).await?.is_none() {
            return Err(Error::invalid(
                "tenant",
                format!("no tenant `{}`", params.tenant),
            ));
        }
        crate::tenants::refuse_if_deleting(self, &params.tenant).await?;
        if self
            .datastore()
            .pod_manager_get(&params.pod_manager)
            .await?
            .is_none()
        {
            return Err(Error::invalid(
                "pod_manager",
                format!("no pod manager `{}`", params.pod_manager),
            ));
        }
        crate::labels::validate_labels("selector", &params.selector)?;
        if params.max_hosts == Some(0) {
            return Err(Error::invalid(
                "max_hosts",
                "must be at least 1 (delete the grant instead)",
            ));
        }
        let row = GrantRow {
            id: GrantId::generate(),
            tenant_id: params.tenant,
            pod_manager: params.pod_manager,
            selector: params.selector,
            max_hosts: params.max_hosts.map(i64::from),
            created_at: podium_store::now(),
        };
        match self.datastore().grant_create(&row).await {
            Ok(()) => Ok(views::grant(row)),
            Err(podium_store::StoreError::Conflict(_)) => Err(Error::ConflictField {
                code: "grant_exists",
                field: "pod_manager".into(),
                message:
                    "this tenant already has a grant for this pod manager; delete it to change it"
                        .into(),
            }),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn grant_view(&self, caller: &Caller, id: &GrantId) -> Result<GrantView, Error> {
        caller.require_admin_read()?;
        let row = self
            .datastore()
            .grant_get(id)
            .await?
            .ok_or_else(|| Error::not_found("grant", id))?;
        Ok(views::grant(row))
    }

    pub async fn grant_list(
        &self,
        caller: &Caller,
        tenant: Option<TenantId>,
        pod_manager: Option<PodManagerId>,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> Result<List<GrantView>, Error> {
        caller.require_admin_read()?;
        let paged = self
            .datastore()
            .grant_list(tenant.as_ref(), pod_manager.as_ref(), &page(limit, cursor)?)
            .await?;
        Ok(List::of(paged, views::grant))
    }

    pub async fn grant_delete(&self, caller: &Caller, id: &GrantId) -> Result<(), Error> {
        caller.require_admin()?;
        if !self.datastore().grant_delete(id).await? {
            return Err(Error::not_found("grant", id));
        }
        Ok(())
    }
}
