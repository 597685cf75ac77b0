//! The host lifecycle (`docs/host-lifecycle.md`): the states a host goes through, which actions
//! each allows, and the operations that move it: `register` (the BMC answers for the system),
//! `inspect` (the DHCP-less preprovisioning prepared, then the inventory read out of band),
//! and maintenance, which the admin lays over any state.
//!
//! Every change of state is a conditional update from the states it may come from (the
//! `transition` constants), so two things racing (an operation ending, a release) cannot
//! undo each other; a change that starts an operation stores both in one transaction.
//!
//! **Architecture Invariant:** this module is the only writer of a host's state. Other
//! features ask it (`Podium::lifecycle`, a step per method: `registered`, `provisioned`,
//! `gone`, ...); `tests/all/tidy.rs` fails on a call of one of the store's state writers
//! anywhere else in the app.

use crate::app::Podium;
use crate::data::{Host, OperationRow};
use crate::error::Error;
use podium_types::ErrorCode;
use podium_types::HostId;
use podium_types::{HostErrorKind, HostState, OperationKind, OperationRequest};

use crate::data::{Datastore, HostRow, Transition};
use podium_types::{ClaimId, PodManagerId, PowerState, SyncSummary, TenantId, Timestamp};

/// `register` succeeded.
const REGISTERED: Transition<'static> = Transition {
    from: &[HostState::Registering],
    to: HostState::Inspecting,
    unclaimed: false,
};
/// `inspect` succeeded.
const INSPECTED: Transition<'static> = Transition {
    from: &[HostState::Inspecting],
    to: HostState::Available,
    unclaimed: false,
};
/// The admin asks for an inspection (a host whose registration failed registers again first).
const REINSPECT: Transition<'static> = Transition {
    from: &[HostState::Available, HostState::Error],
    to: HostState::Inspecting,
    unclaimed: true,
};
const REREGISTER: Transition<'static> = Transition {
    from: &[HostState::Error],
    to: HostState::Registering,
    unclaimed: true,
};
/// The admin gave the host's own BMC new credentials.
const REREGISTER_WITH: Transition<'static> = Transition {
    from: &[HostState::Available, HostState::Error],
    to: HostState::Registering,
    unclaimed: true,
};
/// A bound claim is (or comes) online.
const PROVISION: Transition<'static> = Transition {
    from: &[HostState::Available, HostState::Error],
    to: HostState::Provisioning,
    unclaimed: false,
};
/// The states a host is provisioned from, for a refusal to name.
pub(crate) const PROVISION_FROM: &[HostState] = PROVISION.from;
const PROVISIONED: Transition<'static> = Transition {
    from: &[HostState::Provisioning],
    to: HostState::Provisioned,
    unclaimed: false,
};
/// The claim is released (a host gone from the inventory stays `missing`).
const DEPROVISION: Transition<'static> = Transition {
    from: &[
        HostState::Registering,
        HostState::Inspecting,
        HostState::Available,
        HostState::Provisioning,
        HostState::Provisioned,
        HostState::Deprovisioning,
        HostState::Error,
    ],
    to: HostState::Deprovisioning,
    unclaimed: false,
};

/// `deprovision` succeeded (`claim_finish_release` frees the host and deletes the claim in one
/// transaction).
const DEPROVISIONED: Transition<'static> = Transition {
    from: &[HostState::Deprovisioning],
    to: HostState::Available,
    unclaimed: false,
};

/// Why an operation of `kind` that failed for good puts its host in `error`, and from which
/// states; `None` for the operations whose failure leaves the host as it was (boot, media,
/// sync).
fn failure(kind: OperationKind) -> Option<(HostErrorKind, &'static [HostState])> {
    match kind {
        OperationKind::Register => Some((HostErrorKind::Registration, &[HostState::Registering])),
        OperationKind::Inspect => Some((HostErrorKind::Inspection, &[HostState::Inspecting])),
        OperationKind::Provision => Some((HostErrorKind::Provisioning, &[HostState::Provisioning])),
        OperationKind::Deprovision => {
            Some((HostErrorKind::Deprovisioning, &[HostState::Deprovisioning]))
        }
        // A host already in error keeps the error it has.
        OperationKind::Power => Some((
            HostErrorKind::PowerManagement,
            &[HostState::Available, HostState::Provisioned],
        )),
        OperationKind::Sync
        | OperationKind::Boot
        | OperationKind::Media
        | OperationKind::Bios
        | OperationKind::SecureBoot
        | OperationKind::FirmwareUpdate => None,
    }
}

