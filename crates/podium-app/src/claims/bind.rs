//! Binding a pending claim to a host: the hosts its grant and its own criteria allow, the
//! grant's limit of hosts at once, and, where the claim brings its own networkData (policy
//! `consumer`), whether that fits a host (the renderer is asked). The datastore answers the
//! candidates and makes the one conditional change, the bind, which holds only if the claim,
//! the host and the grant are still as they were read; the rules and the tries are here.

use crate::data::{
    Bind, BindOutcome, ClaimRow, GrantRow, HostCriteria, PodManager, Spread, host_find,
    pod_manager_find,
};
use podium_runtime::{ConsumerInput, NetworkPolicy};
use podium_types::{ClaimId, ClaimState, HostId, TenantScope};

use crate::app::Podium;
use crate::composition::{ComposeRun, Composing};
use crate::error::Error;
use crate::tasks::Outcome;

/// The most hosts one bind checks a claim's networkData against.
const FIT_CHECKS: usize = 32;

/// Candidates read at once where no networkData needs checking: the next ones where another
/// bind took the first.
const CANDIDATES: u32 = 8;

/// How often a bind may lose its candidates to other binds (or find its claim changed) before
/// the claim waits for the next try.
const CONTENDED_TRIES: usize = 5;

/// Why a pending claim did not bind.
#[derive(Debug)]
enum Unbound {
    /// The claim no longer exists.
    Gone,
    /// It is no longer pending and holds no host; its stored reason says why.
    Settled(Option<String>),
    /// The tenant has no grant for the claim's pod manager (any more).
    NoGrant,
    /// No host of the pod manager matches the claim and its grant, free or not.
    NoMatch,
    /// The grant's limit of hosts at once is reached.
    AtLimit { max: i64 },
    /// Matching hosts exist, but none is free (with the NICs `macs`, where the claim's
    /// networkData names some), or none of those tried fits its networkData (`unfit`: the
    /// last one's reason).
    NoneFree {
        macs: Vec<String>,
        unfit: Option<String>,
        /// The claim's spread group, which leaves out the racks the group holds hosts of.
        spread: Option<String>,
    },
    /// Its networkData fits none of the `tried` free matching hosts; `last` says why not.
    FitsNone { tried: usize, last: String },
    /// Other binds kept taking the hosts it found.
    Contended,
    /// No free host matches a claim that composes (`compose: true`): a node is to be composed
    /// for it. `any_match`: whether any host matches it, free or not (where nothing can be
    /// composed for it, the claim fails as any claim nothing matches). The claim and its grant
    /// as the bind read them, for the composition.
    Compose {
        any_match: bool,
        claim: Box<ClaimRow>,
        grant: Box<GrantRow>,
    },
}

impl Unbound {
    /// What a claim that did not bind becomes, and the reason its tenant reads: `pending` while
    /// a host may still free up, `failed` when nothing granted could ever match.
    fn reason(self) -> (ClaimState, String) {
        use ClaimState::{Failed, Pending};
        match self {
            Unbound::Gone => (Failed, "the claim no longer exists".into()),
            Unbound::Settled(reason) => (Failed, reason.unwrap_or_default()),
            Unbound::NoGrant => (
                Failed,
                "the tenant has no grant for this pod manager (any more)".into(),
            ),
            Unbound::NoMatch => (
                Failed,
                "no host of this pod manager matches the claim and its grant (labels, CPU, \
                 memory)"
                    .into(),
            ),
            Unbound::AtLimit { max } => (
                Pending,
                format!("the grant allows {max} hosts at once and all are in use"),
            ),
            Unbound::NoneFree {
                unfit: Some(why), ..
            } => (
                Pending,
                format!(
                    "no free matching host fits the claim's network_data; the last one tried: \
                     {why}"
                ),
            ),
            Unbound::NoneFree {
                macs, unfit: None, ..
            } if !macs.is_empty() => (
                Pending,
                format!(
                    "no free matching host has the NICs its network_data names ({}); waiting \
                     for one",
                    macs.join(", ")
                ),
            ),
            Unbound::NoneFree {
                spread: Some(group),
                ..
            } => (
                Pending,
                format!(
                    "every matching host is claimed, not available, of no known rack, or in a \
                     rack where another claim of spread group `{group}` holds a host; waiting \
                     for one"
                ),
            ),
            Unbound::NoneFree { .. } => (
                Pending,
                "every matching host is claimed or not available; waiting for one".into(),
            ),
            Unbound::FitsNone { tried, last } => (
                Pending,
                format!(
                    "the claim's network_data fits none of the {tried} free matching hosts \
                     tried; the last: {last}"
                ),
            ),
            Unbound::Contended => (Pending, "contended; will try again".into()),
            Unbound::Compose { .. } => (
                Pending,
                "no free host matches the claim: a node is to be composed for it".into(),
            ),
        }
    }
}

