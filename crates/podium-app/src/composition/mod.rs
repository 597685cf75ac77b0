//! Composed nodes (Valence's composed nodes, on DMTF's `CompositionService`): an admin composes
//! a node of a pod manager's resource blocks, named or picked for a requirement; the composed
//! system becomes a host of the pod manager (kind `composed`), registered and inspected as any
//! host; deleting the node decomposes it and frees its blocks.
//!
//! A pod manager's compositions, decompositions and syncs run one at a time in this process,
//! under one lock: two requests never pick one block, and a sync never reads the systems before
//! a composition or decomposition and writes them after it. The service itself refuses a block
//! composed meanwhile (another process, another client), and that refusal names the block.

mod for_claims;
pub(crate) mod locks;
mod pick;

pub(crate) use for_claims::{ComposeRun, Composing};

use podium_runtime::{CallError, CompositionService, PluginError};
use podium_types::requests::{ComposedNodeCreate, CompositionRequirement};
use podium_types::views::{
    BlockLimitView, ComposedNodeView, CompositionView, List, ResourceBlockView, ResourceZoneView,
};
use podium_types::{ClaimId, ErrorCode, HostId, Page, PodManagerId, Timestamp};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{ComposedNodeRow, PodManager, pod_manager_load};
use crate::drivers::Driver;
use crate::error::Error;

impl Podium {
    /// Reads the pod manager's composition service after a sync of its systems, and makes its
    /// composed nodes what the service says: each system a block is composed into is a host of
    /// kind `composed`, with its blocks. A driver without composition leaves them as they are;
    /// so does a failure, which is logged (the sync it follows has succeeded). The caller holds
    /// the pod manager's compose lock ([`Podium::compose_lock`]) for the whole sync.
    pub(crate) async fn composition_sync(&self, pm: &PodManager, driver: &Driver<'_>) {
        let service = match driver.call().read_composition().await {
            Ok(service) => service,
            Err(CallError::Plugin {
                error: PluginError::Unsupported(_),
                ..
            }) => return,
            Err(e) => {
                tracing::warn!(pod_manager = %pm.name, error = %e, "cannot read the composition service");
                return;
            }
        };
        let composed = pick::composed_systems(&service);
        match self
            .datastore()
            .composed_nodes_sync(&pm.uuid, &composed, Timestamp::now())
            .await
        {
            Ok(changed) => {
                tracing::debug!(pod_manager = %pm.name, composed = composed.len(), changed, "composition synced")
            }
            Err(e) => {
                tracing::warn!(pod_manager = %pm.name, error = %e, "cannot store the composed nodes")
            }
        }
    }