/// What someone asks of a host, checked against its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostAction {
    Power,
    Boot,
    Media,
    /// A change of its BIOS settings or secure boot, or a reset of the BIOS.
    Firmware,
    Inspect,
    /// A tenant's power change through its claim (`online`).
    TenantPower,
    /// A tenant's power, boot or media action on its claimed host through the Redfish face.
    TenantRedfish,
    /// A tenant's change of its claimed host's BIOS settings, secure boot or firmware, within
    /// what the site lets tenants change.
    TenantFirmware,
}

impl HostAction {
    fn name(self) -> &'static str {
        match self {
            HostAction::Power => "power",
            HostAction::Boot => "boot",
            HostAction::Media => "media",
            HostAction::Firmware => "firmware settings",
            HostAction::Inspect => "inspect",
            HostAction::TenantPower => "power (through its claim)",
            HostAction::TenantRedfish => "Redfish (a tenant's, on its claimed host)",
            HostAction::TenantFirmware => "firmware settings (a tenant's, on its claimed host)",
        }
    }

    /// The states (as the API shows them: `maintenance` over any) that allow it.
    fn allowed_in(self) -> &'static [ShownState] {
        use ShownState::{In, Maintenance};
        match self {
            HostAction::Power | HostAction::Boot | HostAction::Media | HostAction::Firmware => &[
                In(HostState::Available),
                In(HostState::Provisioned),
                In(HostState::Error),
                Maintenance,
            ],
            HostAction::Inspect => &[In(HostState::Available), In(HostState::Error)],
            HostAction::TenantPower | HostAction::TenantRedfish | HostAction::TenantFirmware => &[
                In(HostState::Available),
                In(HostState::Provisioned),
                In(HostState::Error),
            ],
        }
    }
}

use crate::views::shown_state;
use podium_types::ShownState;