/// What a claim's own networkData must fit in a host (policy `consumer`): the renderer checks
/// it against the host's NICs, and only hosts with a NIC of each MAC it names are candidates.
struct Fit {
    pm: PodManager,
    input: ConsumerInput,
    macs: Vec<String>,
}

/// The MACs of the `phy` links of an OpenStack `network_data.json` (lower-case): a host must
/// have a NIC of each for the document to fit it.
pub(super) fn phy_macs(network_data: &str) -> Vec<String> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(network_data) else {
        return Vec::new();
    };
    let mut macs: Vec<String> = doc["links"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["type"] == "phy")
        .filter_map(|l| l["ethernet_mac_address"].as_str())
        .map(str::to_ascii_lowercase)
        .filter(|m| m.len() == 17 && m.bytes().all(|b| b.is_ascii_hexdigit() || b == b':'))
        .collect();
    macs.sort();
    macs.dedup();
    macs
}

impl Podium {
    /// Tries to bind a pending claim; records why it waits or failed. A claim that composes
    /// and finds no free host has a node composed for it here when given the bind run's
    /// `compose`, else the bind task is woken to (a request does not wait on a composition).
    pub(crate) async fn claim_try_bind(
        &self,
        id: &ClaimId,
        compose: Option<&mut ComposeRun>,
    ) -> Result<(), Error> {
        match (self.claim_bind(id).await?, compose) {
            (Ok(host), _) => {
                tracing::info!(claim = %id, host = %host, "claim bound");
                self.claim_hold_addresses(id).await;
                let claim = self.datastore().claim_get(TenantScope::Every, id).await?;
                if let Some(claim) = claim.filter(|c| c.online) {
                    self.claim_provision(&claim).await?;
                }
            }
            (
                Err(Unbound::Compose {
                    any_match,
                    claim,
                    grant,
                }),
                Some(run),
            ) => {
                let (state, reason) = match self.claim_compose(&claim, &grant, run).await? {
                    Composing::Waits(reason) => (ClaimState::Pending, reason),
                    // Nothing can be composed for it: as any claim, it waits while a host
                    // matches it, and fails where none ever could.
                    Composing::Impossible(why) if any_match => (ClaimState::Pending, why),
                    Composing::Impossible(why) => {
                        let (state, reason) = Unbound::NoMatch.reason();
                        (state, format!("{reason}; {why}"))
                    }
                    Composing::Failed(reason) => (ClaimState::Failed, reason),
                };
                self.datastore()
                    .claim_set_unbound(id, state, &reason, podium_types::Timestamp::now())
                    .await?;
            }
            (Err(unbound), _) => {
                if matches!(unbound, Unbound::Compose { .. }) {
                    self.inner.background.run_now(crate::tasks::Job::Bind);
                }
                let (state, reason) = unbound.reason();
                self.datastore()
                    .claim_set_unbound(id, state, &reason, podium_types::Timestamp::now())
                    .await?;
            }
        }
        Ok(())
    }

