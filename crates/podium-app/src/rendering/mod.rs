//! What a booted host reads: `meta_data.json` and `network_data.json`, rendered per host by the
//! pod manager's renderer plugin, for one of two phases, and config drives that carry them.
//!
//! - **preprovisioning** (the ramdisk): networkData from the pod manager's DHCP-less pools (the
//!   host's `host:<id>` address, static on its boot NIC), else DHCP on the boot NIC;
//! - **provisioning** (a claimed host's instance): networkData as the pod manager's
//!   `network_config_owner` says, from its template with the addresses held for the claim
//!   (`claim:<id>`), from the claim, or both (`docs/network-config.md`).
//!
//! The template is the renderer's format: the host only stores it and learns from the
//! renderer which pools it takes addresses from (`templates.rs`). Config drives are made and
//! served in `drives.rs`. The preprovisioning networkData of several DHCP-less pools is joined
//! by the renderer too (`render-preprovisioning-network-data`): the rules are OpenStack's.

mod drives;
mod templates;

pub(crate) use drives::DRIVE_TTL_MAX;
pub use drives::DriveFor;

use podium_types::views::{PreviewView, RenderedView, UnallocatedView};
use podium_types::{ClaimId, ErrorCode, HostId, Phase, TenantScope};
use serde_json::Value;

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{
    ClaimRow, Host, PodManager, claim_bound, host_find, host_load, pod_manager_load,
};
use crate::error::Error;
use crate::plugins::PluginRef;
use podium_runtime::{
    CallContext, CallError, ConsumerInput, NetworkPolicy, Plugin, PluginError, PoolNeed,
    RenderAddress, RenderHost, RenderInput, World,
};
use podium_types::requests::NetworkConfigOwner;

/// The rendered documents of one host for one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Documents {
    pub phase: Phase,
    pub host_id: HostId,
    pub claim_id: Option<ClaimId>,
    pub meta_data: Value,
    pub network_data: Value,
    pub user_data: Option<Vec<u8>>,
    /// In a preview (no claim bound): the address standing in for each one a claim would be
    /// given, by pool.
    pub stand_ins: Option<Vec<(String, String)>>,
}

impl Documents {
    /// The documents as the API shows them: the user data only as `has_user_data`.
    pub(crate) fn view(self) -> RenderedView {
        let d = self;
        RenderedView {
            phase: d.phase,
            host: d.host_id,
            claim: d.claim_id,
            meta_data: d.meta_data,
            network_data: d.network_data,
            has_user_data: d.user_data.is_some(),
            preview: d.stand_ins.map(|stand_ins| PreviewView {
                message: "no claim is bound to this host: this is what the site's template \
                          renders for it, with no address allocated (each pool's network \
                          address stands in for the one a claim will be given) and nothing \
                          of a claim's own network_data, meta_data or user_data"
                    .to_owned(),
                unallocated: stand_ins
                    .into_iter()
                    .map(|(pool, stand_in)| UnallocatedView { pool, stand_in })
                    .collect(),
            }),
        }
    }
}

/// Whether rendering may take the addresses the documents need, or only show those held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Hold what is missing (binding a claim, making a config drive).
    Take,
    /// Write nothing (a GET).
    Peek,
    /// Write nothing and, for a host no claim is bound to, hold nothing either: each pool's
    /// network address stands in for an address (an admin's preview of the provisioning phase).
    Preview,
}

/// The documents need an address that was not taken yet.
fn not_held(owner: &str, pool: &str) -> Error {
    Error::Conflict {
        code: ErrorCode::AddressesNotHeld,
        message: format!(
            "`{owner}` holds no address of IP pool `{pool}` yet: addresses are taken when a \
             claim binds and when a config drive is made"
        ),
    }
}

pub(crate) fn policy_of(pm: &PodManager) -> NetworkPolicy {
    match pm.network_config_owner {
        NetworkConfigOwner::Admin => NetworkPolicy::Admin,
        NetworkConfigOwner::Consumer => NetworkPolicy::Consumer,
        NetworkConfigOwner::Layered => NetworkPolicy::Layered,
    }
}

/// The host as a renderer sees it.
pub(crate) fn render_host(host: &Host) -> Result<RenderHost, Error> {
    let nics = &host.nics;
    Ok(RenderHost {
        id: host.id.to_string(),
        name: host.name.clone(),
        uuid: host.uuid.clone(),
        boot_mac: host.boot_mac.clone(),
        nics: nics
            .iter()
            .map(|n| (n.name.clone(), n.mac.clone()))
            .collect(),
    })
}

