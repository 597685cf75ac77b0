//! Claims that compose (`compose: true`): where no free host matches such a claim, the bind
//! task composes a node for it, reserved to it (no other claim binds the node), and the claim
//! binds the node once it is available; a node whose claim holds another host, failed or is gone
//! is decomposed once its host is available (or in error, or missing) and unclaimed. The
//! reservation is in the database, so a restart loses neither.

use podium_types::requests::CompositionRequirement;
use podium_types::{ErrorCode, HostState, PodManagerId};

use super::Wanted;
use crate::app::Podium;
use crate::data::{ClaimRow, GrantRow, host_find, pod_manager_find};
use crate::error::Error;

/// What composing for a claim came to, in words for its tenant (never the pod manager's
/// blocks, systems or URL: those go to the log).
pub(crate) enum Composing {
    /// A node is being composed, or nothing fits now: the claim waits.
    Waits(String),
    /// Nothing can ever be composed for it here (its grant's reach, a driver that composes
    /// nothing): it waits for a host as any claim, or fails where none matches it.
    Impossible(String),
    /// The node composed for it does not match it: composing again would give the same.
    Failed(String),
}

/// What one bind run learnt of compositions: the requirements (CPUs, MiB) that found no
/// blocks at each pod manager. A claim asking at least as much at that pod manager waits
/// without the service being read again in the run (a hundred claims waiting for blocks read
/// it once a run, not a hundred times).
#[derive(Debug, Default)]
pub(crate) struct ComposeRun {
    unfit: std::collections::HashMap<PodManagerId, Vec<(i64, i64)>>,
}

impl ComposeRun {
    fn known_unfit(&self, pm: &PodManagerId, cpus: i64, memory_mib: i64) -> bool {
        self.unfit
            .get(pm)
            .is_some_and(|needs| needs.iter().any(|&(c, m)| cpus >= c && memory_mib >= m))
    }
}

