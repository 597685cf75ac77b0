//! The component tree behind each pod manager (Valence's "chassis and racks under a pod
//! manager"): read from the driver's `discover-chassis` after each sync of the pod manager's
//! systems, stored as chassis (not hosts), and shown to the admin.

use podium_runtime::{CallError, PluginError};
use podium_types::views::{ChassisView, GrantedChassisView, List};
use podium_types::{
    ChassisId, ChassisState, ErrorCode, Page, PodManagerId, PowerAction, Timestamp,
};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{ChassisReport, ChassisRow, pod_manager_load};
use crate::drivers::Driver;
use crate::error::Error;

impl Podium {
    /// Reads the pod manager's chassis through its driver and stores the tree, placing each of
    /// its hosts in it. A driver without chassis (a 0.1.0 one, or one that answers
    /// `unsupported`) leaves the stored tree as it is; so does a failure, which is logged: the
    /// systems' sync it follows has already succeeded, and the next sync tries again.
    pub(crate) async fn chassis_sync(
        &self,
        pm_name: &str,
        uuid: &PodManagerId,
        driver: &Driver<'_>,
    ) {
        let reported = match driver.call().discover_chassis().await {
            Ok(chassis) => chassis,
            Err(CallError::Plugin {
                error: PluginError::Unsupported(_),
                ..
            }) => return,
            Err(e) => {
                tracing::warn!(pod_manager = %pm_name, error = %e, "cannot read the chassis");
                return;
            }
        };
        let rows: Vec<ChassisReport> = reported
            .iter()
            .map(crate::data::chassis_from_driver)
            .collect();
        match self
            .datastore()
            .chassis_sync(uuid, &rows, Timestamp::now())
            .await
        {
            Ok(Ok(summary)) => tracing::info!(
                pod_manager = %pm_name,
                seen = summary.seen,
                added = summary.added,
                missing = summary.missing,
                placed = summary.placed,
                "chassis synced"
            ),
            Ok(Err(bad)) => {
                tracing::warn!(pod_manager = %pm_name, error = %bad, "chassis tree refused")
            }
            Err(e) => {
                tracing::warn!(pod_manager = %pm_name, error = %e, "cannot store the chassis")
            }
        }
    }

    /// The chassis of a pod manager, for an admin.
    pub async fn chassis_list(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        page: Page,
    ) -> Result<List<ChassisView>, Error> {
        caller.require_admin_read()?;
        pod_manager_load(self.datastore(), uuid).await?;
        let paged = self
            .datastore()
            .chassis_list(uuid, None, false, &page)
            .await?;
        Ok(List::of(paged, view))
    }

    /// The chassis a tenant's grant reaches at pod manager `uuid`, present ones only: every one
    /// of the pod manager's, or the grant's chassis and those within it, each path starting
    /// there. Any other pod manager is not found, as one not granted.
    pub async fn granted_chassis_list(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        page: Page,
    ) -> Result<List<GrantedChassisView>, Error> {
        let tenant_id = crate::grants::granted_tenant(
            caller,
            "these are the chassis a tenant's grant reaches: an admin lists every chassis at \
             /v1/pod_managers/{uuid}/chassis",
        )?;
        let grant = self
            .datastore()
            .grant_of(tenant_id, uuid)
            .await?
            .ok_or_else(|| Error::not_found("pod manager", uuid))?;
        let paged = self
            .datastore()
            .chassis_list(uuid, grant.chassis.as_ref(), true, &page)
            .await?;
        Ok(List::of(paged, |c| {
            let mut path = c.path;
            if let Some(top) = &grant.chassis {
                match path.iter().position(|p| p.id == *top) {
                    Some(at) => drop(path.drain(..at)),
                    None => path.clear(),
                }
            }
            GrantedChassisView {
                parent: path.last().map(|p| p.id.clone()),
                id: c.id,
                name: c.report.name,
                chassis_type: c.report.chassis_type,
                location: c.report.location,
                path,
            }
        }))
    }

    /// Refuses a chassis a tenant named unless it is one of pod manager `uuid`'s, present, and
    /// the grant's chassis or within it (`granted`, where the grant gives one chassis only);
    /// a chassis outside is "none" to the tenant, as one that does not exist.
    pub(crate) async fn chassis_within_reach(
        &self,
        uuid: &PodManagerId,
        granted: Option<&ChassisId>,
        chassis: &ChassisId,
    ) -> Result<(), Error> {
        let found = self.datastore().chassis_place(chassis).await?;
        let reached = found.is_some_and(|c| {
            c.pod_manager == *uuid
                && c.state == podium_types::ChassisState::Present
                && granted.is_none_or(|g| *g == *chassis || c.path.iter().any(|p| p.id == *g))
        });
        if reached {
            return Ok(());
        }
        Err(Error::invalid(
            "chassis",
            format!(
                "no chassis `{chassis}` within what your grant gives you at this pod manager \
                 (GET /v1/me/pod_managers/{uuid}/chassis lists them)"
            ),
        ))
    }

