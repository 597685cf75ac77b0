//! Composed nodes (Valence's composed nodes, on DMTF's `CompositionService`): an admin composes
//! a node of a pod manager's resource blocks, named or picked for a requirement; the composed
//! system becomes a host of the pod manager (kind `composed`), registered and inspected as any
//! host; deleting the node decomposes it and frees its blocks.
//!
//! One composition of a pod manager at a time in this process (its blocks are read, picked and
//! composed under one lock), so two requests never pick one block; the service itself refuses a
//! block composed meanwhile (another process, another client), and that refusal names the block.

pub(crate) mod locks;
mod pick;

use podium_runtime::{CallError, CompositionService, PluginError};
use podium_types::requests::ComposedNodeCreate;
use podium_types::views::{
    BlockLimitView, ComposedNodeView, CompositionView, List, ResourceBlockView, ResourceZoneView,
};
use podium_types::{HostId, OperationRequest, Page, PodManagerId, Timestamp};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{ComposedNodeRow, OperationRow, PodManager};
use crate::drivers::Driver;
use crate::error::Error;

impl Podium {
    /// Reads the pod manager's composition service after a sync of its systems, and makes its
    /// composed nodes what the service says: each system a block is composed into is a host of
    /// kind `composed`, with its blocks. A driver without composition leaves them as they are;
    /// so does a failure, which is logged (the sync it follows has succeeded).
    pub(crate) async fn composition_sync(&self, pm: &PodManager, driver: &Driver<'_>) {
        // Not while a node of the pod manager is being composed: what this reads before the
        // composition would unmake the node recorded after it.
        let lock = self.inner.compose_locks.of(&pm.uuid);
        let _held = lock.lock().await;
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
        let pm = self.pod_manager_load(uuid).await?;
        let driver = self.pod_manager_driver(&pm).await?;
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
        enum Wanted<'a> {
            Blocks(&'a [String]),
            Requirement(&'a podium_types::requests::CompositionRequirement),
        }
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
        let pm = self.pod_manager_load(uuid).await?;
        let driver = self.pod_manager_driver(&pm).await?;
        let lock = self.inner.compose_locks.of(uuid);
        let _held = lock.lock().await;
        let service = read(&pm, &driver).await?;
        let picked = match wanted {
            Wanted::Blocks(named) => {
                pick::check(&service, named).map_err(|refused| match refused {
                    pick::Refused::Taken(message) => Error::ConflictField {
                        code: "block_taken",
                        field: "blocks".into(),
                        message,
                    },
                    other => Error::invalid("blocks", other.to_string()),
                })?
            }
            Wanted::Requirement(need) => {
                pick::pick(&service, need).map_err(|refused| Error::ConflictField {
                    code: "no_blocks_fit",
                    field: "requirement".into(),
                    message: format!("pod manager `{}`: {refused}", pm.name),
                })?
            }
        };
        let system_id = driver
            .call()
            .compose(&params.name, &picked.blocks)
            .await
            .map_err(|e| match e {
                // A block composed meanwhile, by a client other than this process.
                CallError::Plugin {
                    error: PluginError::Conflict(message),
                    ..
                } => Error::ConflictField {
                    code: "block_taken",
                    field: "blocks".into(),
                    message: format!("the service refused the composition: {message}"),
                },
                other => Error::from(other),
            })?;
        tracing::info!(pod_manager = %pm.name, system = %system_id, zone = %picked.zone, blocks = ?picked.blocks, "composed a node");
        // The blocks are the node's now: a failure from here leaves the system composed, and
        // the next sync adds it as a host of kind `composed` (without this record of its
        // blocks; the service keeps them).
        let system = driver.call().inspect(&system_id).await?;
        let mut host = crate::data::host_from_system(&system);
        host.pod_manager = uuid.clone();
        host.kind = podium_types::HostKind::Composed;
        let register = OperationRow::queued(OperationRequest::Register, uuid, Some(&host.id));
        let id = self
            .datastore()
            .composed_node_add(
                &host,
                &picked.zone,
                &picked.blocks,
                &register,
                Timestamp::now(),
            )
            .await?;
        self.composed_node_view(caller, &id).await
    }

    /// The nodes composed at a pod manager, for an admin.
    pub async fn composed_node_list(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        page: Page,
    ) -> Result<List<ComposedNodeView>, Error> {
        caller.require_admin_read()?;
        self.pod_manager_load(uuid).await?;
        let paged = self.datastore().composed_node_list(uuid, &page).await?;
        let mut items = Vec::with_capacity(paged.items.len());
        for row in paged.items {
            let state = self.host_state(&row.host_id).await?;
            items.push(node(row, state));
        }
        Ok(List {
            items,
            next: paged.next,
        })
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
        let state = self.host_state(id).await?;
        Ok(node(row, state))
    }

    /// Decomposes a node (its blocks are free again) and removes its host. A node a claim
    /// holds is refused, naming the claim; a system the service no longer has is decomposed
    /// already.
    pub async fn composed_node_delete(&self, caller: &Caller, id: &HostId) -> Result<(), Error> {
        caller.require_admin()?;
        let row = self
            .datastore()
            .composed_node_get(id)
            .await?
            .ok_or_else(|| Error::not_found("composed node", id))?;
        if let Some(host) = self.datastore().host_get(id).await?
            && let Some(claim) = host.claim_id
        {
            return Err(claimed(&claim));
        }
        let pm = self.pod_manager_load(&row.pod_manager).await?;
        let driver = self.pod_manager_driver(&pm).await?;
        match driver.call().decompose(&row.system_id).await {
            Ok(()) => {}
            Err(CallError::Plugin {
                error: PluginError::NotFound(_),
                ..
            }) => {
                tracing::info!(pod_manager = %pm.name, system = %row.system_id, "the composed system was gone already");
            }
            Err(e) => return Err(Error::from(e)),
        }
        tracing::info!(pod_manager = %pm.name, system = %row.system_id, "decomposed a node");
        match self.datastore().composed_node_remove(id).await? {
            // A claim bound the host while the service decomposed it: the claim keeps a host
            // whose system is gone (its operations fail, as for a system removed at the BMC).
            Some(Err(claim)) => Err(claimed(&claim)),
            Some(Ok(())) | None => Ok(()),
        }
    }

    async fn host_state(&self, id: &HostId) -> Result<podium_types::HostState, Error> {
        Ok(self
            .datastore()
            .host_get(id)
            .await?
            .ok_or_else(|| Error::not_found("host", id))?
            .state)
    }
}

fn claimed(claim: &podium_types::ClaimId) -> Error {
    Error::Conflict {
        code: "host_claimed",
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
            code: "composition_unsupported",
            message: format!(
                "pod manager `{}` composes nothing: its driver has no composition (a Redfish \
                 service without a CompositionService, or a driver of contract 0.1.0)",
                pm.name
            ),
        },
        other => Error::from(other),
    })
}

fn node(row: ComposedNodeRow, state: podium_types::HostState) -> ComposedNodeView {
    ComposedNodeView {
        id: row.host_id,
        pod_manager: row.pod_manager,
        name: row.name,
        system_id: row.system_id,
        state,
        zone: row.zone,
        blocks: row.blocks,
        created_at: row.created_at,
    }
}

fn view(service: CompositionService) -> CompositionView {
    let state = |s: podium_runtime::CompositionState| {
        use podium_runtime::CompositionState as S;
        match s {
            S::Unused => "Unused",
            S::Composing => "Composing",
            S::Composed => "Composed",
            S::ComposedAndAvailable => "ComposedAndAvailable",
            S::Failed => "Failed",
            S::Unavailable => "Unavailable",
        }
        .to_owned()
    };
    CompositionView {
        blocks: service
            .blocks
            .into_iter()
            .map(|b| ResourceBlockView {
                block_types: b
                    .block_types
                    .iter()
                    .map(|t| pick::type_name(*t).to_owned())
                    .collect(),
                state: state(b.state),
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
                block_type: pick::type_name(l.block_type).to_owned(),
                min: l.min,
                max: l.max,
            })
            .collect(),
    }
}
