//! Following long work through the server's event stream (`GET /v1/events`): an operation, a
//! claim until it settles or is released, a tenant's deletion; with a spinner and the state in
//! words on stderr meanwhile.

use anyhow::bail;
use podium_types::views::{ClaimView, EventView, List, OperationEventView, OperationView};
use podium_types::{
    ClaimId, ClaimState, EventAction, HostState, OperationId, OperationKind, OperationStatus,
    ShownState, TenantId,
};

use super::client::{self, Client};
use super::input::seg;

/// A spinner with a status line on stderr (drawn only on a terminal).
fn spinner() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// An operation's state in words: `sync running (attempt 2)`, `power queued: retry at ...`.
fn describe_operation(op: &OperationView) -> String {
    let mut text = format!("{} {}", op.kind, op.status);
    if op.attempts > 1 {
        text.push_str(&format!(" (attempt {})", op.attempts));
    }
    if op.status == OperationStatus::Queued
        && let Some(at) = &op.next_attempt_at
    {
        text.push_str(&format!(", retry at {at}"));
    }
    if let Some(e) = &op.error {
        text.push_str(&format!(": {e}"));
    }
    text
}

/// Whether an operation has ended.
pub(super) fn ended(op: &OperationView) -> bool {
    matches!(
        op.status,
        OperationStatus::Succeeded | OperationStatus::Failed
    )
}

/// Follows an operation until it succeeds or fails, showing its state: from the server's
/// events (`GET /v1/events`), not by asking again and again.
pub(super) async fn watch_operation(c: &Client, id: &OperationId) -> anyhow::Result<OperationView> {
    let bar = spinner();
    let path = format!("/v1/operations/{}", seg(id.as_str())?);
    // The stream first, then the state: a change after the read is an event.
    let mut events = c
        .events(&format!("/v1/events?operation={}", seg(id.as_str())?))
        .await?;
    let mut op: OperationView = c.get_view(&path).await?;
    loop {
        bar.set_message(describe_operation(&op));
        if ended(&op) {
            bar.finish_and_clear();
            return Ok(op);
        }
        let event = events.next().await?;
        match event.name.as_str() {
            "operation" => {
                let changed: EventView = client::view(event.data)?;
                if let Some(change) = &changed.operation {
                    apply_operation(&mut op, change);
                    if ended(&op) {
                        // Its result is in the whole view.
                        op = c.get_view(&path).await?;
                    }
                }
            }
            "reset" => op = c.get_view(&path).await?,
            _ => {}
        }
    }
}

/// An operation as an event of it left it.
fn apply_operation(op: &mut OperationView, change: &OperationEventView) {
    op.status = change.status;
    op.attempts = change.attempts;
    op.error = change.error.clone();
    op.next_attempt_at = change.next_attempt_at;
}

/// What `watch_claim` shows and decides on: the claim, its host's state, its latest operation.
pub(super) struct ClaimProgress {
    pub(super) claim: ClaimView,
    pub(super) operation: Option<OperationView>,
}

impl ClaimProgress {
    pub(super) async fn read(c: &Client, id: &ClaimId) -> anyhow::Result<ClaimProgress> {
        let claim: ClaimView = c
            .get_view(&format!("/v1/claims/{}", seg(id.as_str())?))
            .await?;
        let ops: List<OperationView> = c
            .get_view(&format!(
                "/v1/claims/{}/operations?limit=1",
                seg(id.as_str())?
            ))
            .await?;
        Ok(ClaimProgress {
            claim,
            operation: ops.items.into_iter().next(),
        })
    }

    fn describe(&self) -> String {
        let claim = &self.claim;
        let mut text = format!("claim {}", claim.state);
        if let Some(host) = &claim.host {
            text.push_str(&format!(", host {}", host.provisioning_state));
        }
        if let Some(reason) = &claim.reason {
            text.push_str(&format!(": {reason}"));
        }
        if let Some(op) = &self.operation {
            text.push_str(&format!("; {}", describe_operation(op)));
        }
        text
    }

    /// Provisioned, powered off as asked, failed, or its host in error.
    pub(super) fn settled(&self) -> bool {
        let claim = &self.claim;
        claim.state == ClaimState::Failed
            || matches!(
                claim.host.as_ref().map(|h| h.provisioning_state),
                Some(ShownState::In(HostState::Provisioned | HostState::Error))
            )
            || (claim.state == ClaimState::Bound && !claim.online)
    }

    /// Applies an event of the claim, of its host or of one of its operations. Answers whether
    /// the whole claim must be read again (a host was bound, or events were forgotten).
    fn apply(&mut self, event: &EventView) -> bool {
        if let Some(change) = &event.claim {
            let claim = &mut self.claim;
            claim.state = change.state;
            claim.online = change.online;
            claim.reason = change.reason.clone();
            let host = claim.host.as_ref().map(|h| &h.id);
            if host != change.host.as_ref() {
                return true;
            }
        }
        if let Some(change) = &event.host
            && let Some(host) = &mut self.claim.host
            && host.id == change.id
        {
            host.provisioning_state = change.provisioning_state;
            host.power_state = change.power_state;
        }
        if let Some(change) = &event.operation {
            match &mut self.operation {
                Some(op) if op.id == change.id => apply_operation(op, change),
                // A newer operation: read it whole.
                _ => return true,
            }
        }
        false
    }
}

