//! Grants (Metal3's host deploy policy), the application side: the admin lets a tenant claim
//! hosts of a pod manager, optionally narrowed by a label selector and a maximum number of hosts.

use podium_types::{ErrorCode, GrantId, PodManagerId, TenantId};

use crate::app::Podium;
use crate::app::page;
use crate::auth::Caller;
use crate::data::{GrantRow, pod_manager_find};
use crate::error::Error;
use crate::views;
use podium_types::requests::{GrantCreate, GrantedPodManagerQuery};
use podium_types::views::{GrantView, GrantedPodManagerView, List, TenantGrantView};
use podium_types::{Page, PodManagerFilter};

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
        refuse_if_deleting(self, &params.tenant).await?;
        if pod_manager_find(self.datastore(), &params.pod_manager)
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
        if let Some(chassis) = &params.chassis {
            let known = self.datastore().chassis_place(chassis).await?;
            if known.is_none_or(|c| c.pod_manager != params.pod_manager) {
                return Err(Error::invalid(
                    "chassis",
                    format!(
                        "pod manager `{}` has no chassis `{chassis}` (GET /v1/pod_managers/{}/chassis lists them)",
                        params.pod_manager, params.pod_manager
                    ),
                ));
            }
        }
        let row = GrantRow {
            id: GrantId::generate(),
            tenant_id: params.tenant,
            pod_manager: params.pod_manager,
            selector: params.selector,
            max_hosts: params.max_hosts.map(i64::from),
            chassis: params.chassis,
            created_at: podium_types::Timestamp::now(),
        };
        match self.datastore().grant_create(&row).await {
            Ok(()) => Ok(views::grant(row)),
            Err(e) if crate::data::is_conflict(&e) => Err(Error::ConflictField {
                code: ErrorCode::GrantExists,
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

    /// `GET /v1/me/pod_managers`: the pod managers the caller's tenant may claim hosts of, with
    /// what its grant of each allows; never their URL or credentials.
    pub async fn granted_pod_manager_list(
        &self,
        caller: &Caller,
        query: GrantedPodManagerQuery,
    ) -> Result<List<GrantedPodManagerView>, Error> {
        let tenant = granted_tenant(caller, GRANTED_POD_MANAGERS_FOR_ADMIN)?;
        let page = page(query.limit, query.cursor)?;
        let only = match &query.name {
            None => None,
            Some(name) => {
                let filter = PodManagerFilter {
                    name: Some(name.clone()),
                    ..PodManagerFilter::default()
                };
                let named = self
                    .datastore()
                    .pod_manager_list(
                        &filter,
                        &Page {
                            limit: 1,
                            cursor: None,
                        },
                    )
                    .await?;
                match named.items.into_iter().next() {
                    Some(pm) => Some(pm.uuid),
                    None => return Ok(List::all(Vec::new())),
                }
            }
        };
        let grants = self
            .datastore()
            .grant_list(Some(tenant), only.as_ref(), &page)
            .await?;
        let mut items = Vec::with_capacity(grants.items.len());
        for grant in grants.items {
            // A pod manager's grants go with it; one deleted meanwhile is not shown.
            if let Some(pm) = pod_manager_find(self.datastore(), &grant.pod_manager).await? {
                items.push(granted(pm, grant));
            }
        }
        Ok(List {
            items,
            next: grants.next,
        })
    }

    /// `GET /v1/me/pod_managers/{uuid}`: one of them; another pod manager is not found.
    pub async fn granted_pod_manager_view(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<GrantedPodManagerView, Error> {
        let tenant = granted_tenant(caller, GRANTED_POD_MANAGERS_FOR_ADMIN)?;
        let missing = || Error::not_found("pod manager", uuid);
        let grant = self
            .datastore()
            .grant_of(tenant, uuid)
            .await?
            .ok_or_else(missing)?;
        let pm = pod_manager_find(self.datastore(), uuid)
            .await?
            .ok_or_else(missing)?;
        Ok(granted(pm, grant))
    }

    pub async fn grant_delete(&self, caller: &Caller, id: &GrantId) -> Result<(), Error> {
        caller.require_admin()?;
        if !self.datastore().grant_delete(id).await? {
            return Err(Error::not_found("grant", id));
        }
        Ok(())
    }
}

/// The tenant whose grants a caller reads: its own; an admin claims nothing.
/// The tenant calling a route that lists what its grants give it; an admin is refused with
/// `for_admin`, which says where an admin looks instead.
pub(crate) fn granted_tenant<'c>(
    caller: &'c Caller,
    for_admin: &str,
) -> Result<&'c TenantId, Error> {
    match caller {
        Caller::Tenant { tenant_id, .. } => Ok(tenant_id),
        Caller::Admin { .. } => Err(Error::Forbidden(for_admin.into())),
    }
}

const GRANTED_POD_MANAGERS_FOR_ADMIN: &str = "these are the pod managers a tenant may claim hosts \
    of: an admin lists every pod manager at /v1/pod_managers and the grants at /v1/grants";

fn granted(pm: crate::data::PodManager, grant: GrantRow) -> GrantedPodManagerView {
    GrantedPodManagerView {
        uuid: pm.uuid,
        name: pm.name,
        description: pm.description,
        location: pm.location,
        status: pm.status,
        network_config_owner: pm.network_config_owner,
        tenant_firmware: pm.tenant_firmware,
        cleaning: podium_types::CleaningInEffect::of(
            &pm.deploy,
            pm.preprovisioning_image.is_some(),
        ),
        grant: TenantGrantView {
            id: grant.id,
            selector: grant.selector,
            max_hosts: grant.max_hosts,
            chassis: grant.chassis,
            created_at: grant.created_at,
        },
    }
}

/// A tenant being deleted gets no new credentials or grants.
pub(crate) async fn refuse_if_deleting(podium: &Podium, tenant: &TenantId) -> Result<(), Error> {
    if podium.datastore().tenant_deleting(tenant).await? {
        return Err(Error::Conflict {
            code: ErrorCode::TenantDeleting,
            message: format!("tenant `{tenant}` is being deleted (its claims are being released)"),
        });
    }
    Ok(())
}
