//! The application's answers: each of the app's records made the model's view of it
//! (`podium_types::views`), with the rules of what a caller sees (which state a host shows,
//! when its error shows, what a tenant sees of its host). A leaf of the crate: the feature
//! modules' own records (a pod manager with its bindings, a pool, a grant) make their views
//! beside them. The API serializes these and
//! nothing else, so no stored row reaches a response.

use crate::data::{
    ClaimRow, GrantRow, Host, OperationRow, PluginRow, PodManager, StatusChange, TenantRow,
    TokenRow,
};
use podium_types::views::{
    AddressView, ClaimView, ClaimedHostView, GrantView, HostErrorView, HostView, MaintenanceView,
    OperationView, PluginView, PodManagerView, StatusChangeView, TenantView, TokenCreatedView,
    TokenView,
};
use podium_types::{HostState, PluginBinding, Secret, ShownState};

use crate::endpoint::Bmc;

/// The state a host shows: `maintenance` while it lasts, else the stored one.
pub(crate) fn shown_state(host: &Host) -> ShownState {
    if host.maintenance.is_some() {
        ShownState::Maintenance
    } else {
        ShownState::In(host.state)
    }
}

/// Why a host is in `error`: shown only while it is (a host that recovered keeps no error).
fn shown_error(host: &Host) -> Option<HostErrorView> {
    let error = host.error.as_ref()?;
    (host.state == HostState::Error).then(|| HostErrorView {
        error_type: error.kind,
        message: error.message.clone(),
        at: error.at,
        state: error.from,
    })
}