/// What a claim brought, as the renderer takes it. Its metaData was checked to be an object of
/// strings when the claim was made.
pub(crate) fn consumer_input(network_data: Option<&str>, meta_data: Option<&str>) -> ConsumerInput {
    let meta = meta_data
        .and_then(|m| serde_json::from_str::<serde_json::Map<String, Value>>(m).ok())
        .map(|m| {
            m.into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => (k, s),
                    other => (k, other.to_string()),
                })
                .collect()
        })
        .unwrap_or_default();
    ConsumerInput {
        network_data: network_data.map(str::to_owned),
        meta,
    }
}

/// A renderer's refusal of what a caller sent: its message starts with the field's path.
fn refusal(prefix: &str, message: &str) -> Error {
    match message.split_once(": ") {
        Some((path, reason)) if !path.is_empty() && !path.contains(' ') => {
            let field = if prefix.is_empty() || path.starts_with(prefix) {
                path.to_owned()
            } else {
                format!("{prefix}.{path}")
            };
            Error::invalid(field, reason)
        }
        _ => Error::Invalid {
            field: (!prefix.is_empty()).then(|| prefix.to_owned()),
            message: message.to_owned(),
        },
    }
}

/// The template names a pool that no longer serves its pod manager.
fn pool_gone(pm: &PodManager, pool: &str) -> Error {
    Error::Conflict {
        code: ErrorCode::RenderFailed,
        message: format!(
            "the network template of pod manager `{}` names IP pool `{pool}`, which no longer \
             serves it",
            pm.name
        ),
    }
}

/// A rendering that failed because the template, the host and IPAM do not fit together.
fn render_failed(host: &Host, e: CallError) -> Error {
    match e {
        CallError::Plugin { plugin, error } => Error::Conflict {
            code: ErrorCode::RenderFailed,
            message: format!(
                "cannot render host `{}` ({}): renderer {plugin}: {error}",
                host.id, host.name
            ),
        },
        other => Error::from(other),
    }
}

impl Podium {
    /// The renderer a pod manager uses, with its configuration.
    async fn renderer_of(&self, pm: &PodManager) -> Result<(Plugin, CallContext), Error> {
        let (plugin, config) = match &pm.renderer {
            Some(binding) => (
                self.plugins().load(&binding.sha256).await?,
                binding.config.to_string(),
            ),
            None => (
                self.plugins()
                    .resolve(
                        &PluginRef {
                            name: crate::bindings::DEFAULT_RENDERER.into(),
                            version: None,
                            sha256: None,
                        },
                        World::Renderer,
                        "renderer",
                    )
                    .await?,
                "{}".to_owned(),
            ),
        };
        Ok((
            plugin,
            CallContext {
                config,
                endpoint: None,
                allocations: None,
            },
        ))
    }

    /// Checks what a claim brings (its `network_data` and `meta_data`) on a pod manager, against
    /// a host where one is given. A refusal names the field.
    pub(crate) async fn consumer_input_check(
        &self,
        pm: &PodManager,
        host: Option<&Host>,
        input: &ConsumerInput,
    ) -> Result<(), Error> {
        let policy = policy_of(pm);
        let template = self.template_text(pm).await?;
        let host = host.map(render_host).transpose()?;
        let (plugin, context) = self.renderer_of(pm).await?;
        self.runtime()
            .renderer(&plugin, context)
            .validate_consumer_input(policy, &template, host.as_ref(), input)
            .await
            .map_err(|e| match e {
                CallError::Plugin {
                    error: PluginError::InvalidInput(message),
                    ..
                } => refusal("", &message),
                CallError::Plugin {
                    error: PluginError::Unsupported(message),
                    ..
                } => Error::Conflict {
                    code: ErrorCode::NetworkConfigOwnedBySite,
                    message,
                },
                other => Error::from(other),
            })
    }

    /// `GET /v1/hosts/{id}/rendered?phase=`: any host, for the admin. The provisioning phase of
    /// a host no claim is bound to is a preview: the site's template with no address held.
    pub async fn host_rendered(
        &self,
        caller: &Caller,
        host_id: &HostId,
        phase: Phase,
    ) -> Result<RenderedView, Error> {
        caller.require_admin_read()?;
        let host = host_load(self.datastore(), host_id).await?;
        let claim = match phase {
            Phase::Preprovisioning => None,
            Phase::Provisioning => self.bound_claim_of(&host).await?,
        };
        let hold = match (phase, &claim) {
            (Phase::Provisioning, None) => Hold::Preview,
            _ => Hold::Peek,
        };
        let documents = self.render(&host, claim.as_ref(), phase, hold).await?;
        Ok(documents.view())
    }

    /// The claim bound to a host, if one is.
    async fn bound_claim_of(&self, host: &Host) -> Result<Option<ClaimRow>, Error> {
        Ok(match &host.claim_id {
            Some(c) => self
                .datastore()
                .claim_get(TenantScope::Every, c)
                .await?
                .filter(|c| c.state == podium_types::ClaimState::Bound),
            None => None,
        })
    }

