//! IPAM, the application side: pools, and claims of addresses from them.
//!
//! The host is the only owner of allocation state. An allocation runs under the pool's
//! in-process lock: the pool's plugin proposes an address, asking the host's `allocations`
//! import (answered from the committed free extents), and the host commits the proposal in one
//! transaction that takes the address out of its extent and inserts the allocation. The commit
//! checks the pool's generation and that the address is still free, so a proposal made against
//! state another process changed meanwhile is retried, never committed twice; the unique
//! constraints on (pool, address) and (pool, owner) hold even against bugs.
//!
//! **Architecture Invariant:** only this module writes `ip_allocations` and `ip_free`, and only
//! through the transactions in `store/ipam.rs`.

mod allocate;
pub(crate) mod cache;
mod pool;
pub(crate) mod space;

pub(crate) use podium_types::Owner;
pub(crate) use pool::{IpClaim, IpPool, Usage};

use podium_types::{ErrorCode, IpClaimId, IpPoolId, PodManagerId, TenantScope};
use std::net::IpAddr;

use crate::app::Podium;
use crate::app::page;
use crate::auth::Caller;
use crate::bindings::DEFAULT_IPAM;
use crate::data::{IpPoolRow, host_find, pod_manager_find};
use crate::error::Error;
use podium_runtime::{IpamHost, World};
use podium_types::requests::{IpClaimCreate, IpPoolCreate, IpPoolUpdate, PluginBindingParams};
use podium_types::views::{IpClaimView, IpPoolView, List};

use self::space::{Space, SpaceParams, parse_addr};

const DNS_SERVERS_MAX: usize = 8;

/// The facts an IPAM plugin gets about a host: its NICs and the one it boots from.
fn host_facts(host: &crate::data::Host) -> Result<IpamHost, Error> {
    let nics = &host.nics;
    Ok(IpamHost {
        id: host.id.to_string(),
        name: host.name.clone(),
        boot_mac: host
            .boot_mac
            .clone()
            .or_else(|| nics.first().map(|n| n.mac.clone())),
        nics: nics
            .iter()
            .map(|n| (n.name.clone(), n.mac.clone()))
            .collect(),
    })
}

/// The pool a request defines, checked, as a row (without ids and counters).
struct Checked {
    space: Space,
    row: IpPoolRow,
}

impl Podium {
    /// Checks everything of a pool definition but the name's uniqueness.
    async fn ip_pool_check(
        &self,
        def: IpPoolCreate,
        base: Option<&IpPool>,
    ) -> Result<Checked, Error> {
        crate::labels::validate_name(&def.name)?;
        let space = Space::new(SpaceParams {
            ranges: &def.ranges,
            prefix: def.prefix,
            gateway: def.gateway.as_deref(),
            reserved: &def.reserved,
            pre_allocations: &def.pre_allocations,
        })?;
        if def.dns_servers.len() > DNS_SERVERS_MAX {
            return Err(Error::invalid(
                "dns_servers",
                format!("at most {DNS_SERVERS_MAX} servers"),
            ));
        }
        let mut dns_servers = Vec::with_capacity(def.dns_servers.len());
        for (i, dns) in def.dns_servers.iter().enumerate() {
            dns_servers.push(parse_addr(&format!("dns_servers[{i}]"), dns, None)?.to_string());
        }
        let pod_manager = match &def.pod_manager {
            Some(uuid) => Some(pod_manager_find(self.datastore(), uuid).await?.ok_or_else(
                || Error::invalid("pod_manager", format!("no pod manager `{uuid}`")),
            )?),
            None => None,
        };
        for (i, tenant) in def.tenants.iter().enumerate() {
            if self.datastore().tenant_get(tenant).await?.is_none() {
                return Err(Error::invalid(
                    format!("tenants[{i}]"),
                    format!("no tenant `{tenant}`"),
                ));
            }
        }
        let plugin = match (def.plugin, base) {
            (Some(p), _) => {
                self.plugins()
                    .binding_resolve("plugin", &p, World::Ipam)
                    .await?
            }
            (None, Some(base)) => base.row.plugin.clone(),
            (None, None) => match &pod_manager {
                Some(pm) => pm.ipam.clone(),
                None => {
                    let p = PluginBindingParams {
                        name: DEFAULT_IPAM.into(),
                        ..Default::default()
                    };
                    self.plugins()
                        .binding_resolve("plugin", &p, World::Ipam)
                        .await?
                }
            },
        };
        let now = podium_types::Timestamp::now();
        let row = IpPoolRow {
            id: base.map(|b| b.row.id.clone()).unwrap_or_default(),
            name: def.name,
            family: space.family.number(),
            subnet: space.subnet.display(),
            prefix: i64::from(def.prefix),
            gateway: space.gateway.map(|g| space.addr(g).to_string()),
            dns_servers,
            ranges: def.ranges,
            reserved: def.reserved,
            pre_allocations: def.pre_allocations,
            plugin,
            pod_manager: def.pod_manager,
            tenants: def.tenants,
            generation: base.map_or(0, |b| b.row.generation),
            created_at: base.map_or_else(|| now, |b| b.row.created_at),
            updated_at: now,
        };
        Ok(Checked { space, row })
    }