/// A pod manager as the API shows it: its credentials only as `has_auth`.
/// A pod manager; `default_renderer` is what renders its documents where the admin bound no
/// renderer.
pub(crate) fn pod_manager(
    r: PodManager,
    default_renderer: Option<&PluginBinding>,
) -> PodManagerView {
    PodManagerView {
        bookmark_link: format!("/v1/pod_managers/{}", r.uuid),
        uuid: r.uuid,
        name: r.name,
        has_auth: r.service.auth_sealed.is_some(),
        tls: r.service.tls.view(),
        url: r.service.url,
        description: r.description,
        location: r.location,
        status: r.status,
        status_message: r.status_message,
        last_probe_at: r.last_probe_at,
        redfish_link: r.redfish_link,
        driver: r.driver,
        ipam: r.ipam,
        renderer_default: r.renderer.is_none(),
        renderer: r.renderer.or_else(|| default_renderer.cloned()),
        network_config_owner: r.network_config_owner,
        limits: r.limits,
        cleaning: podium_types::CleaningInEffect::of(&r.deploy, r.preprovisioning_image.is_some()),
        preprovisioning_image: r.preprovisioning_image,
        deploy: r.deploy,
        power: r.power,
        tenant_firmware: r.tenant_firmware,
        firmware_profile: r.firmware_profile,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

pub(crate) fn status_change(s: StatusChange) -> StatusChangeView {
    StatusChangeView {
        status: s.status,
        message: s.message,
        at: s.at,
    }
}

/// A host's view; `cleaning` is what its pod manager's release erases now.
pub(crate) fn host(h: Host, cleaning: podium_types::CleaningInEffect) -> HostView {
    let shown = shown_state(&h);
    let error = shown_error(&h);
    let bmc = h.bmc.as_ref().map(Bmc::view);
    HostView {
        nics: h.nics,
        media_slots: h.media_slots,
        boot: h.boot,
        id: h.id,
        pod_manager: h.pod_manager,
        chassis: h.chassis,
        system_id: h.system_id,
        kind: h.kind,
        name: h.name,
        uuid: h.uuid,
        manufacturer: h.manufacturer,
        model: h.model,
        serial: h.serial,
        cpu_count: h.cpu_count,
        memory_mib: h.memory_mib,
        power_state: h.power_state,
        error,
        maintenance: h.maintenance.map(|m| MaintenanceView {
            reason: m.reason,
            since: m.since,
            state: h.state,
        }),
        state: shown,
        labels: h.labels,
        boot_mac: h.boot_mac,
        root_device: h.root_device,
        bmc,
        bios_version: h.bios_version,
        bmc_version: h.bmc_version,
        disks: podium_types::views::DisksView {
            may_hold_data_of: h.disks_written_for,
            last_cleaning: h.last_cleaning,
            cleaning,
        },
        created_at: h.created_at,
        updated_at: h.updated_at,
        last_seen_at: h.last_seen_at,
    }
}

pub(crate) fn operation(o: OperationRow) -> OperationView {
    OperationView {
        request: (&o.request).into(),
        kind: o.kind(),
        result: o.result,
        progress: o.progress,
        id: o.id,
        status: o.status,
        host: o.host_id,
        pod_manager: o.pod_manager,
        error: o.error,
        attempts: o.attempts,
        next_attempt_at: o.next_attempt_at,
        claim: o.claim_id,
        created_at: o.created_at,
        started_at: o.started_at,
        finished_at: o.finished_at,
    }
}

pub(crate) fn tenant(t: TenantRow) -> TenantView {
    TenantView {
        id: t.id,
        name: t.name,
        description: t.description,
        created_at: t.created_at,
    }
}

pub(crate) fn token(t: TokenRow) -> TokenView {
    TokenView {
        id: t.id,
        role: t.role,
        tenant: t.tenant_id,
        read_only: t.read_only,
        description: t.description,
        expires_at: t.expires_at,
        created_at: t.created_at,
        revoked_at: t.revoked_at,
    }
}

/// A new token with its secret: the one answer that shows it.
pub(crate) fn token_created(t: TokenRow, secret: Secret) -> TokenCreatedView {
    TokenCreatedView {
        token: secret.expose().to_owned(),
        view: token(t),
    }
}

pub(crate) fn grant(g: GrantRow) -> GrantView {
    GrantView {
        id: g.id,
        tenant: g.tenant_id,
        pod_manager: g.pod_manager,
        selector: g.selector,
        max_hosts: g.max_hosts,
        chassis: g.chassis,
        created_at: g.created_at,
    }
}

pub(crate) fn plugin(r: PluginRow) -> PluginView {
    PluginView {
        sha256: r.sha256,
        name: r.name,
        version: r.version,
        world: r.world,
        description: r.description,
        size: r.size,
        source: r.source,
        created_at: r.created_at,
    }
}

/// A claim as its tenant sees it: of its host, the hardware, power and provisioning state and
/// the addresses IPAM holds for it; never the BMC, the pod manager's URL or the system id.
pub(crate) fn claim(c: ClaimRow, h: Option<Host>, addresses: Vec<AddressView>) -> ClaimView {
    ClaimView {
        id: c.id,
        state: c.state,
        reason: c.reason,
        tenant: c.tenant_id,
        pod_manager: c.pod_manager,
        selector: c.selector,
        min_cpu: c.min_cpu,
        min_memory_mib: c.min_memory_mib,
        image: c.image,
        online: c.online,
        has_user_data: c.user_data.is_some(),
        chassis: c.chassis,
        spread: c.spread,
        compose: c.compose,
        host: h.map(|h| ClaimedHostView {
            provisioning_state: shown_state(&h),
            id: h.id,
            name: h.name,
            chassis: h.chassis,
            uuid: h.uuid,
            manufacturer: h.manufacturer,
            model: h.model,
            cpu_count: h.cpu_count,
            memory_mib: h.memory_mib,
            nics: h
                .nics
                .iter()
                .map(|n| podium_types::views::ClaimedNicView {
                    name: n.name.clone(),
                    mac: n.mac.clone(),
                    speed_mbps: n.speed_mbps,
                })
                .collect(),
            power_state: h.power_state,
            addresses,
        }),
        created_at: c.created_at,
        updated_at: c.updated_at,
    }
}