/// Follows a claim until `settled` says so (`ClaimProgress::settled`: provisioned, powered off
/// as asked, failed, or its host in error); shows its state and its latest operation meanwhile.
/// The changes come from the server's events (`GET /v1/events?claim=`); the claim is read
/// whole at the start, when a host is bound, and to confirm that it settled.
pub(super) async fn watch_claim(
    c: &Client,
    id: &ClaimId,
    settled: impl Fn(&ClaimProgress) -> bool,
) -> anyhow::Result<ClaimProgress> {
    let bar = spinner();
    // The stream first, then the state: a change after the read is an event.
    let mut events = c
        .events(&format!("/v1/events?claim={}", seg(id.as_str())?))
        .await?;
    let mut progress = ClaimProgress::read(c, id).await?;
    loop {
        bar.set_message(progress.describe());
        if settled(&progress) {
            // An event read before the claim was may have been older than it: settled only if
            // the claim as it is now says so.
            progress = ClaimProgress::read(c, id).await?;
            if settled(&progress) {
                bar.finish_and_clear();
                return Ok(progress);
            }
            continue;
        }
        let event = events.next().await?;
        let again = match event.name.as_str() {
            "reset" => true,
            "claim" | "host" | "operation" => {
                let change: EventView = client::view(event.data)?;
                if change.action == EventAction::Deleted && change.claim.is_some() {
                    bail!("the claim was released while it was watched");
                }
                progress.apply(&change)
            }
            _ => false,
        };
        if again {
            progress = ClaimProgress::read(c, id).await?;
        }
    }
}

/// Follows a claim's release until the claim is gone (its host deprovisioned, its addresses
/// freed); fails where the deprovisioning does. A claim already gone was released.
pub(super) async fn watch_release(c: &Client, id: &ClaimId) -> anyhow::Result<()> {
    let bar = spinner();
    let gone = |e: &anyhow::Error| client::not_found(e);
    let mut events = match c
        .events(&format!("/v1/events?claim={}", seg(id.as_str())?))
        .await
    {
        Ok(events) => events,
        Err(e) if gone(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut progress = match ClaimProgress::read(c, id).await {
        Ok(progress) => progress,
        Err(e) if gone(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    loop {
        bar.set_message(progress.describe());
        if let Some(op) = &progress.operation
            && op.kind == OperationKind::Deprovision
            && op.status == OperationStatus::Failed
        {
            bar.finish_and_clear();
            bail!(
                "deprovisioning the claim's host failed: {} (the claim stays releasing until an \
                 admin sees to the host)",
                op.error.as_deref().unwrap_or("")
            );
        }
        let event = match events.next().await {
            Ok(event) => event,
            // The stream, opened again after a break, finds the claim gone.
            Err(e) if gone(&e) => break,
            Err(e) => return Err(e),
        };
        let again = match event.name.as_str() {
            "reset" => true,
            "claim" | "host" | "operation" => {
                let change: EventView = client::view(event.data)?;
                if change.action == EventAction::Deleted && change.claim.is_some() {
                    break;
                }
                progress.apply(&change)
            }
            _ => false,
        };
        if again {
            progress = match ClaimProgress::read(c, id).await {
                Ok(progress) => progress,
                Err(e) if gone(&e) => break,
                Err(e) => return Err(e),
            };
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// Follows the release of a tenant's claims (`events`: claims and operations, opened before the
/// deletion was asked) until the tenant is deleted; fails where a deprovisioning does.
pub(super) async fn watch_tenant_deletion(
    c: &Client,
    mut events: client::Events<'_>,
    id: &TenantId,
) -> anyhow::Result<()> {
    let bar = spinner();
    let path = format!("/v1/tenants/{}", seg(id.as_str())?);
    let claims: Vec<ClaimView> = c
        .list("/v1/claims")
        .await?
        .into_iter()
        .map(client::view)
        .collect::<anyhow::Result<_>>()?;
    let mut releasing: Vec<ClaimId> = claims
        .into_iter()
        .filter(|claim| &claim.tenant == id)
        .map(|claim| claim.id)
        .collect();
    // Whether to ask if the tenant is gone: at the start, when one of its claims is, and after
    // a quiet second (the tenant goes just after its last claim).
    let mut check = true;
    loop {
        bar.set_message(format!(
            "{} claims of the tenant releasing",
            releasing.len()
        ));
        if check {
            match c.get(&path).await {
                Err(e) if client::not_found(&e) => break,
                Err(e) => return Err(e),
                Ok(_) => check = false,
            }
        }
        let Ok(event) =
            tokio::time::timeout(std::time::Duration::from_secs(1), events.next()).await
        else {
            check = true;
            continue;
        };
        let event = event?;
        if !matches!(event.name.as_str(), "claim" | "operation") {
            continue;
        }
        let change: EventView = client::view(event.data)?;
        if let Some(claim) = &change.claim
            && change.action == EventAction::Deleted
            && releasing.contains(&claim.id)
        {
            releasing.retain(|c| c != &claim.id);
            check = true;
        }
        if let Some(op) = &change.operation
            && op.kind == OperationKind::Deprovision
            && op.status == OperationStatus::Failed
            && op.claim.as_ref().is_some_and(|c| releasing.contains(c))
        {
            bar.finish_and_clear();
            bail!(
                "deprovisioning a host of the tenant's claim {} failed: {}; the tenant is \
                 deleted once an admin sees to it",
                op.claim.as_ref().map_or("", ClaimId::as_str),
                op.error.as_deref().unwrap_or("")
            );
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// An error (exit code 1) for a claim that settled badly.
pub(super) fn settled_well(claim: &ClaimView) -> anyhow::Result<()> {
    if claim.state == ClaimState::Failed {
        bail!(
            "the claim failed: {}",
            claim.reason.as_deref().unwrap_or("")
        );
    }
    if claim.host.as_ref().map(|h| h.provisioning_state) == Some(ShownState::In(HostState::Error)) {
        bail!("provisioning the claim's host failed: see `podium claim operations`");
    }
    Ok(())
}