    /// The `bind` task: every pending claim tried against the hosts free now (on a timer, and
    /// at once whenever a host becomes free); then the nodes composed for claims that no longer
    /// want them decomposed.
    pub(crate) async fn claims_bind_pending(&self) -> Result<Outcome, Error> {
        let pending = self.datastore().claims_pending().await?;
        let mut failed = 0;
        let mut run = ComposeRun::default();
        for id in &pending {
            if let Err(e) = self.claim_try_bind(id, Some(&mut run)).await {
                tracing::warn!(claim = %id, error = %e, "binding failed");
                failed += 1;
            }
        }
        // Then the nodes no claim wants any more; their blocks may make the node a pending
        // claim needs, on the run a decomposition asks for.
        let (decomposed, not_decomposed) = self.composed_nodes_reap().await?;
        Ok(
            Outcome::new(format!("{} pending claims tried", pending.len()))
                .count("tried", pending.len())
                .count("failed", failed)
                .count("decomposed", decomposed)
                .count("not_decomposed", not_decomposed),
        )
    }

    /// Binds a pending claim to a free host its grant and its own criteria allow, within the
    /// grant's limit, that its networkData fits; or says why not.
    async fn claim_bind(&self, id: &ClaimId) -> Result<Result<HostId, Unbound>, Error> {
        let mut unfit: Vec<HostId> = Vec::new();
        let mut why_unfit: Option<String> = None;
        let mut contended = 0;
        while contended < CONTENDED_TRIES {
            let Some(claim) = self.datastore().claim_get(TenantScope::Every, id).await? else {
                return Ok(Err(Unbound::Gone));
            };
            if claim.state != ClaimState::Pending {
                return Ok(match claim.host_id {
                    Some(host) => Ok(host),
                    None => Err(Unbound::Settled(claim.reason)),
                });
            }
            let Some(grant) = self
                .datastore()
                .grant_of(&claim.tenant_id, &claim.pod_manager)
                .await?
            else {
                return Ok(Err(Unbound::NoGrant));
            };
            let mut labels = grant.selector.clone();
            labels.extend(claim.selector.clone());
            let chassis: Vec<_> = grant
                .chassis
                .iter()
                .chain(&claim.chassis)
                .cloned()
                .collect();
            let fit = self.claim_fit(&claim).await?;
            let macs = fit.as_ref().map(|f| f.macs.clone()).unwrap_or_default();
            let any = HostCriteria {
                pod_manager: &claim.pod_manager,
                min_cpu: claim.min_cpu,
                min_memory_mib: claim.min_memory_mib,
                labels: &labels,
                macs: &[],
                chassis: &chassis,
                spread: None,
                claim: &claim.id,
            };
            // A claim that composes may match no host yet: a node is composed for it.
            let any_match = self.datastore().hosts_matching_any(any).await?;
            if !claim.compose && !any_match {
                return Ok(Err(Unbound::NoMatch));
            }
            if let Some(max) = grant.max_hosts
                && self
                    .datastore()
                    .claims_holding_hosts(&claim.tenant_id, &claim.pod_manager)
                    .await?
                    >= max
            {
                return Ok(Err(Unbound::AtLimit { max }));
            }
            // The group's racks are left out of the free hosts only: a host of a rack the group
            // holds may still free up for it.
            let free = HostCriteria {
                macs: &macs,
                spread: claim.spread.as_deref().map(|group| Spread {
                    tenant: &claim.tenant_id,
                    claim: &claim.id,
                    group,
                }),
                ..any
            };
            let limit = match fit {
                Some(_) => u32::try_from(FIT_CHECKS - unfit.len()).unwrap_or(1),
                None => CANDIDATES,
            };
            let candidates = self
                .datastore()
                .hosts_free_matching(free, &unfit, limit)
                .await?;
            if candidates.is_empty() {
                if claim.compose {
                    return Ok(Err(Unbound::Compose {
                        any_match,
                        claim: Box::new(claim),
                        grant: Box::new(grant),
                    }));
                }
                return Ok(Err(Unbound::NoneFree {
                    macs,
                    unfit: why_unfit,
                    spread: claim.spread.clone(),
                }));
            }
            let mut lost = false;
            for host in candidates {
                if let Some(fit) = &fit
                    && let Some(why) = self.claim_fits(&claim, fit, &host).await?
                {
                    why_unfit = Some(why);
                    unfit.push(host);
                    if unfit.len() >= FIT_CHECKS {
                        return Ok(Err(Unbound::FitsNone {
                            tried: FIT_CHECKS,
                            last: why_unfit.unwrap_or_default(),
                        }));
                    }
                    continue;
                }
                let bind = Bind {
                    claim: &claim.id,
                    claim_read_at: claim.updated_at,
                    tenant: &claim.tenant_id,
                    pod_manager: &claim.pod_manager,
                    host: &host,
                    max_held: grant.max_hosts,
                    spread: claim.spread.as_deref(),
                };
                match self
                    .datastore()
                    .claim_bind_host(&bind, podium_types::Timestamp::now())
                    .await?
                {
                    BindOutcome::Bound => return Ok(Ok(host)),
                    BindOutcome::HostTaken | BindOutcome::RackTaken => lost = true,
                    // Changed meanwhile (its networkData, or bound or released by another):
                    // read it again.
                    BindOutcome::ClaimChanged => {
                        lost = true;
                        break;
                    }
                    BindOutcome::AtLimit => {
                        return Ok(Err(Unbound::AtLimit {
                            max: grant.max_hosts.unwrap_or_default(),
                        }));
                    }
                    BindOutcome::NoGrant => return Ok(Err(Unbound::NoGrant)),
                }
            }
            // Candidates that did not fit are not tried again; those taken by others are
            // looked for anew, a few times.
            if lost {
                contended += 1;
            }
        }
        Ok(Err(Unbound::Contended))
    }

