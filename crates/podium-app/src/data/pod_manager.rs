//! A pod manager as the features work with it, and how the store keeps it: the service's URL,
//! credentials and TLS columns become one `Bmc`, and the two limit columns the API's limits.

use podium_store::PodManagerRow;
use podium_types::requests::{NetworkConfigOwner, OperationLimits};
use podium_types::{PluginBinding, PodManagerId, PodManagerStatus, Timestamp};

use super::Datastore;
use crate::endpoint::{Bmc, Tls};
use crate::error::Error;

/// A site: the Redfish service in front of its machines, the plugins the admin bound to it,
/// and what Podium last saw of the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PodManager {
    pub(crate) uuid: PodManagerId,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) location: String,
    /// The site's shared Redfish service (hosts with a BMC of their own have theirs).
    pub(crate) service: Bmc,
    pub(crate) driver: PluginBinding,
    pub(crate) ipam: PluginBinding,
    /// `None`: the server's default renderer.
    pub(crate) renderer: Option<PluginBinding>,
    pub(crate) network_config_owner: NetworkConfigOwner,
    /// Operations at once at the shared service and at the whole site.
    pub(crate) limits: OperationLimits,
    /// The ramdisk's URL an inspection boots where the site has DHCP-less pools.
    pub(crate) preprovisioning_image: Option<String>,
    /// How its hosts take disk images and are cleaned after them.
    pub(crate) deploy: podium_types::DeploySettings,
    pub(crate) power: podium_types::PowerSettings,
    /// What its tenants may change of the hosts they claim.
    pub(crate) tenant_firmware: podium_types::TenantFirmware,
    /// The firmware settings its hosts are given before they are `available`.
    pub(crate) firmware_profile: podium_types::FirmwareProfile,
    pub(crate) status: PodManagerStatus,
    pub(crate) status_message: Option<String>,
    pub(crate) last_probe_at: Option<Timestamp>,
    pub(crate) redfish_link: Option<String>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

/// A stored limit: written from a `u32`, so one out of range is a row nobody wrote here; it
/// reads as no limit.
fn limit(stored: Option<i64>) -> Option<u32> {
    stored.and_then(|n| u32::try_from(n).ok())
}

impl From<PodManagerRow> for PodManager {
    fn from(r: PodManagerRow) -> PodManager {
        PodManager {
            uuid: r.uuid,
            name: r.name,
            description: r.description,
            location: r.location,
            service: Bmc {
                url: r.url,
                auth_sealed: r.auth_sealed,
                tls: Tls {
                    verify: r.tls_verify,
                    ca_bundle: r.tls_ca_bundle,
                    pinned_sha256: r.tls_pinned_sha256,
                },
            },
            driver: r.driver,
            ipam: r.ipam,
            renderer: r.renderer,
            network_config_owner: r.network_config_owner,
            limits: OperationLimits {
                service: limit(r.service_limit),
                site: limit(r.site_limit),
                requests: limit(r.request_limit),
            },
            preprovisioning_image: r.preprovisioning_image,
            deploy: r.deploy,
            power: r.power,
            tenant_firmware: r.tenant_firmware,
            firmware_profile: r.firmware_profile,
            status: r.status,
            status_message: r.status_message,
            last_probe_at: r.last_probe_at,
            redfish_link: r.redfish_link,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

impl From<PodManager> for PodManagerRow {
    fn from(p: PodManager) -> PodManagerRow {
        PodManagerRow {
            uuid: p.uuid,
            name: p.name,
            url: p.service.url,
            auth_sealed: p.service.auth_sealed,
            description: p.description,
            location: p.location,
            tls_verify: p.service.tls.verify,
            tls_ca_bundle: p.service.tls.ca_bundle,
            tls_pinned_sha256: p.service.tls.pinned_sha256,
            driver: p.driver,
            ipam: p.ipam,
            renderer: p.renderer,
            network_config_owner: p.network_config_owner,
            service_limit: p.limits.service.map(i64::from),
            site_limit: p.limits.site.map(i64::from),
            request_limit: p.limits.requests.map(i64::from),
            preprovisioning_image: p.preprovisioning_image,
            deploy: p.deploy,
            power: p.power,
            tenant_firmware: p.tenant_firmware,
            firmware_profile: p.firmware_profile,
            status: p.status,
            status_message: p.status_message,
            last_probe_at: p.last_probe_at,
            redfish_link: p.redfish_link,
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

/// A pod manager, if there is one.
pub(crate) async fn pod_manager_find(
    store: &Datastore,
    uuid: &PodManagerId,
) -> Result<Option<PodManager>, Error> {
    Ok(store.pod_manager_get(uuid).await?.map(PodManager::from))
}

/// A pod manager, or 404.
pub(crate) async fn pod_manager_load(
    store: &Datastore,
    uuid: &PodManagerId,
) -> Result<PodManager, Error> {
    pod_manager_find(store, uuid)
        .await?
        .ok_or_else(|| Error::not_found("pod manager", uuid))
}
