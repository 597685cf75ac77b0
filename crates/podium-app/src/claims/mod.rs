//! Claims, the consumer side of tenancy: a tenant asks for a host of a pod manager it was
//! granted; the claim binds atomically to a free matching host or waits as `pending`; releasing
//! it sends the host through deprovisioning (power off, eject media, clear the boot override)
//! before any other tenant can have it.
//!
//! **Architecture Invariant:** a tenant reaches claims only through functions that take its
//! `Caller` and filter by its tenant id in the datastore; another tenant's claim is "not found".

mod bind;

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{
    ClaimRow, Host, OperationRow, claim_get, host_find, host_load, pod_manager_load,
};
use crate::error::Error;
use crate::ipam::IpClaim;
use podium_runtime::PowerAction;
use podium_types::requests::{ClaimCreate, ClaimUpdate, NetworkConfigOwner};
use podium_types::views::{ClaimView, List, OperationView};
use podium_types::{ClaimId, ErrorCode, HostId, PodManagerId, TenantId, TenantScope};
use podium_types::{ClaimState, HostState};

/// Largest `user_data` accepted: it is handed to the host as bytes, never parsed.
pub(crate) const MAX_USER_DATA: usize = 64 << 10;
/// Largest consumer `network_data` accepted, as JSON text.
const MAX_NETWORK_DATA: usize = 64 << 10;
/// The most metaData keys a claim may bring.
const MAX_META_KEYS: usize = 64;

/// User data, given as text or as base64, as the bytes the host will read. Only its size is
/// checked; it is never parsed.
fn user_data_bytes(text: Option<String>, base64: Option<&str>) -> Result<Option<Vec<u8>>, Error> {
    use base64::Engine as _;
    let bytes = match (text, base64) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "user_data_base64",
                "give user_data or user_data_base64, not both",
            ));
        }
        (Some(text), None) => text.into_bytes(),
        (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|e| Error::invalid("user_data_base64", format!("is not base64: {e}")))?,
        (None, None) => return Ok(None),
    };
    if bytes.len() > MAX_USER_DATA {
        let field = if base64.is_some() {
            "user_data_base64"
        } else {
            "user_data"
        };
        return Err(Error::invalid(
            field,
            format!(
                "must be at most {MAX_USER_DATA} bytes (it is {})",
                bytes.len()
            ),
        ));
    }
    Ok(Some(bytes))
}

/// A claim's metaData: an object of string values, stored as JSON text.
fn meta_data_text(meta: Option<serde_json::Value>) -> Result<Option<String>, Error> {
    let Some(meta) = meta else {
        return Ok(None);
    };
    let Some(object) = meta.as_object() else {
        return Err(Error::invalid("meta_data", "must be a JSON object"));
    };
    if object.len() > MAX_META_KEYS {
        return Err(Error::invalid(
            "meta_data",
            format!("at most {MAX_META_KEYS} keys"),
        ));
    }
    if let Some((key, _)) = object.iter().find(|(_, v)| !v.is_string()) {
        return Err(Error::invalid(
            format!("meta_data.{key}"),
            "must be a string",
        ));
    }
    Ok(Some(meta.to_string()))
}

/// A claim's networkData: a JSON object, stored as JSON text.
/// `{}` (like `null`) brings nothing; a document is at most `MAX_NETWORK_DATA` bytes.
fn network_data_text(network_data: Option<serde_json::Value>) -> Result<Option<String>, Error> {
    match network_data {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Object(o)) if o.is_empty() => Ok(None),
        Some(n) if n.is_object() => {
            let text = n.to_string();
            if text.len() > MAX_NETWORK_DATA {
                return Err(Error::invalid(
                    "network_data",
                    format!("must be at most {MAX_NETWORK_DATA} bytes of JSON"),
                ));
            }
            Ok(Some(text))
        }
        Some(_) => Err(Error::invalid(
            "network_data",
            "must be a JSON object (a network_data.json document)",
        )),
    }
}

fn tenant_of(caller: &Caller) -> Result<(&TenantId, bool), Error> {
    match caller {
        Caller::Tenant {
            tenant_id,
            read_only,
            ..
        } => Ok((tenant_id, *read_only)),
        Caller::Admin { .. } => Err(Error::Forbidden(
            "claims are made by tenants: use a tenant token".into(),
        )),
    }
}

