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
//! renderer which pools it takes addresses from.

use podium_types::{ClaimId, ConfigDriveId, HostId, Phase, PodManagerId, TenantScope};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::app::Podium;
use crate::auth::Caller;
use crate::bindings::PodManager;
use crate::error::Error;
use crate::plugins::PluginRef;
use podium_runtime::{
    CallContext, CallError, ConsumerInput, NetworkPolicy, Nic, Plugin, PluginError, PoolNeed,
    RenderAddress, RenderHost, RenderInput, World,
};
use podium_store::{ClaimRow, ConfigDriveRow, HostRow};

/// The renderer a pod manager uses when the admin chose none.
pub const DEFAULT_RENDERER: &str = "render-openstack";
/// How long a config drive's URL works when the caller does not say, and at most.
const DRIVE_TTL_DEFAULT: u64 = 3600;
pub(crate) const DRIVE_TTL_MAX: u64 = 86_400;
/// The largest template accepted, as JSON text.
const TEMPLATE_MAX: usize = 256 << 10;

/// The rendered documents of one host for one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Documents {
    pub phase: Phase,
    pub host_id: HostId,
    pub claim_id: Option<ClaimId>,
    pub meta_data: Value,
    pub network_data: Value,
    pub user_data: Option<Vec<u8>>,
}

/// A config drive just made: its token is in `url` and nowhere else.
#[derive(Clone, Debug)]
pub struct ConfigDrive {
    pub row: ConfigDriveRow,
    /// The path of its URL (`/v1/config_drives/<token>.img`); the API prefixes the base URL.
    pub path: String,
}

/// Whether rendering may take the addresses the documents need, or only show those held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Hold what is missing (binding a claim, making a config drive).
    Take,
    /// Write nothing (a GET).
    Peek,
}

/// The documents need an address that was not taken yet.
fn not_held(owner: &str, pool: &str) -> Error {
    Error::Conflict {
        code: "addresses_not_held",
        message: format!(
            "`{owner}` holds no address of IP pool `{pool}` yet: addresses are taken when a \
             claim binds and when a config drive is made"
        ),
    }
}