    /// A host and, for the provisioning phase, its bound claim: the provisioning documents are
    /// a claim's, so a host without one is a 409.
    async fn host_with_bound_claim(
        &self,
        host_id: &HostId,
        phase: Phase,
    ) -> Result<(Host, Option<ClaimRow>), Error> {
        let host = host_load(self.datastore(), host_id).await?;
        if phase == Phase::Preprovisioning {
            return Ok((host, None));
        }
        let claim = self.bound_claim_of(&host).await?;
        if claim.is_none() {
            return Err(Error::Conflict {
                code: ErrorCode::HostNotClaimed,
                message: format!(
                    "host `{host_id}` has no bound claim: the provisioning documents are a \
                     claim's; ask for phase=preprovisioning"
                ),
            });
        }
        Ok((host, claim))
    }

    /// `GET /v1/claims/{id}/rendered`: the claim's tenant, or the admin.
    pub async fn claim_rendered(
        &self,
        caller: &Caller,
        claim_id: &ClaimId,
    ) -> Result<RenderedView, Error> {
        let (claim, host) = claim_bound(self.datastore(), caller.scope(), claim_id).await?;
        let documents = self
            .render(&host, Some(&claim), Phase::Provisioning, Hold::Peek)
            .await?;
        Ok(documents.view())
    }

    /// Holds the addresses a freshly bound claim's documents need, so that viewing them later
    /// takes nothing. Failures are logged: the claim stays bound, and its documents answer why.
    pub(crate) async fn claim_hold_addresses(&self, claim_id: &ClaimId) {
        let found = async {
            let claim = self
                .datastore()
                .claim_get(TenantScope::Every, claim_id)
                .await?;
            let Some(claim) = claim.filter(|c| c.state == podium_types::ClaimState::Bound) else {
                return Ok(());
            };
            let Some(host) = claim.host_id.as_ref() else {
                return Ok(());
            };
            let Some(host) = host_find(self.datastore(), host).await? else {
                return Ok(());
            };
            self.render(&host, Some(&claim), Phase::Provisioning, Hold::Take)
                .await
                .map(drop)
        };
        let found: Result<(), Error> = found.await;
        if let Err(e) = found {
            tracing::warn!(claim = %claim_id, error = %e, "cannot render a bound claim's documents yet");
        }
    }

    /// Renders one host's documents with the addresses they need (`host:<id>` in DHCP-less
    /// pools for preprovisioning, `claim:<id>` in the template's pools for provisioning): held
    /// now with `Hold::Take` (a host or claim keeps the address it was first given), or only
    /// those held already with `Hold::Peek`, which writes nothing.
    pub(crate) async fn render(
        &self,
        host: &Host,
        claim: Option<&ClaimRow>,
        phase: Phase,
        hold: Hold,
    ) -> Result<Documents, Error> {
        let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
        let template = self.template_text(&pm).await?;
        let mut context = vec![("pod_manager".to_owned(), pm.uuid.to_string())];
        let mut stand_ins = None;
        let (policy, addresses, consumer) = match (phase, claim) {
            (Phase::Provisioning, Some(claim)) => {
                context.push(("tenant".into(), claim.tenant_id.to_string()));
                context.push(("claim".into(), claim.id.to_string()));
                let policy = policy_of(&pm);
                let consumer =
                    consumer_input(claim.network_data.as_deref(), claim.meta_data.as_deref());
                // A consumer's own document takes no addresses from the site's pools.
                let addresses = if policy == NetworkPolicy::Consumer && claim.network_data.is_some()
                {
                    Vec::new()
                } else {
                    let pools = self.template_pools(&pm, &template).await?;
                    let owner = crate::ipam::Owner::claim(&claim.id);
                    self.render_addresses(&pm, host, &owner, &pools, hold)
                        .await?
                };
                (policy, addresses, consumer)
            }
            (Phase::Provisioning, None) if hold == Hold::Preview => {
                let pools = self.template_pools(&pm, &template).await?;
                let addresses = self.stand_in_addresses(&pm, &pools).await?;
                stand_ins = Some(
                    addresses
                        .iter()
                        .map(|a| (a.pool.clone(), a.address.clone()))
                        .collect(),
                );
                (NetworkPolicy::Admin, addresses, ConsumerInput::default())
            }
            _ => (NetworkPolicy::Admin, Vec::new(), ConsumerInput::default()),
        };
        let input = RenderInput {
            host: render_host(host)?,
            policy,
            template,
            addresses,
            context,
            consumer,
        };
        let (plugin, call) = self.renderer_of(&pm).await?;
        let meta_data = self
            .runtime()
            .renderer(&plugin, call)
            .render_meta_data(&input)
            .await
            .map_err(|e| render_failed(host, e))?;
        let network_data = match phase {
            Phase::Provisioning => {
                let (plugin, call) = self.renderer_of(&pm).await?;
                self.runtime()
                    .renderer(&plugin, call)
                    .render_network_data(&input)
                    .await
                    .map_err(|e| render_failed(host, e))?
            }
            Phase::Preprovisioning => self.preprovisioning_network_data(&pm, host, hold).await?,
        };
        Ok(Documents {
            phase,
            host_id: host.id.clone(),
            claim_id: claim.map(|c| c.id.clone()),
            meta_data,
            network_data,
            user_data: match phase {
                Phase::Provisioning => claim.and_then(|c| c.user_data.clone()),
                Phase::Preprovisioning => None,
            },
            stand_ins,
        })
    }