/// What a claim's image must say beyond its URL: a `raw` or `qcow2` image, which the deploy
/// agent writes to disk, needs a sha256 or sha512 checksum (the agent checks the image against
/// it before the host boots it; md5 only where the pod manager allows it); root device hints go
/// with those formats only.
/// A claim that composes asking for `what`, which a node composed for it cannot have.
fn compose_refused(what: &str) -> Error {
    Error::invalid(
        "compose",
        format!(
            "a claim that composes cannot ask for {what}: a node composed for it has no \
             labels, chassis or rack, and NICs not known before it is"
        ),
    )
}

fn validate_image(
    image: &podium_types::requests::ImageParams,
    deploy: &podium_types::DeploySettings,
) -> Result<(), Error> {
    use podium_types::{ChecksumType, ImageFormat};
    let to_disk = matches!(image.format, Some(ImageFormat::Raw | ImageFormat::Qcow2));
    if !to_disk {
        if image.root_device.is_some() {
            return Err(Error::invalid(
                "image.root_device",
                "root device hints choose the disk a raw or qcow2 image is written to; a live ISO \
                 is booted, not written",
            ));
        }
        return Ok(());
    }
    let digits = match image.checksum_type {
        Some(ChecksumType::Sha256) => 64,
        Some(ChecksumType::Sha512) => 128,
        Some(ChecksumType::Md5) if deploy.allow_md5 => 32,
        Some(ChecksumType::Md5) => {
            return Err(Error::invalid(
                "image.checksum_type",
                "md5 is refused for an image written to disk on this pod manager: give its \
                 sha256 or sha512",
            ));
        }
        None => {
            return Err(Error::invalid(
                "image.checksum_type",
                "a raw or qcow2 image is written to disk and checked first: give `checksum_type` \
                 (sha256 or sha512) and `checksum`",
            ));
        }
    };
    let checksum = image.checksum.as_deref().unwrap_or("");
    if checksum.len() != digits || !checksum.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(
            "image.checksum",
            format!("must be the image's digest: {digits} hexadecimal digits"),
        ));
    }
    match &image.root_device {
        Some(hints) => crate::hosts::validate_root_device("image.root_device", hints),
        None => Ok(()),
    }
}