    /// A chassis, for an admin.
    pub async fn chassis_view(
        &self,
        caller: &Caller,
        id: &ChassisId,
    ) -> Result<ChassisView, Error> {
        caller.require_admin_read()?;
        self.datastore()
            .chassis_get(id)
            .await?
            .map(view)
            .ok_or_else(|| Error::not_found("chassis", id))
    }
}

impl Podium {
    /// `POST /v1/chassis/{id}/power`: powers a chassis on or off, or restarts it, through its pod
    /// manager's driver (a 0.3.0 one), then reads its power back. Refused with a 409 while a host
    /// it may hold is in use (a tenant's, one Podium is working on, one with an operation under
    /// way; a host the tree places nowhere may stand in it): an enclosure's power is every
    /// blade's. Checked before the action is sent; a claim that binds a host in between meets a
    /// host powered as the chassis left it, as after a power cut.
    pub async fn chassis_power(
        &self,
        caller: &Caller,
        id: &ChassisId,
        action: PowerAction,
    ) -> Result<ChassisView, Error> {
        caller.require_admin()?;
        let chassis = self
            .datastore()
            .chassis_get(id)
            .await?
            .ok_or_else(|| Error::not_found("chassis", id))?;
        if chassis.state == ChassisState::Missing {
            return Err(Error::Conflict {
                code: ErrorCode::ChassisMissing,
                message: format!(
                    "chassis `{id}` was not reported by its pod manager's last sync: sync it \
                     again before acting on it"
                ),
            });
        }
        const SHOWN: u32 = 10;
        let in_use = self.datastore().chassis_hosts_in_use(id, SHOWN + 1).await?;
        if !in_use.is_empty() {
            let mut hosts: Vec<String> = in_use
                .iter()
                .take(SHOWN as usize)
                .map(|h| {
                    let mut why = vec![h.state.to_string()];
                    if let Some(claim) = &h.claim_id {
                        why.push(format!("claim `{claim}`"));
                    }
                    if !h.placed {
                        why.push("placed in no chassis, so maybe in this one".into());
                    }
                    format!("`{}` ({})", h.name, why.join(", "))
                })
                .collect();
            if in_use.len() > SHOWN as usize {
                hosts.push("and more".into());
            }
            return Err(Error::Conflict {
                code: ErrorCode::ChassisInUse,
                message: format!(
                    "chassis `{id}` may hold hosts in use, which its power would reach: {}; \
                     wait for their operations, or release their claims first",
                    hosts.join(", ")
                ),
            });
        }
        let pm = pod_manager_load(self.datastore(), &chassis.pod_manager).await?;
        let driver = self.drivers().pod_manager(&pm).await?;
        let chassis_id = &chassis.report.chassis_id;
        driver
            .call()
            .set_chassis_power(chassis_id, action)
            .await
            .map_err(|e| match e {
                CallError::Plugin {
                    error: PluginError::Unsupported(why),
                    ..
                } => Error::Conflict {
                    code: ErrorCode::ChassisPowerUnsupported,
                    message: format!(
                        "chassis `{id}` has no power control Podium can reach (its driver \
                         says: {why})"
                    ),
                },
                other => Error::from(other),
            })?;
        tracing::info!(chassis = %id, pod_manager = %pm.name, ?action, "chassis power set");
        // The action was sent: whatever fails from here leaves the stored power to the next
        // sync, and is not answered as a failure (a retry would send the action again).
        match driver.call().get_chassis_power(chassis_id).await {
            Ok(power) => {
                if let Err(e) = self
                    .datastore()
                    .chassis_power_read(id, power, Timestamp::now())
                    .await
                {
                    tracing::warn!(chassis = %id, error = %e, "cannot store the chassis' power");
                }
            }
            Err(e) => {
                tracing::warn!(chassis = %id, error = %e, "cannot read the chassis' power back")
            }
        }
        self.chassis_view(caller, id).await
    }
}

fn view(c: ChassisRow) -> ChassisView {
    let r = c.report;
    ChassisView {
        parent: c.path.last().map(|p| p.id.clone()),
        id: c.id,
        pod_manager: c.pod_manager,
        chassis_id: r.chassis_id,
        name: r.name,
        chassis_type: r.chassis_type,
        manufacturer: r.manufacturer,
        model: r.model,
        serial: r.serial,
        location: r.location,
        power_state: r.power_state,
        health: r.health,
        path: c.path,
        hosts: c.hosts,
        state: c.state,
        created_at: c.created_at,
        updated_at: c.updated_at,
        last_seen_at: c.last_seen_at,
    }
}