    /// For a preview: each pool the template names, with its network address standing in for
    /// the address a claim would be given; nothing is asked of IPAM or held.
    async fn stand_in_addresses(
        &self,
        pm: &PodManager,
        pools: &[PoolNeed],
    ) -> Result<Vec<RenderAddress>, Error> {
        let serving = self.ip_pools_serving(&pm.uuid).await?;
        pools
            .iter()
            .map(|need| {
                let pool = serving
                    .iter()
                    .find(|p| p.row.name == need.name)
                    .ok_or_else(|| pool_gone(pm, &need.name))?;
                let network = pool.row.subnet.split('/').next().unwrap_or_default();
                Ok(RenderAddress {
                    pool: need.name.clone(),
                    address: network.to_owned(),
                    prefix: u8::try_from(pool.row.prefix).unwrap_or(u8::MAX),
                    gateway: pool.row.gateway.clone(),
                    dns_servers: pool.row.dns_servers.clone(),
                })
            })
            .collect()
    }

    /// One address per pool the template names, held for `owner`.
    async fn render_addresses(
        &self,
        pm: &PodManager,
        host: &Host,
        owner: &str,
        pools: &[PoolNeed],
        hold: Hold,
    ) -> Result<Vec<RenderAddress>, Error> {
        if pools.is_empty() {
            return Ok(Vec::new());
        }
        let serving = self.ip_pools_serving(&pm.uuid).await?;
        let mut out = Vec::with_capacity(pools.len());
        for need in pools {
            let name = &need.name;
            let pool = serving
                .iter()
                .find(|p| &p.row.name == name)
                .ok_or_else(|| pool_gone(pm, name))?;
            let held = match hold {
                Hold::Take => self.ip_hold(pool, owner, host).await?,
                Hold::Peek | Hold::Preview => self
                    .ip_held(pool, owner, host, false)
                    .await?
                    .ok_or_else(|| not_held(owner, name))?,
            };
            out.push(RenderAddress {
                pool: name.clone(),
                address: held.row.address,
                prefix: held.prefix,
                gateway: held.gateway,
                dns_servers: held.dns_servers,
            });
        }
        Ok(out)
    }

    /// The ramdisk's networkData: the static configuration of the boot NIC from each DHCP-less
    /// pool of the pod manager (merged), or DHCP on the boot NIC where there is none.
    async fn preprovisioning_network_data(
        &self,
        pm: &PodManager,
        host: &Host,
        hold: Hold,
    ) -> Result<Value, Error> {
        let owner = crate::ipam::Owner::host(&host.id);
        let mut documents = Vec::new();
        for pool in self.ip_pools_serving(&pm.uuid).await? {
            if pool.row.pod_manager.as_ref() != Some(&pm.uuid)
                || !self.ip_pool_preprovisions(&pool, host).await?
            {
                continue;
            }
            let held = match hold {
                Hold::Take => Some(self.ip_hold(&pool, &owner, host).await?),
                Hold::Peek | Hold::Preview => self.ip_held(&pool, &owner, host, true).await?,
            };
            let held = held.ok_or_else(|| not_held(&owner, &pool.row.name))?;
            if let Some(doc) = held.network_data {
                documents.push(doc);
            }
        }
        let (plugin, context) = self.renderer_of(pm).await?;
        self.runtime()
            .renderer(&plugin, context)
            .render_preprovisioning_network_data(&render_host(host)?, &documents)
            .await
            .map_err(|e| render_failed(host, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renderers_refusal_names_the_field() {
        let e = refusal("", "network_data.networks[0].link: no link \"x\"");
        assert!(
            matches!(e, Error::Invalid { field: Some(f), message } if f == "network_data.networks[0].link" && message == "no link \"x\"")
        );
        let e = refusal("", "the whole thing is wrong");
        assert!(matches!(e, Error::Invalid { field: None, .. }));
    }
}