impl Podium {
    /// Composes a node for a pending claim no free host matches, unless one was composed for
    /// it already; says why the claim still waits, or why it fails.
    pub(crate) async fn claim_compose(
        &self,
        claim: &ClaimRow,
        grant: &GrantRow,
        run: &mut ComposeRun,
    ) -> Result<Composing, Error> {
        let id = &claim.id;
        if !grant.selector.is_empty() || grant.chassis.is_some() {
            return Ok(Composing::Impossible(
                "its tenant's grant reaches only hosts with its labels or in its chassis, which \
                 a composed node is not, so none is composed for it"
                    .into(),
            ));
        }
        let Some(pm) = pod_manager_find(self.datastore(), &claim.pod_manager).await? else {
            return Ok(Composing::Waits("the claim's pod manager is gone".into()));
        };
        let driver = match self.drivers().pod_manager(&pm).await {
            Ok(driver) => driver,
            Err(e) => {
                tracing::warn!(claim = %id, pod_manager = %pm.name, error = %e, "cannot compose a node for a claim");
                return Ok(Composing::Waits(COMPOSE_FAILED.into()));
            }
        };
        let _held = self.compose_lock(&pm.uuid).await;
        // Under the lock: a bind task of this process composing for it meanwhile has recorded
        // its node.
        if let Some(node) = self.datastore().composed_node_of_claim(id).await? {
            let host = host_find(self.datastore(), &node.host_id).await?;
            let free = |h: &crate::data::Host| {
                h.state == HostState::Available && h.claim_id.is_none() && h.maintenance.is_none()
            };
            return Ok(match host {
                // Available since the claim looked for free hosts: it binds on the next try.
                Some(h)
                    if free(&h)
                        && h.cpu_count >= claim.min_cpu
                        && h.memory_mib >= claim.min_memory_mib =>
                {
                    self.inner.background.run_now(crate::tasks::Job::Bind);
                    Composing::Waits(
                        "a node composed for the claim is available: the claim binds it next"
                            .into(),
                    )
                }
                // Free and short of what the claim asks, as its BMC reports it: composing
                // again would give the same. It is decomposed once the claim has failed.
                Some(h) if free(&h) => {
                    tracing::info!(claim = %id, host = %h.id, cpus = h.cpu_count, memory_mib = h.memory_mib, "the node composed for a claim does not match it");
                    Composing::Failed(format!(
                        "the node composed for the claim does not match it: its BMC reports {} \
                         CPUs and {} MiB of memory",
                        h.cpu_count, h.memory_mib
                    ))
                }
                Some(h) if matches!(h.state, HostState::Error | HostState::Missing) => {
                    Composing::Waits(format!(
                        "the node composed for the claim is {}: it waits for an admin to repair \
                         or delete that node, after which another is composed",
                        h.state
                    ))
                }
                _ => Composing::Waits(format!(
                    "no free host matched the claim: a node was composed for it, whose host is \
                     {}; the claim binds it once it is available",
                    node.state
                )),
            });
        }
        // The grant's limit counts the nodes composed for the tenant's other waiting claims:
        // a tenant at its limit has no more composed.
        if let Some(max) = grant.max_hosts {
            let held = self
                .datastore()
                .claims_holding_hosts(&claim.tenant_id, &claim.pod_manager)
                .await?;
            let reserved = self
                .datastore()
                .composed_nodes_reserved_to_waiting(&claim.tenant_id, &claim.pod_manager)
                .await?;
            if held + reserved >= max {
                return Ok(Composing::Waits(format!(
                    "the grant allows {max} hosts at once, and the tenant's claims hold or have \
                     nodes composed for that many: none is composed for this one now"
                )));
            }
        }
        let asked = (claim.min_cpu.max(1), claim.min_memory_mib);
        if run.known_unfit(&pm.uuid, asked.0, asked.1) {
            return Ok(Composing::Waits(NO_BLOCKS_FIT.into()));
        }
        let need = CompositionRequirement {
            processors: Some(u32::try_from(claim.min_cpu.max(1)).unwrap_or(u32::MAX)),
            memory_mib: (claim.min_memory_mib > 0)
                .then(|| u64::try_from(claim.min_memory_mib).unwrap_or(u64::MAX)),
            ..CompositionRequirement::default()
        };
        let name = format!("claim-{id}");
        Ok(
            match self
                .compose_locked(&pm, &driver, &name, Wanted::Requirement(&need), Some(id))
                .await
            {
                Ok(host) => {
                    tracing::info!(claim = %id, host = %host, "composed a node for a claim");
                    Composing::Waits(
                        "no free host matched the claim: a node is being composed for it; the \
                         claim binds it once it is available"
                            .into(),
                    )
                }
                Err(Error::ConflictField { code, message, .. })
                    if code == ErrorCode::NoBlocksFit || code == ErrorCode::BlockTaken =>
                {
                    tracing::info!(claim = %id, %message, "no node can be composed for a claim");
                    run.unfit.entry(pm.uuid.clone()).or_default().push(asked);
                    Composing::Waits(NO_BLOCKS_FIT.into())
                }
                Err(Error::Conflict {
                    code: ErrorCode::CompositionUnsupported,
                    ..
                }) => Composing::Impossible("its pod manager composes no nodes".into()),
                Err(e) => {
                    tracing::warn!(claim = %id, pod_manager = %pm.name, error = %e, "cannot compose a node for a claim");
                    Composing::Waits(COMPOSE_FAILED.into())
                }
            },
        )
    }

    /// Decomposes every node composed for a claim that no longer wants it (the claim holds
    /// another host, failed, or is gone) whose host is unclaimed and available, in error or
    /// missing; answers how many, and how many failed (tried again on the next run).
    pub(crate) async fn composed_nodes_reap(&self) -> Result<(usize, usize), Error> {
        let unwanted = self.datastore().composed_nodes_unwanted().await?;
        let (mut decomposed, mut failed) = (0, 0);
        for node in &unwanted {
            match self.decompose(node).await {
                Ok(()) => {
                    tracing::info!(host = %node.host_id, claim = ?node.claim, "decomposed a node its claim no longer wants");
                    decomposed += 1;
                }
                // Gone meanwhile, or held by an admin's maintenance: not this run's.
                Err(Error::NotFound { .. }) => {}
                Err(e) => {
                    tracing::warn!(host = %node.host_id, error = %e, "cannot decompose a node its claim no longer wants");
                    failed += 1;
                }
            }
        }
        Ok((decomposed, failed))
    }
}

/// Why a claim waits when the free blocks cannot make its node.
const NO_BLOCKS_FIT: &str = "no free host matches the claim, and the pod manager's free resource \
     blocks cannot make a node that does: waiting for a host or blocks to free up";

/// Why a claim waits when composing for it failed (the reason, with the pod manager's
/// details, is in the log).
const COMPOSE_FAILED: &str =
    "no free host matches the claim, and composing a node for it failed: will try again";