impl Podium {
    pub async fn claim_create(
        &self,
        caller: &Caller,
        mut params: ClaimCreate,
    ) -> Result<ClaimView, Error> {
        caller.require_writable()?;
        let (tenant_id, _) = tenant_of(caller)?;
        params.image.url = crate::urls::http_url("image.url", &params.image.url)?.into();
        let user_data = user_data_bytes(params.user_data, params.user_data_base64.as_deref())?;
        let meta_data = meta_data_text(params.meta_data)?;
        let network_data = network_data_text(params.network_data)?;
        crate::labels::validate_labels("selector", &params.selector)?;
        if let Some(group) = &params.spread {
            crate::labels::validate_name_in("spread", group)?;
        }
        if params.compose {
            // A node composed for the claim has no labels, no chassis and no rack yet, and its
            // NICs are not known before it is composed.
            let refused = if !params.selector.is_empty() {
                Some("`selector`")
            } else if params.chassis.is_some() {
                Some("`chassis`")
            } else if params.spread.is_some() {
                Some("`spread`")
            } else if network_data
                .as_deref()
                .is_some_and(|doc| !bind::phy_macs(doc).is_empty())
            {
                Some("network_data naming NICs")
            } else {
                None
            };
            if let Some(other) = refused {
                return Err(compose_refused(other));
            }
        }
        // The pod manager: one the tenant was granted. Any other is "not found" to it.
        let grants = self
            .datastore()
            .grant_list(
                Some(tenant_id),
                None,
                &podium_types::Page {
                    limit: 1000,
                    cursor: None,
                },
            )
            .await?;
        let granted: Vec<PodManagerId> =
            grants.items.iter().map(|g| g.pod_manager.clone()).collect();
        let pod_manager = match &params.pod_manager {
            Some(pm) if granted.contains(pm) => pm.clone(),
            Some(pm) => return Err(Error::not_found("pod manager", pm)),
            None => granted.first().cloned().ok_or_else(|| {
                Error::invalid("pod_manager", "this tenant was granted no pod manager")
            })?,
        };
        let pm = pod_manager_load(self.datastore(), &pod_manager).await?;
        if let Some(chassis) = &params.chassis {
            let grant = grants.items.iter().find(|g| g.pod_manager == pod_manager);
            self.chassis_within_reach(
                &pod_manager,
                grant.and_then(|g| g.chassis.as_ref()),
                chassis,
            )
            .await?;
        }
        validate_image(&params.image, &pm.deploy)?;
        if network_data.is_some() && pm.network_config_owner == NetworkConfigOwner::Admin {
            return Err(Error::Conflict {
                code: ErrorCode::NetworkConfigOwnedBySite,
                message: "this site owns network config: its pod manager renders networkData from the admin's templates, so a claim cannot bring its own".into(),
            });
        }
        if network_data.is_some() || meta_data.is_some() {
            // Everything that does not depend on the host, now; the rest against each host
            // the claim could bind to.
            let input =
                crate::rendering::consumer_input(network_data.as_deref(), meta_data.as_deref());
            self.consumer_input_check(&pm, None, &input).await?;
        }
        let now = podium_types::Timestamp::now();
        let claim = ClaimRow {
            id: ClaimId::generate(),
            tenant_id: tenant_id.clone(),
            pod_manager: pm.uuid.clone(),
            selector: params.selector,
            min_cpu: i64::from(params.min_cpu.unwrap_or(0)),
            min_memory_mib: i64::try_from(params.min_memory_mib.unwrap_or(0)).unwrap_or(i64::MAX),
            image: params.image,
            user_data,
            meta_data,
            network_data,
            online: params.online.unwrap_or(true),
            state: ClaimState::Pending,
            reason: None,
            host_id: None,
            chassis: params.chassis,
            spread: params.spread,
            compose: params.compose,
            created_at: now,
            updated_at: now,
        };
        self.datastore().claim_create(&claim).await?;
        self.claim_try_bind(&claim.id, None).await?;
        self.claim_view(caller, &claim.id).await
    }

    /// The operations run at the claim's request, for its tenant (or the admin).
    pub async fn claim_operations(
        &self,
        caller: &Caller,
        id: &ClaimId,
        page: podium_types::Page,
    ) -> Result<List<OperationView>, Error> {
        let (claim, _) = claim_get(self.datastore(), caller.scope(), id).await?;
        let filter = podium_types::OperationFilter {
            claim: Some(claim.id),
            ..Default::default()
        };
        let paged = self.datastore().operation_list(&filter, &page).await?;
        Ok(List::of(paged, crate::views::operation))
    }

    /// A claim as its tenant (or an admin) sees it, with the addresses its host has.
    pub async fn claim_view(&self, caller: &Caller, id: &ClaimId) -> Result<ClaimView, Error> {
        let (claim, host) = claim_get(self.datastore(), caller.scope(), id).await?;
        self.claim_shown(claim, host).await
    }

    async fn claim_shown(&self, claim: ClaimRow, host: Option<Host>) -> Result<ClaimView, Error> {
        let addresses = self.claim_addresses(&claim, host.as_ref()).await?;
        let addresses = addresses.into_iter().map(IpClaim::address).collect();
        Ok(crate::views::claim(claim, host, addresses))
    }

    pub async fn claim_list(&self, caller: &Caller) -> Result<List<ClaimView>, Error> {
        let claims = self.datastore().claim_list(caller.scope()).await?;
        let mut out = Vec::with_capacity(claims.len());
        for claim in claims {
            let host = match &claim.host_id {
                Some(h) => host_find(self.datastore(), h).await?,
                None => None,
            };
            out.push(self.claim_shown(claim, host).await?);
        }
        Ok(List::all(out))
    }

