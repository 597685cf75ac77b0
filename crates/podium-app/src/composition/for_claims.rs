//! Claims that compose (`compose: true`): where no free host matches such a claim, the bind
//! task composes a node for it, reserved to it (no other claim binds the node), and the claim
//! binds the node once it is available; a node whose claim holds another host or is gone is
//! decomposed once its host is available and unclaimed again. The reservation is in the
//! database, so a restart loses neither.

use podium_types::requests::CompositionRequirement;
use podium_types::{ClaimId, TenantScope};

use super::Wanted;
use crate::app::Podium;
use crate::error::Error;

impl Podium {
    /// Composes a node for a pending claim no free host matches, unless one was composed for
    /// it already; answers why the claim still waits, in words for its tenant (never the pod
    /// manager's blocks or systems: those go to the log).
    pub(crate) async fn claim_compose(&self, id: &ClaimId) -> Result<String, Error> {
        let Some(claim) = self.datastore().claim_get(TenantScope::Every, id).await? else {
            return Ok("the claim no longer exists".into());
        };
        let Some(grant) = self
            .datastore()
            .grant_of(&claim.tenant_id, &claim.pod_manager)
            .await?
        else {
            return Ok("the tenant has no grant for this pod manager (any more)".into());
        };
        if !grant.selector.is_empty() || grant.chassis.is_some() {
            return Ok(
                "no free host matches the claim; its tenant's grant reaches only hosts \
                 with its labels or in its chassis, which a composed node is not, so none is \
                 composed: waiting for a host to free up"
                    .into(),
            );
        }
        let Some(pm) = self.pod_manager_find(&claim.pod_manager).await? else {
            return Ok("the claim's pod manager is gone".into());
        };
        let driver = match self.pod_manager_driver(&pm).await {
            Ok(driver) => driver,
            Err(e) => {
                tracing::warn!(claim = %id, pod_manager = %pm.name, error = %e, "cannot compose a node for a claim");
                return Ok(COMPOSE_FAILED.into());
            }
        };
        let _held = self.compose_lock(&pm.uuid).await;
        // Under the lock: a bind task of this process composing for it meanwhile has recorded
        // its node.
        if let Some(node) = self.datastore().composed_node_of_claim(id).await? {
            return Ok(format!(
                "no free host matched the claim: a node was composed for it, whose host is \
                 {}; the claim binds it once it is available",
                node.state
            ));
        }
        let need = CompositionRequirement {
            processors: Some(u32::try_from(claim.min_cpu.max(1)).unwrap_or(u32::MAX)),
            memory_mib: (claim.min_memory_mib > 0)
                .then(|| u64::try_from(claim.min_memory_mib).unwrap_or(u64::MAX)),
            ..CompositionRequirement::default()
        };
        let name = format!("claim-{id}");
        match self
            .compose_locked(&pm, &driver, &name, Wanted::Requirement(&need), Some(id))
            .await
        {
            Ok(host) => {
                tracing::info!(claim = %id, host = %host, "composed a node for a claim");
                Ok(
                    "no free host matched the claim: a node is being composed for it; the claim \
                    binds it once it is available"
                        .into(),
                )
            }
            Err(Error::ConflictField { code, message, .. })
                if code == "no_blocks_fit" || code == "block_taken" =>
            {
                tracing::info!(claim = %id, %message, "no node can be composed for a claim");
                Ok(
                    "no free host matches the claim, and the pod manager's free resource \
                    blocks cannot make a node that does: waiting for a host or blocks to free up"
                        .into(),
                )
            }
            Err(Error::Conflict {
                code: "composition_unsupported",
                ..
            }) => Ok(
                "no free host matches the claim, and its pod manager composes no nodes: \
                    waiting for a host to free up"
                    .into(),
            ),
            Err(e) => {
                tracing::warn!(claim = %id, pod_manager = %pm.name, error = %e, "cannot compose a node for a claim");
                Ok(COMPOSE_FAILED.into())
            }
        }
    }

    /// Decomposes every node composed for a claim that no longer wants it (the claim holds
    /// another host, failed, or is gone) whose host is available and unclaimed again; answers
    /// how many, and how many failed (tried again on the next run).
    pub(crate) async fn composed_nodes_reap(&self) -> Result<(usize, usize), Error> {
        let unwanted = self.datastore().composed_nodes_unwanted().await?;
        let mut failed = 0;
        for node in &unwanted {
            match self.decompose(node).await {
                Ok(()) => {
                    tracing::info!(host = %node.host_id, claim = ?node.claim, "decomposed a node its claim no longer wants")
                }
                Err(Error::NotFound { .. }) => {}
                Err(e) => {
                    tracing::warn!(host = %node.host_id, error = %e, "cannot decompose a node its claim no longer wants");
                    failed += 1;
                }
            }
        }
        Ok((unwanted.len() - failed, failed))
    }
}

/// Why a claim waits when composing for it failed (the reason, with the pod manager's
/// details, is in the log).
const COMPOSE_FAILED: &str =
    "no free host matches the claim, and composing a node for it failed: will try again";