/// Whether `action` fits the host's state: a 409 that names the state and the states that
/// allow it if not.
pub(crate) fn action_allowed(host: &Host, action: HostAction) -> Result<(), Error> {
    let state = shown_state(host);
    let allowed = action.allowed_in();
    if !allowed.contains(&state) {
        return Err(Error::Conflict {
            code: ErrorCode::HostBusy,
            message: format!(
                "host `{}` is {state}: a {} action is allowed when it is {}",
                host.id,
                action.name(),
                allowed
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    if action == HostAction::Inspect && host.claim_id.is_some() {
        return Err(Error::Conflict {
            code: ErrorCode::HostClaimed,
            message: format!(
                "host `{}` is held by a claim: it is inspected only while no claim holds it",
                host.id
            ),
        });
    }
    Ok(())
}

/// The lifecycle's steps, each a conditional change of a host's state (and what it queues, in
/// the same transaction): the one way a host's state changes.
pub(crate) struct Lifecycle<'a> {
    store: &'a Datastore,
}

impl Podium {
    /// The lifecycle, to move a host through it.
    pub(crate) fn lifecycle(&self) -> Lifecycle<'_> {
        Lifecycle {
            store: self.datastore(),
        }
    }
}

impl Lifecycle<'_> {
    /// A discovery of `pod_manager`'s systems: new ones are hosts `registering`, each with its
    /// `register` queued; known ones are updated (a `missing` one returns to the state it had);
    /// those not reported are `missing`, except hosts with their own BMC and hosts in
    /// maintenance.
    pub(crate) async fn discovered(
        &self,
        pod_manager: &PodManagerId,
        hosts: &[HostRow],
        discovered_at: Timestamp,
    ) -> Result<SyncSummary, Error> {
        Ok(self
            .store
            .hosts_sync(
                pod_manager,
                hosts,
                discovered_at,
                Timestamp::now(),
                &OperationRequest::Register,
            )
            .await?)
    }

    /// A node composed of `blocks` in `zone` (for `claim`, where one asked): its host
    /// `registering`, with its `register` queued, and the node recorded, in one transaction.
    pub(crate) async fn composed(
        &self,
        host: &HostRow,
        zone: &str,
        blocks: &[String],
        claim: Option<&ClaimId>,
    ) -> Result<HostId, Error> {
        let register = OperationRow::queued(
            OperationRequest::Register,
            &host.pod_manager,
            Some(&host.id),
        );
        Ok(self
            .store
            .composed_node_add(host, zone, blocks, claim, &register, Timestamp::now())
            .await?)
    }

    /// A host with its own BMC added by the admin: `registering`, with its `register` queued.
    /// `false` where the pod manager has a host for the system at this BMC already.
    pub(crate) async fn added(&self, host: &HostRow) -> Result<bool, Error> {
        let register = OperationRow::queued(
            OperationRequest::Register,
            &host.pod_manager,
            Some(&host.id),
        );
        match self.store.host_create(host, &register).await {
            Ok(()) => Ok(true),
            Err(e) if crate::data::is_conflict(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// A host's own BMC answered a read of its system, begun at `now`: its inventory written
    /// where it changed (a `missing` host returns to the state it had, unless in maintenance).
    pub(crate) async fn refreshed(
        &self,
        id: &HostId,
        read: &HostRow,
        now: Timestamp,
    ) -> Result<bool, Error> {
        Ok(self.store.host_refresh(id, read, now).await?)
    }

    /// A host's own BMC answered its power state, read from `read_from` (a `missing` host
    /// returns to the state it had, unless in maintenance).
    pub(crate) async fn power_read(
        &self,
        id: &HostId,
        power: PowerState,
        read_from: Timestamp,
    ) -> Result<bool, Error> {
        Ok(self
            .store
            .host_power_read(id, power, read_from, Timestamp::now())
            .await?)
    }

    /// A host's BMC no longer has its system (as read at `now`): `missing` (unless in
    /// maintenance), remembering the state it had.
    pub(crate) async fn gone(&self, id: &HostId, now: Timestamp) -> Result<(), Error> {
        Ok(self.store.host_set_missing(id, now).await?)
    }

    /// `register` succeeded: the host is `inspecting`, with `inspect` queued.
    pub(crate) async fn registered(&self, host: &Host, power: PowerState) -> Result<bool, Error> {
        let inspect =
            OperationRow::queued(OperationRequest::Inspect, &host.pod_manager, Some(&host.id));
        Ok(self
            .store
            .host_registered(&host.id, power, REGISTERED, &inspect)
            .await?)
    }

    /// `inspect` succeeded: the host is `available`, with its inventory. Whether it moved.
    pub(crate) async fn inspected(&self, id: &HostId, inventory: &HostRow) -> Result<bool, Error> {
        Ok(self
            .store
            .host_inspected(id, inventory, INSPECTED, Timestamp::now())
            .await?)
    }

    /// The admin gave a host's own BMC new credentials: `registering` again, with its
    /// `register` queued. `false` where the host's state does not allow it.
    pub(crate) async fn credentials_changed(
        &self,
        host: &Host,
        sealed: &str,
    ) -> Result<bool, Error> {
        let register = OperationRow::queued(
            OperationRequest::Register,
            &host.pod_manager,
            Some(&host.id),
        );
        Ok(self
            .store
            .host_set_bmc_auth(&host.id, sealed, REREGISTER_WITH, &register)
            .await?)
    }

    /// A bound claim's host is to be provisioned: `provisioning`, with `op` queued. `false`
    /// where the host's state does not allow it.
    pub(crate) async fn provision(&self, id: &HostId, op: &OperationRow) -> Result<bool, Error> {
        Ok(self.store.host_transition_queue(id, PROVISION, op).await?)
    }

    /// `provision` succeeded: `provisioned`.
    pub(crate) async fn provisioned(&self, id: &HostId) -> Result<bool, Error> {
        Ok(self
            .store
            .host_transition(id, PROVISIONED, Timestamp::now())
            .await?)
    }

    /// A claim's host is released: `deprovisioning`, with `op` queued. `false` where the host
    /// cannot be (it is `missing`).
    pub(crate) async fn deprovision(&self, id: &HostId, op: &OperationRow) -> Result<bool, Error> {
        Ok(self
            .store
            .host_transition_queue(id, DEPROVISION, op)
            .await?)
    }

    /// A release of `tenant`'s claim ended: the claim is deleted (one that failed stays,
    /// unbound) and its host, if any, `available` again (a `missing` one stays `missing`). A
    /// tenant being deleted goes with its last claim (a failure to is logged: the release
    /// stands, and the tenant's next release or deletion tries again).
    pub(crate) async fn released(&self, claim: &ClaimId, tenant: &TenantId) -> Result<(), Error> {
        self.store
            .claim_finish_release(claim, DEPROVISIONED.to)
            .await?;
        let finished = async {
            // While claims are still releasing this refuses; the last one finishes the job.
            if self.store.tenant_deleting(tenant).await?
                && self.store.tenant_delete(tenant).await? == Ok(true)
            {
                tracing::info!(%tenant, "tenant deleted after releasing its claims");
            }
            Ok::<_, Error>(())
        };
        if let Err(e) = finished.await {
            tracing::error!(%tenant, error = %e, "cannot finish deleting the tenant");
        }
        Ok(())
    }

    /// An operation of `kind` on the host failed for good at `now`: `error`, with why, where
    /// the kind's failure says so (`failure`). Whether it moved.
    pub(crate) async fn failed(
        &self,
        id: &HostId,
        kind: OperationKind,
        message: &str,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let Some((error_type, from)) = failure(kind) else {
            return Ok(false);
        };
        Ok(self
            .store
            .host_fail(id, from, error_type, message, now)
            .await?)
    }

    /// The BMC obeyed a power action at `now`: a power management error is over.
    pub(crate) async fn power_recovered(&self, id: &HostId, now: Timestamp) -> Result<bool, Error> {
        Ok(self.store.host_recover_power(id, now).await?)
    }

    /// The admin asks for an inspection: `inspecting` with `inspect` queued, or, for a host
    /// whose registration failed, `registering` with `register` queued. `None` where the
    /// host's state does not allow it (it changed meanwhile).
    pub(crate) async fn inspect_again(&self, host: &Host) -> Result<Option<OperationRow>, Error> {
        let failed = host.error.as_ref().map(|e| e.kind);
        let (transition, request) = if failed == Some(HostErrorKind::Registration) {
            (REREGISTER, OperationRequest::Register)
        } else {
            (REINSPECT, OperationRequest::Inspect)
        };
        let op = OperationRow::queued(request, &host.pod_manager, Some(&host.id));
        let queued = self
            .store
            .host_transition_queue(&host.id, transition, &op)
            .await?;
        Ok(queued.then_some(op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(state: &str) -> Host {
        Host {
            id: "h1".into(),
            state: state.parse().unwrap(),
            ..Host::default()
        }
    }

    #[test]
    fn actions_wait_while_podium_drives_the_host() {
        for state in ["available", "provisioned", "error"] {
            assert!(
                action_allowed(&host(state), HostAction::Power).is_ok(),
                "{state}"
            );
            assert!(action_allowed(&host(state), HostAction::TenantPower).is_ok());
        }
        for state in [
            "registering",
            "inspecting",
            "provisioning",
            "deprovisioning",
            "missing",
        ] {
            let e = action_allowed(&host(state), HostAction::Media).unwrap_err();
            assert!(
                matches!(&e, Error::Conflict { code: ErrorCode::HostBusy, message }
                    if message.contains(&format!("is {state}:")) && message.contains("available, provisioned, error, maintenance")),
                "{state}: {e:?}"
            );
        }
    }

    #[test]
    fn maintenance_lets_the_admin_act_and_holds_the_tenant_off() {
        let mut h = host("provisioning");
        h.maintenance = Some(crate::data::host::Maintenance {
            since: podium_types::Timestamp::now(),
            reason: String::new(),
        });
        assert_eq!(shown_state(&h), ShownState::Maintenance);
        assert!(action_allowed(&h, HostAction::Power).is_ok());
        let e = action_allowed(&h, HostAction::TenantPower).unwrap_err();
        assert!(e.to_string().contains("is maintenance"), "{e}");
        assert!(action_allowed(&h, HostAction::Inspect).is_err());
    }

    #[test]
    fn only_an_unclaimed_host_is_inspected() {
        assert!(action_allowed(&host("available"), HostAction::Inspect).is_ok());
        let mut h = host("available");
        h.claim_id = Some("c1".into());
        assert!(matches!(
            action_allowed(&h, HostAction::Inspect),
            Err(Error::Conflict {
                code: ErrorCode::HostClaimed,
                ..
            })
        ));
        assert!(action_allowed(&host("provisioned"), HostAction::Inspect).is_err());
    }

    const TRANSITIONS: [Transition<'static>; 9] = [
        REGISTERED,
        INSPECTED,
        REINSPECT,
        REREGISTER,
        REREGISTER_WITH,
        PROVISION,
        PROVISIONED,
        DEPROVISION,
        DEPROVISIONED,
    ];

    #[test]
    fn every_state_has_a_way_out_and_every_way_leads_to_a_state() {
        // Every state a transition names is a stored state: `HostState` has no other. Left by a transition, else by a failure of the operation that runs in it; `missing`
        // by a sync that sees the host again.
        for &state in HostState::ALL {
            let by_transition = TRANSITIONS.iter().any(|t| t.from.contains(&state));
            let by_failure = OperationKind::ALL
                .iter()
                .any(|k| failure(*k).is_some_and(|(_, from)| from.contains(&state)));
            assert!(
                by_transition || by_failure || state == HostState::Missing,
                "nothing leads out of `{state}`"
            );
        }
        // An error is left by an action its state allows, whatever its type.
        let error = host("error");
        assert!(action_allowed(&error, HostAction::Inspect).is_ok());
        assert!(action_allowed(&error, HostAction::Power).is_ok());
        // Every operation's state is the `from` of the transition that ends it.
        for (kind, ends) in [
            (OperationKind::Register, REGISTERED),
            (OperationKind::Inspect, INSPECTED),
            (OperationKind::Provision, PROVISIONED),
            (OperationKind::Deprovision, DEPROVISIONED),
        ] {
            let (_, from) = failure(kind).unwrap();
            assert_eq!(from, ends.from, "{kind}");
        }
    }
}