    /// Powers the claimed host on or off at the tenant's request, or changes its user data.
    pub async fn claim_update(
        &self,
        caller: &Caller,
        id: &ClaimId,
        params: ClaimUpdate,
    ) -> Result<ClaimView, Error> {
        caller.require_writable()?;
        let (claim, _) = claim_get(self.datastore(), caller.scope(), id).await?;
        if claim.state == ClaimState::Releasing {
            return Err(Error::Conflict {
                code: ErrorCode::ClaimReleasing,
                message: "the claim is being released".into(),
            });
        }
        let user_data = user_data_bytes(params.user_data, params.user_data_base64.as_deref())?;
        let meta_data = meta_data_text(params.meta_data)?;
        let network_data = network_data_text(params.network_data)?;
        if claim.compose
            && network_data
                .as_deref()
                .is_some_and(|doc| !bind::phy_macs(doc).is_empty())
        {
            return Err(compose_refused("network_data naming NICs"));
        }
        if network_data.is_some() || meta_data.is_some() {
            let pm = pod_manager_load(self.datastore(), &claim.pod_manager).await?;
            if network_data.is_some() && pm.network_config_owner == NetworkConfigOwner::Admin {
                return Err(Error::Conflict {
                    code: ErrorCode::NetworkConfigOwnedBySite,
                    message:
                        "this site owns network config: a claim cannot bring its own networkData"
                            .into(),
                });
            }
            let host = match &claim.host_id {
                Some(h) => host_find(self.datastore(), h).await?,
                None => None,
            };
            let input = crate::rendering::consumer_input(
                network_data.as_deref().or(claim.network_data.as_deref()),
                meta_data.as_deref().or(claim.meta_data.as_deref()),
            );
            self.consumer_input_check(&pm, host.as_ref(), &input)
                .await?;
        }
        let online = params.online.unwrap_or(claim.online);
        // A change of power is checked against the host's state before anything is stored.
        let host = match &claim.host_id {
            Some(h) if online != claim.online => host_find(self.datastore(), h).await?,
            _ => None,
        };
        if let Some(host) = &host {
            crate::lifecycle::action_allowed(host, crate::lifecycle::HostAction::TenantPower)?;
        }
        let updated = self
            .datastore()
            .claim_update_fields(
                id,
                online,
                user_data.as_deref(),
                meta_data.as_deref(),
                network_data.as_deref(),
                podium_types::Timestamp::now(),
                (claim.state, claim.host_id.as_ref()),
            )
            .await?;
        if !updated {
            return Err(Error::Conflict {
                code: ErrorCode::ClaimChanged,
                message: "the claim changed while this request was checked (it was bound or released); read it and try again".into(),
            });
        }
        if online != claim.online && claim.host_id.is_some() {
            // A host whose power action failed after its provisioning is still provisioned: it
            // powers on, it is not installed again.
            let provisioned = host.is_some_and(|h| {
                h.state == HostState::Provisioned
                    || (h.state == HostState::Error
                        && h.error.as_ref().and_then(|e| e.from) == Some(HostState::Provisioned))
            });
            if online && !provisioned && claim.state == ClaimState::Bound {
                // Claimed offline: it was never provisioned; coming online provisions it.
                self.claim_provision(&claim).await?;
            } else {
                // Off as a user expects: the OS asked to shut down, forced off only after the
                // site's timeout (`operations/host_action.rs`).
                let action = if online {
                    PowerAction::On
                } else {
                    PowerAction::Off
                };
                self.claim_power(&claim, action).await?;
            }
        }
        self.claim_view(caller, id).await
    }

    /// Releases a claim: the host is deprovisioned (power off, media ejected, boot override
    /// cleared) before it is free for anyone else.
    pub async fn claim_delete(&self, caller: &Caller, id: &ClaimId) -> Result<(), Error> {
        caller.require_writable()?;
        let (claim, _) = claim_get(self.datastore(), caller.scope(), id).await?;
        self.claim_release(&claim).await
    }

    /// Releases a claim, whoever asked (its tenant, or the admin deleting the tenant).
    pub(crate) async fn claim_release(&self, claim: &ClaimRow) -> Result<(), Error> {
        let id = &claim.id;
        let now = podium_types::Timestamp::now();
        // Releasing first: from now on no bind can take a host for it (a bind commits only a
        // pending claim), and whatever bound it before this shows in the claim read next.
        self.datastore()
            .claim_set_state(id, ClaimState::Releasing, None, now)
            .await?;
        let host_id = match self.datastore().claim_get(TenantScope::Every, id).await? {
            Some(c) => c.host_id,
            None => return Ok(()),
        };
        if let Some(h) = &host_id {
            // Its config drives stop working at once: they carry the tenant's documents.
            self.datastore().config_drives_delete(h, Some(id)).await?;
        }
        let host = match &host_id {
            Some(h) => host_find(self.datastore(), h).await?,
            None => None,
        };
        let Some(host) = host else {
            // Never bound: nothing to deprovision, but it may hold addresses.
            self.ip_release_owner(&crate::ipam::Owner::claim(id), |_| false)
                .await?;
            self.lifecycle().released(id, &claim.tenant_id).await?;
            return Ok(());
        };
        self.claim_deprovision(id, &host, "cancelled: the claim was released", now)
            .await
    }