    async fn ip_pool_name_free(&self, name: &str, except: Option<&IpPoolId>) -> Result<(), Error> {
        if self.datastore().ip_pool_name_taken(name, except).await? {
            return Err(Error::ConflictField {
                code: ErrorCode::NameTaken,
                field: "name".into(),
                message: format!("an IP pool named `{name}` already exists"),
            });
        }
        Ok(())
    }

    pub async fn ip_pool_create(
        &self,
        caller: &Caller,
        params: IpPoolCreate,
    ) -> Result<IpPoolView, Error> {
        caller.require_admin()?;
        let Checked { mut row, .. } = self.ip_pool_check(params, None).await?;
        self.ip_pool_name_free(&row.name, None).await?;
        row.id = IpPoolId::generate();
        match self.datastore().ip_pool_create(&row).await {
            Ok(()) => IpPool::from_row(row).map(|pool| {
                let usage = pool.usage(0, 0);
                pool.view(usage)
            }),
            // Two creations with one name racing: the unique index decides.
            Err(e) if crate::data::is_conflict(&e) => {
                self.ip_pool_name_free(&row.name, None).await?;
                Err(Error::Conflict {
                    code: ErrorCode::Conflict,
                    message: "the pool conflicts with another one".into(),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn ip_pool_load(&self, id: &IpPoolId) -> Result<IpPool, Error> {
        let row = self
            .datastore()
            .ip_pool_get(id)
            .await?
            .ok_or_else(|| Error::not_found("IP pool", id))?;
        IpPool::from_row(row)
    }

    pub async fn ip_pool_view(&self, caller: &Caller, id: &IpPoolId) -> Result<IpPoolView, Error> {
        caller.require_admin_read()?;
        let pool = self.ip_pool_load(id).await?;
        let usage = self.ip_pool_usage(&pool).await?;
        Ok(pool.view(usage))
    }

    /// One query, however many addresses the pool pre-allocates.
    async fn ip_pool_usage(&self, pool: &IpPool) -> Result<Usage, Error> {
        let owners: Vec<&str> = pool
            .row
            .pre_allocations
            .keys()
            .map(String::as_str)
            .collect();
        let (allocated, claimed) = self
            .datastore()
            .ip_pool_counts(&pool.row.id, &owners)
            .await?;
        Ok(pool.usage(
            u128::try_from(allocated).unwrap_or(0),
            u128::try_from(claimed).unwrap_or(0),
        ))
    }

    /// Every pool's name and usage, for the metrics.
    pub(crate) async fn ip_pool_usages(&self) -> Result<Vec<(String, Usage)>, Error> {
        let mut usages = Vec::new();
        let mut cursor = None;
        loop {
            let paged = self
                .datastore()
                .ip_pool_list(None, None, &page(Some(1000), cursor)?)
                .await?;
            for row in paged.items {
                // A pool whose stored definition no longer checks is logged, not fatal to the
                // scrape of every other metric.
                let pool = match IpPool::from_row(row) {
                    Ok(pool) => pool,
                    Err(e) => {
                        tracing::warn!(error = %e, "metrics: a pool left out");
                        continue;
                    }
                };
                let usage = self.ip_pool_usage(&pool).await?;
                usages.push((pool.row.name, usage));
            }
            match paged.next {
                Some(next) => cursor = Some(next),
                None => return Ok(usages),
            }
        }
    }

    pub async fn ip_pool_list(
        &self,
        caller: &Caller,
        pod_manager: Option<PodManagerId>,
        name: Option<&str>,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> Result<List<IpPoolView>, Error> {
        caller.require_admin_read()?;
        let paged = self
            .datastore()
            .ip_pool_list(pod_manager.as_ref(), name, &page(limit, cursor)?)
            .await?;
        let mut items = Vec::with_capacity(paged.items.len());
        for row in paged.items {
            let pool = IpPool::from_row(row)?;
            let usage = self.ip_pool_usage(&pool).await?;
            items.push(pool.view(usage));
        }
        Ok(List {
            items,
            next: paged.next,
        })
    }

    pub async fn ip_pool_update(
        &self,
        caller: &Caller,
        id: &IpPoolId,
        params: IpPoolUpdate,
    ) -> Result<IpPoolView, Error> {
        caller.require_admin()?;
        let entry = self.inner.ipam_locks.get(id);
        let mut state = entry.state.lock().await;
        // Whatever happens, the cached free space is rebuilt from the stored pool next time.
        *state = None;
        let base = self.ip_pool_load(id).await?;
        let def = IpPoolCreate {
            name: params.name.unwrap_or_else(|| base.row.name.clone()),
            ranges: params.ranges.unwrap_or_else(|| base.row.ranges.clone()),
            prefix: params
                .prefix
                .unwrap_or(u8::try_from(base.row.prefix).unwrap_or(u8::MAX)),
            gateway: params.gateway.unwrap_or_else(|| base.row.gateway.clone()),
            dns_servers: params
                .dns_servers
                .unwrap_or_else(|| base.row.dns_servers.clone()),
            reserved: params.reserved.unwrap_or_else(|| base.row.reserved.clone()),
            pre_allocations: params
                .pre_allocations
                .unwrap_or_else(|| base.row.pre_allocations.clone()),
            plugin: params.plugin,
            pod_manager: params
                .pod_manager
                .unwrap_or_else(|| base.row.pod_manager.clone()),
            tenants: params.tenants.unwrap_or_else(|| base.row.tenants.clone()),
        };
        let Checked { space, row } = self.ip_pool_check(def, Some(&base)).await?;
        self.ip_pool_name_free(&row.name, Some(id)).await?;
        // Under the pool's lock, no address is taken while the held ones are checked against
        // the new definition.
        let Some(mut lock) = self.datastore().ip_pool_lock(id).await? else {
            return Err(Error::not_found("IP pool", id));
        };
        for a in lock.allocations().await? {
            let v = space::from_key(&a.addr_key).ok_or_else(|| {
                Error::Internal(anyhow::anyhow!("allocation {} has a bad key", a.id))
            })?;
            let refuse = |field: &str, why: &str| Error::ConflictField {
                code: ErrorCode::PoolInUse,
                field: field.into(),
                message: format!(
                    "{} (held by `{}`) would {why}; release it first",
                    a.address, a.owner
                ),
            };
            if !space.ranges.iter().any(|&(s, e)| (s..=e).contains(&v)) {
                return Err(refuse("ranges", "fall outside the pool's ranges"));
            }
            if space.gateway == Some(v) {
                return Err(refuse("gateway", "be the gateway"));
            }
            if space.excluded.contains(&v) {
                return Err(refuse("reserved", "be reserved"));
            }
            if let Some(other) = space.pre_allocated_to(v)
                && other != a.owner
            {
                return Err(refuse(
                    "pre_allocations",
                    &format!("be pre-allocated to `{other}`"),
                ));
            }
            if let Some(&mine) = space.pre_allocations.get(&a.owner)
                && mine != v
            {
                return Err(refuse(
                    "pre_allocations",
                    &format!(
                        "differ from its owner's pre-allocation {}",
                        space.addr(mine)
                    ),
                ));
            }
        }
        lock.replace(&row).await?;
        let pool = self.ip_pool_load(id).await?;
        let usage = self.ip_pool_usage(&pool).await?;
        Ok(pool.view(usage))
    }

    pub async fn ip_pool_delete(&self, caller: &Caller, id: &IpPoolId) -> Result<(), Error> {
        caller.require_admin()?;
        let entry = self.inner.ipam_locks.get(id);
        let mut state = entry.state.lock().await;
        *state = None;
        match self.datastore().ip_pool_delete(id).await? {
            None => Err(Error::not_found("IP pool", id)),
            Some(0) => {
                self.inner.ipam_locks.forget(id);
                Ok(())
            }
            Some(n) => Err(Error::Conflict {
                code: ErrorCode::PoolInUse,
                message: format!(
                    "the pool still holds {n} allocated addresses; release them first"
                ),
            }),
        }
    }

    /// Claims an address from a pool for an owner. Answers the claim and whether it is new
    /// (`false`: the owner already held it, and gets the same one back).
    pub async fn ip_claim_create(
        &self,
        caller: &Caller,
        pool_id: &IpPoolId,
        params: IpClaimCreate,
    ) -> Result<(IpClaimView, bool), Error> {
        caller.require_admin()?;
        let owner =
            Owner::parse(&params.owner).map_err(|e| Error::invalid("owner", e.to_string()))?;
        let host = match &owner {
            Owner::Host(id) => {
                let host = host_find(self.datastore(), id)
                    .await?
                    .ok_or_else(|| Error::invalid("owner", format!("no host `{id}`")))?;
                Some(host_facts(&host)?)
            }
            Owner::Claim(id) => {
                if self
                    .datastore()
                    .claim_get(TenantScope::Every, id)
                    .await?
                    .is_none()
                {
                    return Err(Error::invalid("owner", format!("no claim `{id}`")));
                }
                None
            }
            Owner::Name(_) => None,
        };
        let (claim, created) = self
            .ip_allocate(pool_id, &params.owner, host, params.address.as_deref())
            .await?;
        Ok((claim.view(), created))
    }

    pub async fn ip_claim_view(
        &self,
        caller: &Caller,
        pool_id: &IpPoolId,
        id: &IpClaimId,
    ) -> Result<IpClaimView, Error> {
        caller.require_admin_read()?;
        let pool = self.ip_pool_load(pool_id).await?;
        let row = self
            .datastore()
            .ip_allocation_get(pool_id, id)
            .await?
            .ok_or_else(|| Error::not_found("IP claim", id))?;
        let host = match Owner::parse(&row.owner) {
            Ok(Owner::Host(h)) => match host_find(self.datastore(), &h).await? {
                Some(host) => Some(host_facts(&host)?),
                None => None,
            },
            _ => None,
        };
        let request = pool.request(&row.owner, host);
        let address = parse_addr("address", &row.address, None)?;
        let network_data = self.ip_network_data(&pool, &request, address).await?;
        Ok(pool.claim(row, network_data).view())
    }

    pub async fn ip_claim_list(
        &self,
        caller: &Caller,
        pool_id: &IpPoolId,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> Result<List<IpClaimView>, Error> {
        caller.require_admin_read()?;
        let pool = self.ip_pool_load(pool_id).await?;
        let paged = self
            .datastore()
            .ip_allocation_list(pool_id, &page(limit, cursor)?)
            .await?;
        Ok(List {
            items: paged
                .items
                .into_iter()
                .map(|row| pool.claim(row, None).view())
                .collect(),
            next: paged.next,
        })
    }

    pub async fn ip_claim_delete(
        &self,
        caller: &Caller,
        pool_id: &IpPoolId,
        id: &IpClaimId,
    ) -> Result<(), Error> {
        caller.require_admin()?;
        if self.datastore().ip_pool_get(pool_id).await?.is_none() {
            return Err(Error::not_found("IP pool", pool_id));
        }
        if !self.ip_release(pool_id, id).await? {
            return Err(Error::not_found("IP claim", id));
        }
        Ok(())
    }

    /// Releases every address an owner holds, in every pool (a claim released, a host deleted).
    /// `keep` spares the allocations of pools it selects.
    pub(crate) async fn ip_release_owner(
        &self,
        owner: &str,
        keep: impl Fn(&IpPool) -> bool,
    ) -> Result<usize, Error> {
        let mut released = 0;
        for a in self.datastore().ip_allocations_of_owner(owner).await? {
            let pool = self.ip_pool_load(&a.pool_id).await?;
            if keep(&pool) {
                continue;
            }
            if self.ip_release(&a.pool_id, &a.id).await? {
                released += 1;
            }
        }
        Ok(released)
    }

    /// Releases the addresses of hosts that are gone (their pod manager was deleted).
    pub(crate) async fn ip_release_gone_hosts(&self) -> Result<usize, Error> {
        let mut released = 0;
        for (pool_id, id) in self.datastore().ip_allocations_of_gone_hosts().await? {
            if self.ip_release(&pool_id, &id).await? {
                released += 1;
            }
        }
        Ok(released)
    }

    /// The pools a pod manager may use, decoded: its own and those bound to no pod manager.
    pub(crate) async fn ip_pools_serving(
        &self,
        pod_manager: &PodManagerId,
    ) -> Result<Vec<IpPool>, Error> {
        self.datastore()
            .ip_pools_serving(pod_manager)
            .await?
            .into_iter()
            .map(IpPool::from_row)
            .collect()
    }

    /// Holds an address of `pool` for `owner` (the one it holds already, if any), with the
    /// host's facts for strategies that need them. For the application's own use (rendering):
    /// the caller has been checked.
    pub(crate) async fn ip_hold(
        &self,
        pool: &IpPool,
        owner: &str,
        host: &crate::data::Host,
    ) -> Result<IpClaim, Error> {
        let (claim, _) = self
            .ip_allocate(&pool.row.id, owner, Some(host_facts(host)?), None)
            .await?;
        Ok(claim)
    }

    /// The address `owner` holds in `pool`, if any, allocating nothing; with its preprovisioning
    /// networkData where `network_data` asks for it and the strategy writes one.
    pub(crate) async fn ip_held(
        &self,
        pool: &IpPool,
        owner: &str,
        host: &crate::data::Host,
        network_data: bool,
    ) -> Result<Option<IpClaim>, Error> {
        let Some(row) = self
            .datastore()
            .ip_allocation_of_owner(&pool.row.id, owner)
            .await?
        else {
            return Ok(None);
        };
        let data = match (network_data, row.address.parse::<IpAddr>()) {
            (true, Ok(address)) => {
                let request = pool.request(owner, Some(host_facts(host)?));
                self.ip_network_data(pool, &request, address).await?
            }
            _ => None,
        };
        Ok(Some(pool.claim(row, data)))
    }

    /// Whether a pool's strategy writes preprovisioning networkData for hosts (ipam-dhcpless
    /// does, ipam-static does not): asked of the plugin, with the pool's first address as a
    /// stand-in, allocating nothing.
    pub(crate) async fn ip_pool_preprovisions(
        &self,
        pool: &IpPool,
        host: &crate::data::Host,
    ) -> Result<bool, Error> {
        let Some((first, _)) = pool.space.ranges_text().into_iter().next() else {
            return Ok(false);
        };
        let Ok(first) = first.parse::<IpAddr>() else {
            return Ok(false);
        };
        let request = pool.request(&Owner::host(&host.id), Some(host_facts(host)?));
        Ok(self.ip_network_data(pool, &request, first).await?.is_some())
    }

    /// The addresses a host claim has: the claim's own and, while it is bound, its host's.
    /// The caller has been checked for the claim already.
    pub(crate) async fn claim_addresses(
        &self,
        claim: &crate::data::ClaimRow,
        host: Option<&crate::data::Host>,
    ) -> Result<Vec<IpClaim>, Error> {
        let mut owners = vec![Owner::claim(&claim.id)];
        if let Some(h) = host {
            owners.push(Owner::host(&h.id));
        }
        let mut claims = Vec::new();
        for owner in owners {
            for a in self.datastore().ip_allocations_of_owner(&owner).await? {
                let pool = self.ip_pool_load(&a.pool_id).await?;
                claims.push(pool.claim(a, None));
            }
        }
        Ok(claims)
    }
}