    /// Where a claim brings networkData that names the host's NICs (policy `consumer`), what
    /// a host must fit for the claim to bind to it.
    async fn claim_fit(&self, claim: &ClaimRow) -> Result<Option<Fit>, Error> {
        let Some(network_data) = &claim.network_data else {
            return Ok(None);
        };
        let Some(pm) = pod_manager_find(self.datastore(), &claim.pod_manager).await? else {
            return Ok(None);
        };
        if crate::rendering::policy_of(&pm) != NetworkPolicy::Consumer {
            return Ok(None);
        }
        Ok(Some(Fit {
            input: crate::rendering::consumer_input(Some(network_data), claim.meta_data.as_deref()),
            macs: phy_macs(network_data),
            pm,
        }))
    }

    /// Whether the claim's networkData fits a host: `None` when it does, else why not, in words
    /// for its tenant (the details name the host's NICs: they go to the admin's log).
    async fn claim_fits(
        &self,
        claim: &ClaimRow,
        fit: &Fit,
        host: &HostId,
    ) -> Result<Option<String>, Error> {
        let Some(host) = host_find(self.datastore(), host).await? else {
            return Ok(Some("a candidate host is gone".to_owned()));
        };
        match self
            .consumer_input_check(&fit.pm, Some(&host), &fit.input)
            .await
        {
            Ok(()) => Ok(None),
            Err(Error::Invalid { field, message }) => {
                tracing::info!(claim = %claim.id, host = %host.id, ?field, %message,
                    "the claim's network_data does not fit a host");
                Ok(Some(format!(
                    "it does not fit a free host ({})",
                    field.as_deref().unwrap_or("network_data")
                )))
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::phy_macs;

    #[test]
    fn the_macs_a_claim_names_are_its_phy_links_lower_cased_once_each() {
        let doc = r#"{"links": [
            {"id": "a", "type": "phy", "ethernet_mac_address": "52:54:00:AA:00:01"},
            {"id": "b", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:01"},
            {"id": "c", "type": "bond", "ethernet_mac_address": "52:54:00:aa:00:02"},
            {"id": "d", "type": "phy", "ethernet_mac_address": "not a mac"}]}"#;
        assert_eq!(phy_macs(doc), ["52:54:00:aa:00:01"]);
        assert!(phy_macs("not json").is_empty());
    }
}
