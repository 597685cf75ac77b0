//! A claim as its caller may see it: a tenant its own, an admin any; and a claim that holds a
//! host, for the features that act on a claimed host (its documents, its hardware).

use podium_types::{ClaimId, ClaimState, ErrorCode, TenantScope};

use super::{ClaimRow, Datastore, Host, host_find};
use crate::error::Error;

/// A claim and the host bound to it, if the caller (of `scope`) may see them.
pub(crate) async fn claim_get(
    store: &Datastore,
    scope: TenantScope<'_>,
    id: &ClaimId,
) -> Result<(ClaimRow, Option<Host>), Error> {
    let claim = store
        .claim_get(scope, id)
        .await?
        .ok_or_else(|| Error::not_found("claim", id))?;
    let host = match &claim.host_id {
        Some(h) => host_find(store, h).await?,
        None => None,
    };
    Ok((claim, host))
}

/// A claim that is bound, with its host; a pending, failed or releasing one holds none (a
/// released claim's documents and settings must not outlive it).
pub(crate) async fn claim_bound(
    store: &Datastore,
    scope: TenantScope<'_>,
    claim_id: &ClaimId,
) -> Result<(ClaimRow, Host), Error> {
    let (claim, host) = claim_get(store, scope, claim_id).await?;
    match host {
        Some(host) if claim.state == ClaimState::Bound => Ok((claim, host)),
        _ => Err(Error::Conflict {
            code: ErrorCode::ClaimNotBound,
            message: format!(
                "claim `{claim_id}` is {}: only a bound claim holds a host",
                claim.state
            ),
        }),
    }
}