    /// A provisioning that failed for good (`message`): the claim fails with the reason, its
    /// host is deprovisioned (its disks cleaned first where a disk image was being written) and
    /// freed, and the failed claim stays, unbound, until its tenant deletes it. Nothing
    /// half-done stays bound. A claim no longer bound to `host_id` (released meanwhile) is left
    /// as it is.
    pub(crate) async fn claim_fail_provisioning(
        &self,
        id: &ClaimId,
        host_id: &HostId,
        message: &str,
    ) -> Result<(), Error> {
        let now = podium_types::Timestamp::now();
        let reason = format!("provisioning failed: {message}");
        if !self
            .datastore()
            .claim_fail_bound(id, host_id, &reason, now)
            .await?
        {
            return Ok(());
        }
        self.datastore()
            .config_drives_delete(host_id, Some(id))
            .await?;
        let Some(host) = host_find(self.datastore(), host_id).await? else {
            return Ok(());
        };
        self.claim_deprovision(id, &host, "cancelled: the provisioning failed", now)
            .await
    }

    /// Queues the deprovisioning of the claim's host (operation `deprovision`, which frees the
    /// host at its end). What was still queued for the claim (a provisioning waiting for a
    /// retry) will not run (`why`); the host's operations run in order, so deprovisioning comes
    /// after anything running.
    async fn claim_deprovision(
        &self,
        id: &ClaimId,
        host: &Host,
        why: &str,
        now: podium_types::Timestamp,
    ) -> Result<(), Error> {
        self.datastore()
            .operations_cancel_for_claim(id, why, now)
            .await?;
        let mut op = OperationRow::queued(
            podium_types::OperationRequest::Deprovision,
            &host.pod_manager,
            Some(&host.id),
        );
        op.claim_id = Some(id.clone());
        if !self.lifecycle().deprovision(&host.id, &op).await? {
            // Gone from the inventory: there is no machine to deprovision; it stays missing.
            self.datastore().operation_create(&op).await?;
        }
        Ok(())
    }

    /// Queues the provisioning of a bound claim's host (operation `provision`, carried out by
    /// `rendering.rs`): the host is `provisioning` until it ends.
    async fn claim_provision(&self, claim: &ClaimRow) -> Result<(), Error> {
        let Some(host_id) = &claim.host_id else {
            return Ok(());
        };
        let host = host_load(self.datastore(), host_id).await?;
        let request = podium_types::OperationRequest::Provision {
            image: Some(Box::new(claim.image.clone())),
        };
        let mut op = OperationRow::queued(request, &host.pod_manager, Some(&host.id));
        op.claim_id = Some(claim.id.clone());
        if !self.lifecycle().provision(&host.id, &op).await? {
            // Two binds of one claim raced (its creation and the pending claims' timer): the
            // other one provisions it already.
            if let Some(now) = host_find(self.datastore(), host_id).await?
                && now.claim_id.as_ref() == Some(&claim.id)
                && matches!(now.state, HostState::Provisioning | HostState::Provisioned)
            {
                return Ok(());
            }
            return Err(Error::Conflict {
                code: ErrorCode::HostBusy,
                message: format!(
                    "host `{}` is {}: it is provisioned from {}",
                    host.id,
                    crate::views::shown_state(&host),
                    crate::lifecycle::PROVISION_FROM
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        Ok(())
    }

    /// Powers a claim's host on or off as an operation, like an admin's power action.
    async fn claim_power(&self, claim: &ClaimRow, action: PowerAction) -> Result<(), Error> {
        let Some(host_id) = &claim.host_id else {
            return Ok(());
        };
        let host = host_load(self.datastore(), host_id).await?;
        self.host_power_queue(host, action, Some(&claim.id)).await?;
        Ok(())
    }
}