    /// The pod manager's composition service as its driver reads it now, for an admin.
    pub async fn composition_view(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<CompositionView, Error> {
        caller.require_admin_read()?;
        let pm = pod_manager_load(self.datastore(), uuid).await?;
        let driver = self.drivers().pod_manager(&pm).await?;
        let service = read(&pm, &driver).await?;
        Ok(view(service))
    }

    /// Composes a node of the blocks named, or of blocks picked for the requirement, and adds
    /// its system as a host of the pod manager.
    pub async fn composed_node_create(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        params: ComposedNodeCreate,
    ) -> Result<ComposedNodeView, Error> {
        caller.require_admin()?;
        crate::labels::validate_name(&params.name)?;
        let wanted = match (&params.blocks, &params.requirement) {
            (Some(blocks), None) if blocks.is_empty() => {
                return Err(Error::invalid("blocks", "name at least one resource block"));
            }
            (Some(blocks), None) => Wanted::Blocks(blocks),
            (None, Some(need)) if need.is_empty() => {
                return Err(Error::invalid(
                    "requirement",
                    "ask for at least one of processors, cores, memory_mib, drives, \
                     drive_bytes and nics",
                ));
            }
            (None, Some(need)) => Wanted::Requirement(need),
            _ => {
                return Err(Error::invalid(
                    "blocks",
                    "give either `blocks` (the resource blocks to compose) or `requirement` \
                     (what the node must hold), not both and not neither",
                ));
            }
        };
        let pm = pod_manager_load(self.datastore(), uuid).await?;
        let driver = self.drivers().pod_manager(&pm).await?;
        let _held = self.compose_lock(uuid).await;
        let id = self
            .compose_locked(&pm, &driver, &params.name, wanted, None)
            .await?;
        self.composed_node_view(caller, &id).await
    }

    /// Composes a node of the pod manager, for `claim` where a claim asked for it (its
    /// reservation), and adds its system as a host. The caller holds the pod manager's compose
    /// lock.
    pub(crate) async fn compose_locked(
        &self,
        pm: &PodManager,
        driver: &Driver<'_>,
        name: &str,
        wanted: Wanted<'_>,
        claim: Option<&ClaimId>,
    ) -> Result<HostId, Error> {
        let service = read(pm, driver).await?;
        let picked = match wanted {
            Wanted::Blocks(named) => {
                pick::check(&service, named).map_err(|refused| match refused {
                    pick::Refused::Taken(message) => Error::ConflictField {
                        code: ErrorCode::BlockTaken,
                        field: "blocks".into(),
                        message,
                    },
                    other => Error::invalid("blocks", other.to_string()),
                })?
            }
            Wanted::Requirement(need) => {
                pick::pick(&service, need).map_err(|refused| Error::ConflictField {
                    code: ErrorCode::NoBlocksFit,
                    field: "requirement".into(),
                    message: format!("pod manager `{}`: {refused}", pm.name),
                })?
            }
        };
        let system_id = driver
            .call()
            .compose(name, &picked.blocks)
            .await
            .map_err(|e| match e {
                // A block composed meanwhile, by a client other than this process.
                CallError::Plugin {
                    error: PluginError::Conflict(message),
                    ..
                } => Error::ConflictField {
                    code: ErrorCode::BlockTaken,
                    field: "blocks".into(),
                    message: format!("the service refused the composition: {message}"),
                },
                CallError::Plugin {
                    error: PluginError::InvalidInput(message),
                    ..
                } => Error::invalid(
                    "blocks",
                    format!("the service refused the composition: {message}"),
                ),
                other => Error::from(other),
            })?;
        tracing::info!(pod_manager = %pm.name, system = %system_id, zone = %picked.zone, blocks = ?picked.blocks, claim = ?claim, "composed a node");
        // A system that cannot be read back is decomposed again (a client would compose another
        // when it tries again); a failure to record it leaves it composed, and the next sync
        // adds it as a composed node.
        let system = match driver.call().inspect(&system_id).await {
            Ok(system) => system,
            Err(e) => {
                if let Err(undone) = driver.call().decompose(&system_id).await {
                    tracing::warn!(pod_manager = %pm.name, system = %system_id, error = %undone, "cannot decompose a node whose system cannot be read");
                }
                return Err(Error::from(e));
            }
        };
        let mut host = crate::data::host_from_system(&system);
        host.pod_manager = pm.uuid.clone();
        host.kind = podium_types::HostKind::Composed;
        self.lifecycle()
            .composed(&host, &picked.zone, &picked.blocks, claim)
            .await
    }

    /// The nodes composed at a pod manager, for an admin.
    pub async fn composed_node_list(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        page: Page,
    ) -> Result<List<ComposedNodeView>, Error> {
        caller.require_admin_read()?;
        pod_manager_load(self.datastore(), uuid).await?;
        let paged = self.datastore().composed_node_list(uuid, &page).await?;
        Ok(List::of(paged, node))
    }

    pub async fn composed_node_view(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<ComposedNodeView, Error> {
        caller.require_admin_read()?;
        let row = self
            .datastore()
            .composed_node_get(id)
            .await?
            .ok_or_else(|| Error::not_found("composed node", id))?;
        Ok(node(row))
    }

    /// Decomposes a node (its blocks are free again) and removes its host. A node a claim
    /// holds is refused, naming the claim; while the service decomposes it, its host is in
    /// maintenance, so no claim takes it meanwhile (ended if the decomposition fails). A system
    /// the service no longer has is decomposed already.
    pub async fn composed_node_delete(&self, caller: &Caller, id: &HostId) -> Result<(), Error> {
        caller.require_admin()?;
        let row = self
            .datastore()
            .composed_node_get(id)
            .await?
            .ok_or_else(|| Error::not_found("composed node", id))?;
        self.decompose(&row).await
    }

    /// Decomposes a node and removes its host, as [`Podium::composed_node_delete`] says.
    pub(crate) async fn decompose(&self, row: &ComposedNodeRow) -> Result<(), Error> {
        let id = &row.host_id;
        let pm = pod_manager_load(self.datastore(), &row.pod_manager).await?;
        let driver = self.drivers().pod_manager(&pm).await?;
        // Not while the pod manager syncs: a discovery read before the decomposition would add
        // the system again after it.
        let _locked = self.compose_lock(&row.pod_manager).await;
        let held = match self
            .datastore()
            .composed_node_hold(id, DECOMPOSING, Timestamp::now())
            .await?
        {
            None => return Err(Error::not_found("composed node", id)),
            Some(Err(claim)) => return Err(claimed(&claim)),
            Some(Ok(held)) => held,
        };
        match driver.call().decompose(&row.system_id).await {
            Ok(()) => {}
            Err(CallError::Plugin {
                error: PluginError::NotFound(_),
                ..
            }) => {
                tracing::info!(pod_manager = %pm.name, system = %row.system_id, "the composed system was gone already");
            }
            Err(e) => {
                if held
                    && let Err(unheld) = self
                        .datastore()
                        .composed_node_unhold(id, DECOMPOSING, Timestamp::now())
                        .await
                {
                    tracing::warn!(host = %id, error = %unheld, "cannot end the maintenance of a node whose decomposition failed");
                }
                return Err(Error::from(e));
            }
        }
        tracing::info!(pod_manager = %pm.name, system = %row.system_id, "decomposed a node");
        match self.datastore().composed_node_remove(id).await? {
            // Held in maintenance, the host cannot have been claimed meanwhile.
            Some(Err(claim)) => Err(claimed(&claim)),
            Some(Ok(())) | None => {
                // The host's addresses (DHCP-less, from its inspection) go with it.
                self.ip_release_gone_hosts().await?;
                // Its blocks may make the node a claim that composes waits for.
                self.inner.background.run_now(crate::tasks::Job::Bind);
                Ok(())
            }
        }
    }
}

/// What a node is composed of: blocks named, or blocks picked for a requirement.
pub(crate) enum Wanted<'a> {
    Blocks(&'a [String]),
    Requirement(&'a CompositionRequirement),
}

/// The maintenance reason of a node's host while its system is decomposed.
const DECOMPOSING: &str = "being decomposed";

impl Podium {
    /// The pod manager's compose lock: held by a composition, a decomposition and a sync of the
    /// pod manager, so that each sees the others' work whole.
    pub(crate) async fn compose_lock(&self, pm: &PodManagerId) -> tokio::sync::OwnedMutexGuard<()> {
        self.inner.compose_locks.of(pm).lock_owned().await
    }
}

fn claimed(claim: &podium_types::ClaimId) -> Error {
    Error::Conflict {
        code: ErrorCode::HostClaimed,
        message: format!(
            "claim `{claim}` holds this node's host: release the claim before decomposing it"
        ),
    }
}

/// The composition service, or a 409 naming the capability where the driver composes nothing.
async fn read(pm: &PodManager, driver: &Driver<'_>) -> Result<CompositionService, Error> {
    driver.call().read_composition().await.map_err(|e| match e {
        CallError::Plugin {
            error: PluginError::Unsupported(_),
            ..
        } => Error::Conflict {
            code: ErrorCode::CompositionUnsupported,
            message: format!(
                "pod manager `{}` composes nothing: its driver has no composition (a Redfish \
                 service without a CompositionService, or a driver of contract 0.1.0)",
                pm.name
            ),
        },
        other => Error::from(other),
    })
}

fn node(row: ComposedNodeRow) -> ComposedNodeView {
    ComposedNodeView {
        id: row.host_id,
        pod_manager: row.pod_manager,
        name: row.name,
        system_id: row.system_id,
        state: row.state,
        zone: row.zone,
        blocks: row.blocks,
        claim: row.claim,
        created_at: row.created_at,
    }
}

fn view(service: CompositionService) -> CompositionView {
    CompositionView {
        blocks: service
            .blocks
            .into_iter()
            .map(|b| ResourceBlockView {
                block_types: b.block_types,
                state: b.state,
                id: b.id,
                name: b.name,
                reserved: b.reserved,
                max_compositions: b.max_compositions,
                compositions: b.compositions,
                zones: b.zones,
                processors: b.processors,
                cores: b.cores,
                memory_mib: b.memory_mib,
                drives: b.drives,
                drive_bytes: b.drive_bytes,
                nics: b.nics,
                systems: b.systems,
            })
            .collect(),
        zones: service
            .zones
            .into_iter()
            .map(|z| ResourceZoneView {
                id: z.id,
                name: z.name,
            })
            .collect(),
        offered_zones: service.offered_zones,
        limits: service
            .limits
            .into_iter()
            .map(|l| BlockLimitView {
                block_type: l.block_type,
                min: l.min,
                max: l.max,
            })
            .collect(),
    }
}