/// What a config drive is made for.
#[derive(Clone, Copy, Debug)]
pub enum DriveFor<'a> {
    Host(&'a HostId, Phase),
    Claim(&'a ClaimId),
}

pub(crate) fn policy_of(pm: &PodManager) -> NetworkPolicy {
    match pm.row.network_config_owner.as_str() {
        "consumer" => NetworkPolicy::Consumer,
        "layered" => NetworkPolicy::Layered,
        _ => NetworkPolicy::Admin,
    }
}

/// The host as a renderer sees it.
pub(crate) fn render_host(host: &HostRow) -> Result<RenderHost, Error> {
    let nics: Vec<Nic> = serde_json::from_str(&host.nics)
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored NICs of host {}: {e}", host.id)))?;
    Ok(RenderHost {
        id: host.id.to_string(),
        name: host.name.clone(),
        uuid: host.uuid.clone(),
        boot_mac: host.boot_mac.clone(),
        nics: nics.into_iter().map(|n| (n.name, n.mac)).collect(),
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

/// A rendering that failed because the template, the host and IPAM do not fit together.
fn render_failed(host: &HostRow, e: CallError) -> Error {
    match e {
        CallError::Plugin { plugin, error } => Error::Conflict {
            code: "render_failed",
            message: format!(
                "cannot render host `{}` ({}): renderer {plugin}: {error}",
                host.id, host.name
            ),
        },
        other => Error::Plugin(other),
    }
}

impl Podium {
    /// The renderer a pod manager uses, with its configuration.
    async fn renderer_of(&self, pm: &PodManager) -> Result<(Plugin, CallContext), Error> {
        let (plugin, config) = match &pm.renderer {
            Some(binding) => (
                self.plugin_load(&binding.sha256).await?,
                binding.config.to_string(),
            ),
            None => (
                self.plugin_resolve(
                    &PluginRef {
                        name: DEFAULT_RENDERER.into(),
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

    pub(crate) async fn pod_manager_load(&self, uuid: &PodManagerId) -> Result<PodManager, Error> {
        let row = self
            .datastore
            .pod_manager_get(uuid)
            .await?
            .ok_or_else(|| Error::not_found("pod manager", uuid))?;
        PodManager::from_row(row)
    }

    /// The pod manager's template, `{}` when none was set.
    async fn template_text(&self, pm: &PodManager) -> Result<String, Error> {
        Ok(self
            .datastore
            .network_template_get(&pm.row.uuid)
            .await?
            .unwrap_or_else(|| "{}".to_owned()))
    }

    /// `GET /v1/pod_managers/{uuid}/network_template`.
    pub async fn network_template_view(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<Value, Error> {
        caller.require_admin_read()?;
        let pm = self.pod_manager_load(uuid).await?;
        let text = self
            .datastore
            .network_template_get(&pm.row.uuid)
            .await?
            .ok_or_else(|| Error::not_found("network template of pod manager", uuid))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Internal(anyhow::anyhow!("stored template of {uuid}: {e}")))
    }

    /// `PUT /v1/pod_managers/{uuid}/network_template`: checked by the pod manager's renderer;
    /// every pool it names must serve the pod manager.
    pub async fn network_template_put(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        template: Value,
    ) -> Result<Value, Error> {
        caller.require_admin()?;
        let pm = self.pod_manager_load(uuid).await?;
        if !template.is_object() {
            return Err(Error::Invalid {
                field: None,
                message: "a network template is a JSON object".into(),
            });
        }
        let text = template.to_string();
        if text.len() > TEMPLATE_MAX {
            return Err(Error::Invalid {
                field: None,
                message: format!("a network template is at most {TEMPLATE_MAX} bytes"),
            });
        }
        let pools = self.template_pools(&pm, &text).await?;
        let serving = self.ip_pools_serving(&pm.row.uuid).await?;
        for need in &pools {
            let Some(pool) = serving.iter().find(|p| p.row.name == need.name) else {
                return Err(Error::invalid(
                    need.field.clone(),
                    format!(
                        "no IP pool named `{}` serves pod manager `{}` (a pool of this pod \
                         manager, or of none)",
                        need.name, pm.row.name
                    ),
                ));
            };
            let pool_v6 = pool.row.family == 6;
            if pool_v6 != need.ipv6 {
                return Err(Error::invalid(
                    need.field.clone(),
                    format!(
                        "IP pool `{}` is {}, but its network is {}",
                        need.name,
                        if pool_v6 { "IPv6" } else { "IPv4" },
                        if need.ipv6 { "IPv6" } else { "IPv4" }
                    ),
                ));
            }
        }
        self.datastore
            .network_template_set(&pm.row.uuid, Some(&text), &podium_store::now())
            .await?;
        tracing::info!(pod_manager = %pm.row.uuid, pools = pools.len(), "network template set");
        Ok(template)
    }

    /// `DELETE /v1/pod_managers/{uuid}/network_template`.
    pub async fn network_template_delete(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<(), Error> {
        caller.require_admin()?;
        let pm = self.pod_manager_load(uuid).await?;
        if self
            .datastore
            .network_template_get(&pm.row.uuid)
            .await?
            .is_none()
        {
            return Err(Error::not_found("network template of pod manager", uuid));
        }
        self.datastore
            .network_template_set(&pm.row.uuid, None, &podium_store::now())
            .await?;
        Ok(())
    }

    /// The pools a template takes addresses from, as its renderer reads it.
    async fn template_pools(&self, pm: &PodManager, text: &str) -> Result<Vec<PoolNeed>, Error> {
        let (plugin, context) = self.renderer_of(pm).await?;
        self.runtime
            .renderer(&plugin, context)
            .validate_template(text)
            .await
            .map_err(|e| match e {
                CallError::Plugin {
                    error: PluginError::InvalidConfig(message),
                    ..
                } => refusal("", &message),
                other => Error::Plugin(other),
            })
    }

    /// Checks what a claim brings (its `network_data` and `meta_data`) on a pod manager, against
    /// a host where one is given. A refusal names the field.
    pub(crate) async fn consumer_input_check(
        &self,
        pm: &PodManager,
        host: Option<&HostRow>,
        input: &ConsumerInput,
    ) -> Result<(), Error> {
        let policy = policy_of(pm);
        let template = self.template_text(pm).await?;
        let host = host.map(render_host).transpose()?;
        let (plugin, context) = self.renderer_of(pm).await?;
        self.runtime
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
                    code: "network_config_owned_by_site",
                    message,
                },
                other => Error::Plugin(other),
            })
    }

    /// `GET /v1/hosts/{id}/rendered?phase=`: any host, for the admin.
    pub async fn host_rendered(
        &self,
        caller: &Caller,
        host_id: &HostId,
        phase: Phase,
    ) -> Result<Documents, Error> {
        caller.require_admin_read()?;
        let (host, claim) = self.host_with_bound_claim(host_id, phase).await?;
        self.render(&host, claim.as_ref(), phase, Hold::Peek).await
    }

    /// A host and, for the provisioning phase, its bound claim: the provisioning documents are
    /// a claim's, so a host without one is a 409.
    async fn host_with_bound_claim(
        &self,
        host_id: &HostId,
        phase: Phase,
    ) -> Result<(HostRow, Option<ClaimRow>), Error> {
        let host = self
            .datastore
            .host_get(host_id)
            .await?
            .ok_or_else(|| Error::not_found("host", host_id))?;
        if phase == Phase::Preprovisioning {
            return Ok((host, None));
        }
        let claim = match &host.claim_id {
            Some(c) => self
                .datastore
                .claim_get(TenantScope::Every, c)
                .await?
                .filter(|c| c.state == podium_types::ClaimState::Bound),
            None => None,
        };
        if claim.is_none() {
            return Err(Error::Conflict {
                code: "host_not_claimed",
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
    ) -> Result<Documents, Error> {
        let (claim, host) = self.claim_bound(caller, claim_id).await?;
        self.render(&host, Some(&claim), Phase::Provisioning, Hold::Peek)
            .await
    }

    /// A claim that is bound, with its host; a pending, failed or releasing one has no
    /// documents (a released claim's drive must not outlive it).
    async fn claim_bound(
        &self,
        caller: &Caller,
        claim_id: &ClaimId,
    ) -> Result<(ClaimRow, HostRow), Error> {
        let (claim, host) = self.claim_view(caller, claim_id).await?;
        match host {
            Some(host) if claim.state == podium_types::ClaimState::Bound => Ok((claim, host)),
            _ => Err(Error::Conflict {
                code: "claim_not_bound",
                message: format!(
                    "claim `{claim_id}` is {}: only a bound claim has documents to render",
                    claim.state
                ),
            }),
        }
    }

    /// Holds the addresses a freshly bound claim's documents need, so that viewing them later
    /// takes nothing. Failures are logged: the claim stays bound, and its documents answer why.
    pub(crate) async fn claim_hold_addresses(&self, claim_id: &ClaimId) {
        let found = async {
            let claim = self
                .datastore
                .claim_get(TenantScope::Every, claim_id)
                .await?;
            let Some(claim) = claim.filter(|c| c.state == podium_types::ClaimState::Bound) else {
                return Ok(());
            };
            let Some(host) = claim.host_id.as_ref() else {
                return Ok(());
            };
            let Some(host) = self.datastore.host_get(host).await? else {
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
        host: &HostRow,
        claim: Option<&ClaimRow>,
        phase: Phase,
        hold: Hold,
    ) -> Result<Documents, Error> {
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        let template = self.template_text(&pm).await?;
        let mut context = vec![("pod_manager".to_owned(), pm.row.uuid.to_string())];
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
            .runtime
            .renderer(&plugin, call)
            .render_meta_data(&input)
            .await
            .map_err(|e| render_failed(host, e))?;
        let network_data = match phase {
            Phase::Provisioning => {
                let (plugin, call) = self.renderer_of(&pm).await?;
                self.runtime
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
        })
    }

    /// One address per pool the template names, held for `owner`.
    async fn render_addresses(
        &self,
        pm: &PodManager,
        host: &HostRow,
        owner: &str,
        pools: &[PoolNeed],
        hold: Hold,
    ) -> Result<Vec<RenderAddress>, Error> {
        if pools.is_empty() {
            return Ok(Vec::new());
        }
        let serving = self.ip_pools_serving(&pm.row.uuid).await?;
        let mut out = Vec::with_capacity(pools.len());
        for need in pools {
            let name = &need.name;
            let pool = serving
                .iter()
                .find(|p| &p.row.name == name)
                .ok_or_else(|| Error::Conflict {
                    code: "render_failed",
                    message: format!(
                        "the network template of pod manager `{}` names IP pool `{name}`, which \
                         no longer serves it",
                        pm.row.name
                    ),
                })?;
            let held = match hold {
                Hold::Take => self.ip_hold(pool, owner, host).await?,
                Hold::Peek => self
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
        host: &HostRow,
        hold: Hold,
    ) -> Result<Value, Error> {
        let owner = crate::ipam::Owner::host(&host.id);
        let mut documents = Vec::new();
        for pool in self.ip_pools_serving(&pm.row.uuid).await? {
            if pool.row.pod_manager.as_ref() != Some(&pm.row.uuid)
                || !self.ip_pool_preprovisions(&pool, host).await?
            {
                continue;
            }
            let held = match hold {
                Hold::Take => Some(self.ip_hold(&pool, &owner, host).await?),
                Hold::Peek => self.ip_held(&pool, &owner, host, true).await?,
            };
            let held = held.ok_or_else(|| not_held(&owner, &pool.row.name))?;
            if let Some(doc) = held.network_data {
                documents.push(doc);
            }
        }
        if documents.is_empty() {
            let facts = render_host(host)?;
            let Some(mac) = facts
                .boot_mac
                .clone()
                .or_else(|| facts.nics.first().map(|(_, mac)| mac.clone()))
            else {
                return Ok(json!({"links": [], "networks": [], "services": []}));
            };
            return Ok(json!({
                "links": [{"id": "boot", "type": "phy", "ethernet_mac_address": mac}],
                "networks": [{"id": "boot-dhcp", "network_id": "boot-dhcp", "type": "ipv4_dhcp", "link": "boot"}],
                "services": [],
            }));
        }
        Ok(merge_network_data(documents))
    }

    /// Renders and stores a config drive; its URL's token is answered once, here.
    pub async fn config_drive_create(
        &self,
        caller: &Caller,
        target: DriveFor<'_>,
        expires_in: Option<u64>,
    ) -> Result<ConfigDrive, Error> {
        let ttl = expires_in.unwrap_or(DRIVE_TTL_DEFAULT);
        if !(60..=DRIVE_TTL_MAX).contains(&ttl) {
            return Err(Error::invalid(
                "expires_in",
                format!("must be between 60 and {DRIVE_TTL_MAX} seconds"),
            ));
        }
        let documents = match target {
            DriveFor::Host(id, phase) => {
                caller.require_admin()?;
                let (host, claim) = self.host_with_bound_claim(id, phase).await?;
                self.render(&host, claim.as_ref(), phase, Hold::Take)
                    .await?
            }
            DriveFor::Claim(id) => {
                if let Caller::Tenant {
                    read_only: true, ..
                }
                | Caller::Admin {
                    read_only: true, ..
                } = caller
                {
                    return Err(Error::Forbidden("this token is read-only".into()));
                }
                let (claim, host) = self.claim_bound(caller, id).await?;
                self.render(&host, Some(&claim), Phase::Provisioning, Hold::Take)
                    .await?
            }
        };
        self.config_drive_store(documents, ttl).await
    }

    /// Builds and stores the config drive of rendered documents, working for `ttl` seconds.
    pub(crate) async fn config_drive_store(
        &self,
        documents: Documents,
        ttl: u64,
    ) -> Result<ConfigDrive, Error> {
        let meta_data = documents.meta_data.to_string();
        let network_data = documents.network_data.to_string();
        let image = crate::config_drive::build(&crate::config_drive::Contents {
            meta_data: meta_data.as_bytes(),
            network_data: network_data.as_bytes(),
            user_data: documents.user_data.as_deref(),
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("building a config drive: {e}")))?;
        let token = format!("cd_{}", hex::encode(rand::random::<[u8; 32]>()));
        let now = time::OffsetDateTime::now_utc();
        let row = ConfigDriveRow {
            id: ConfigDriveId::generate(),
            token_hash: hex::encode(Sha256::digest(token.as_bytes())),
            host_id: documents.host_id,
            claim_id: documents.claim_id,
            phase: documents.phase.as_str().to_owned(),
            meta_data,
            network_data,
            user_data: documents.user_data,
            sha256: image.sha256,
            size: i64::try_from(image.bytes.len()).unwrap_or(i64::MAX),
            created_at: podium_store::format_time(now),
            expires_at: podium_store::format_time(
                now + time::Duration::seconds(i64::try_from(ttl).unwrap_or(i64::MAX)),
            ),
        };
        self.datastore
            .config_drive_create(&row, &row.created_at)
            .await?;
        tracing::info!(drive = %row.id, host = %row.host_id, phase = %row.phase, expires_at = %row.expires_at, "config drive made");
        Ok(ConfigDrive {
            row,
            path: format!("/v1/config_drives/{token}.img"),
        })
    }

    /// The image behind a config drive URL (`<token>.img`), rebuilt from its stored documents;
    /// not found once it expired, or for any other name.
    pub async fn config_drive_image(&self, name: &str) -> Result<(ConfigDriveRow, Vec<u8>), Error> {
        let not_found = || Error::not_found("config drive", "(this URL)");
        let token = name.strip_suffix(".img").ok_or_else(not_found)?;
        if !token.starts_with("cd_") || token.len() != 67 {
            return Err(not_found());
        }
        let hash = hex::encode(Sha256::digest(token.as_bytes()));
        let row = self
            .datastore
            .config_drive_by_token(&hash, &podium_store::now())
            .await?
            .ok_or_else(not_found)?;
        let image = crate::config_drive::build(&crate::config_drive::Contents {
            meta_data: row.meta_data.as_bytes(),
            network_data: row.network_data.as_bytes(),
            user_data: row.user_data.as_deref(),
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("rebuilding config drive {}: {e}", row.id)))?;
        if image.sha256 != row.sha256 {
            return Err(Error::Internal(anyhow::anyhow!(
                "config drive {} rebuilt to different bytes",
                row.id
            )));
        }
        Ok((row, image.bytes))
    }
}

/// Merges `network_data.json` documents (one per DHCP-less pool: IPv4 and IPv6 on the same boot
/// NIC): links by id, networks in order with ids made unique, DNS services without repeats.
fn merge_network_data(documents: Vec<Value>) -> Value {
    let mut links: Vec<Value> = Vec::new();
    let mut networks: Vec<Value> = Vec::new();
    let mut services: Vec<Value> = Vec::new();
    for doc in documents {
        let list = |key: &str| {
            doc.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for link in list("links") {
            if !links.iter().any(|l| l.get("id") == link.get("id")) {
                links.push(link);
            }
        }
        for mut network in list("networks") {
            let id = network
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("net")
                .to_owned();
            let mut unique = id.clone();
            let mut n = 1;
            while networks
                .iter()
                .any(|x| x.get("id").and_then(Value::as_str) == Some(&unique))
            {
                unique = format!("{id}-{n}");
                n += 1;
            }
            if unique != id {
                network["id"] = Value::String(unique.clone());
                network["network_id"] = Value::String(unique);
            }
            networks.push(network);
        }
        for service in list("services") {
            if !services.contains(&service) {
                services.push(service);
            }
        }
    }
    json!({"links": links, "networks": networks, "services": services})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_documents_share_links_and_keep_every_network() {
        let v4 = json!({
            "links": [{"id": "boot", "type": "phy", "ethernet_mac_address": "aa:bb:cc:dd:ee:ff"}],
            "networks": [{"id": "boot", "network_id": "boot", "type": "ipv4", "link": "boot"}],
            "services": [{"type": "dns", "address": "192.0.2.53"}],
        });
        let v6 = json!({
            "links": [{"id": "boot", "type": "phy", "ethernet_mac_address": "aa:bb:cc:dd:ee:ff"}],
            "networks": [{"id": "boot", "network_id": "boot", "type": "ipv6", "link": "boot"}],
            "services": [{"type": "dns", "address": "192.0.2.53"}, {"type": "dns", "address": "2001:db8::53"}],
        });
        let merged = merge_network_data(vec![v4, v6]);
        assert_eq!(merged["links"].as_array().unwrap().len(), 1);
        let ids: Vec<&str> = merged["networks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["boot", "boot-1"]);
        assert_eq!(merged["networks"][1]["network_id"], "boot-1");
        assert_eq!(merged["services"].as_array().unwrap().len(), 2);
    }

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
