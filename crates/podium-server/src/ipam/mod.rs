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

pub mod space;

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;
use crate::params::{
    IpClaimCreate, IpPoolCreate, IpPoolUpdate, IpRangeParams, PluginBindingParams,
};
use crate::pod_managers::{DEFAULT_IPAM, PluginBinding, page};
use podium_runtime::{
    Allocations, CallContext, CallError, IpamHost, IpamPool, IpamRequest, Nic, PluginError, World,
};
use podium_store::{Backend, IpAllocationRow, IpPoolRow, Missed, Paged};

use self::space::{Family, FreeSpace, Space, SpaceParams, parse_addr};

/// How often an allocation is retried when the pool changed under it.
const COMMIT_ATTEMPTS: usize = 16;
const OWNER_MAX: usize = 253;
/// How long a pool's cached free space is trusted where other processes may allocate too.
const STATE_MAX_AGE: Duration = Duration::from_secs(2);
const DNS_SERVERS_MAX: usize = 8;

/// A stored pool with its definition decoded and checked.
#[derive(Clone, Debug)]
pub struct IpPool {
    pub row: IpPoolRow,
    pub space: Space,
    pub ranges: Vec<IpRangeParams>,
    pub dns_servers: Vec<String>,
    pub reserved: Vec<String>,
    pub pre_allocations: BTreeMap<String, String>,
    pub plugin: PluginBinding,
    pub tenants: Vec<String>,
}

/// How many addresses a pool has and how many are in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub total: u128,
    pub allocated: u128,
    /// Pre-allocated to an owner that has not claimed it yet.
    pub pre_allocated: u128,
    pub free: u128,
}

impl IpPool {
    fn from_row(row: IpPoolRow) -> Result<IpPool, Error> {
        fn decode<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, Error> {
            serde_json::from_str(text)
                .map_err(|e| Error::Internal(anyhow::anyhow!("stored pool {what}: {e}")))
        }
        let ranges: Vec<IpRangeParams> = decode("ranges", &row.ranges)?;
        let reserved: Vec<String> = decode("reserved", &row.reserved)?;
        let pre_allocations: BTreeMap<String, String> =
            decode("pre_allocations", &row.pre_allocations)?;
        let space = Space::new(SpaceParams {
            ranges: &ranges,
            prefix: u8::try_from(row.prefix).unwrap_or(u8::MAX),
            gateway: row.gateway.as_deref(),
            reserved: &reserved,
            pre_allocations: &pre_allocations,
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored pool {} is invalid: {e}", row.id)))?;
        Ok(IpPool {
            dns_servers: decode("dns_servers", &row.dns_servers)?,
            plugin: decode("plugin", &row.plugin)?,
            tenants: decode("tenants", &row.tenants)?,
            space,
            ranges,
            reserved,
            pre_allocations,
            row,
        })
    }

    /// Usage from the number of allocations; pre-allocations count as used until claimed.
    pub fn usage(&self, allocated: u128, claimed_pre_allocations: u128) -> Usage {
        let total = self.space.total();
        let pre_allocated =
            (self.space.pre_allocations.len() as u128).saturating_sub(claimed_pre_allocations);
        Usage {
            total,
            allocated,
            pre_allocated,
            free: total.saturating_sub(allocated + pre_allocated),
        }
    }

    fn request(&self, owner: &str, host: Option<IpamHost>) -> IpamRequest {
        IpamRequest {
            pool: IpamPool {
                id: self.row.id.clone(),
                name: self.row.name.clone(),
                ranges: self.space.ranges_text(),
                prefix: u8::try_from(self.row.prefix).unwrap_or(u8::MAX),
                gateway: self.row.gateway.clone(),
                dns_servers: self.dns_servers.clone(),
            },
            owner: owner.to_owned(),
            host,
        }
    }
}

/// An address held by an owner, as the API shows it.
#[derive(Clone, Debug)]
pub struct IpClaim {
    pub row: IpAllocationRow,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
    /// The preprovisioning networkData, from a plugin that writes one (ipam-dhcpless).
    pub network_data: Option<serde_json::Value>,
}

/// Who an address is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    Host(String),
    Claim(String),
    Name(String),
}

/// Checks the text of an owner: 1 to 253 characters of letters, digits, `.`, `_`, `-`, `:`, `/`.
pub(crate) fn validate_owner_text(field: &str, owner: &str) -> Result<(), Error> {
    if owner.is_empty()
        || owner.len() > OWNER_MAX
        || !owner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-:/".contains(&b))
    {
        return Err(Error::invalid(
            field,
            format!(
                "an owner is `host:<id>`, `claim:<id>` or a name of 1 to {OWNER_MAX} characters \
                 of A-Z, a-z, 0-9, `.`, `_`, `-`, `:` and `/`"
            ),
        ));
    }
    Ok(())
}

impl Owner {
    pub fn parse(field: &str, text: &str) -> Result<Owner, Error> {
        validate_owner_text(field, text)?;
        Ok(match text.split_once(':') {
            Some(("host", id)) => Owner::Host(id.to_owned()),
            Some(("claim", id)) => Owner::Claim(id.to_owned()),
            _ => Owner::Name(text.to_owned()),
        })
    }

    pub fn host(id: &str) -> String {
        format!("host:{id}")
    }

    pub fn claim(id: &str) -> String {
        format!("claim:{id}")
    }
}

/// What this process knows of a pool between allocations: its definition and its free space,
/// both derived from the datastore and dropped whenever a commit finds them out of date.
#[derive(Debug)]
pub(crate) struct PoolState {
    pool: IpPool,
    free: Arc<Mutex<FreeSpace>>,
    loaded: Instant,
}

/// One request for an address, waiting for its pool.
struct Job {
    owner: String,
    host: Option<IpamHost>,
    wanted: Option<String>,
    reply: tokio::sync::oneshot::Sender<Result<(IpClaim, bool), Error>>,
}

/// What `ip_choose` decided for a job.
enum Choice {
    /// Commit this.
    Insert(Box<Chosen>),
    /// Answered without a commit (the owner already holds an address).
    Answer(Box<Result<(IpClaim, bool), Error>>),
}

struct Chosen {
    row: IpAllocationRow,
    value: u128,
    /// Taken from the cached free space (to be given back if the commit misses).
    from_free: bool,
    wanted: Option<u128>,
    request: IpamRequest,
    network_data: Option<serde_json::Value>,
}

/// A pool's lock, the cached state it guards, and the jobs waiting for it.
#[derive(Debug, Default)]
pub(crate) struct PoolEntry {
    state: tokio::sync::Mutex<Option<PoolState>>,
    queue: Mutex<Vec<Job>>,
    /// Set while a group runs in a caller's own future: if that caller goes away mid-group,
    /// the cached free space may hold an address marked taken but never committed, so the next
    /// holder of the lock drops the cache.
    unfinished: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

/// Per pool, the in-process lock that serialises its allocations (the datastore's constraints
/// serialise them across processes) and the cached state it guards.
#[derive(Debug, Default)]
pub struct PoolLocks {
    by_pool: Mutex<HashMap<String, Arc<PoolEntry>>>,
}

impl PoolLocks {
    fn get(&self, pool_id: &str) -> Arc<PoolEntry> {
        self.by_pool
            .lock()
            .expect("pool lock map poisoned")
            .entry(pool_id.to_owned())
            .or_default()
            .clone()
    }

    fn forget(&self, pool_id: &str) {
        self.by_pool
            .lock()
            .expect("pool lock map poisoned")
            .remove(pool_id);
    }
}

/// The `allocations` import: the pool's free space as this process knows it.
struct PoolView {
    free: Arc<Mutex<FreeSpace>>,
    family: Family,
}

impl PoolView {
    fn parse(&self, text: &str) -> Option<u128> {
        let addr: IpAddr = text.trim().parse().ok()?;
        (Family::of(addr) == self.family).then(|| space::to_u128(addr))
    }
}

impl Allocations for PoolView {
    fn first_free<'a>(&'a mut self, start: &'a str, end: &'a str) -> BoxFuture<'a, Option<String>> {
        let found = match (self.parse(start), self.parse(end)) {
            (Some(start), Some(end)) => self
                .free
                .lock()
                .expect("free space poisoned")
                .first_free(start, end),
            _ => None,
        };
        let family = self.family;
        Box::pin(async move { found.map(|v| space::from_u128(family, v).to_string()) })
    }

    fn is_free<'a>(&'a mut self, address: &'a str) -> BoxFuture<'a, bool> {
        let free = self
            .parse(address)
            .is_some_and(|v| self.free.lock().expect("free space poisoned").is_free(v));
        Box::pin(async move { free })
    }
}

/// The facts an IPAM plugin gets about a host: its NICs and the one it boots from.
fn host_facts(host: &podium_store::HostRow) -> Result<IpamHost, Error> {
    let nics: Vec<Nic> = serde_json::from_str(&host.nics)
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored NICs of host {}: {e}", host.id)))?;
    Ok(IpamHost {
        id: host.id.clone(),
        name: host.name.clone(),
        boot_mac: host
            .boot_mac
            .clone()
            .or_else(|| nics.first().map(|n| n.mac.clone())),
        nics: nics.into_iter().map(|n| (n.name, n.mac)).collect(),
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
        crate::pod_managers::validate_name(&def.name)?;
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
            Some(uuid) => Some(
                self.datastore
                    .pod_manager_get(uuid)
                    .await?
                    .map(crate::pod_managers::PodManager::from_row)
                    .transpose()?
                    .ok_or_else(|| {
                        Error::invalid("pod_manager", format!("no pod manager `{uuid}`"))
                    })?,
            ),
            None => None,
        };
        for (i, tenant) in def.tenants.iter().enumerate() {
            if self.datastore.tenant_get(tenant).await?.is_none() {
                return Err(Error::invalid(
                    format!("tenants[{i}]"),
                    format!("no tenant `{tenant}`"),
                ));
            }
        }
        let plugin = match (def.plugin, base) {
            (Some(p), _) => self.binding_resolve("plugin", &p, World::Ipam).await?,
            (None, Some(base)) => base.plugin.clone(),
            (None, None) => match &pod_manager {
                Some(pm) => pm.ipam.clone(),
                None => {
                    let p = PluginBindingParams {
                        name: DEFAULT_IPAM.into(),
                        ..Default::default()
                    };
                    self.binding_resolve("plugin", &p, World::Ipam).await?
                }
            },
        };
        let now = podium_store::now();
        let row = IpPoolRow {
            id: base.map(|b| b.row.id.clone()).unwrap_or_default(),
            name: def.name,
            family: space.family.number(),
            subnet: space.subnet.display(),
            prefix: i64::from(def.prefix),
            gateway: space.gateway.map(|g| space.addr(g).to_string()),
            dns_servers: to_json(&dns_servers),
            ranges: to_json(&def.ranges),
            reserved: to_json(&def.reserved),
            pre_allocations: to_json(&def.pre_allocations),
            plugin: to_json(&plugin),
            pod_manager: def.pod_manager,
            tenants: to_json(&def.tenants),
            generation: base.map_or(0, |b| b.row.generation),
            created_at: base.map_or_else(|| now.clone(), |b| b.row.created_at.clone()),
            updated_at: now,
        };
        Ok(Checked { space, row })
    }

    async fn ip_pool_name_free(&self, name: &str, except: Option<&str>) -> Result<(), Error> {
        if self.datastore.ip_pool_name_taken(name, except).await? {
            return Err(Error::ConflictField {
                code: "name_taken",
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
    ) -> Result<IpPool, Error> {
        caller.require_admin()?;
        let Checked { mut row, .. } = self.ip_pool_check(params, None).await?;
        self.ip_pool_name_free(&row.name, None).await?;
        row.id = podium_store::new_id();
        match self.datastore.ip_pool_create(&row).await {
            Ok(()) => IpPool::from_row(row),
            // Two creations with one name racing: the unique index decides.
            Err(podium_store::StoreError::Conflict(_)) => {
                self.ip_pool_name_free(&row.name, None).await?;
                Err(Error::Conflict {
                    code: "conflict",
                    message: "the pool conflicts with another one".into(),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn ip_pool_load(&self, id: &str) -> Result<IpPool, Error> {
        let row = self
            .datastore
            .ip_pool_get(id)
            .await?
            .ok_or_else(|| Error::not_found("IP pool", id))?;
        IpPool::from_row(row)
    }

    pub async fn ip_pool_view(&self, caller: &Caller, id: &str) -> Result<(IpPool, Usage), Error> {
        caller.require_admin_read()?;
        let pool = self.ip_pool_load(id).await?;
        let usage = self.ip_pool_usage(&pool).await?;
        Ok((pool, usage))
    }

    async fn ip_pool_usage(&self, pool: &IpPool) -> Result<Usage, Error> {
        let mut claimed = 0u128;
        for owner in pool.space.pre_allocations.keys() {
            if self
                .datastore
                .ip_allocation_of_owner(&pool.row.id, owner)
                .await?
                .is_some()
            {
                claimed += 1;
            }
        }
        let allocated = self.datastore.ip_allocated_count(&pool.row.id).await?;
        Ok(pool.usage(u128::try_from(allocated).unwrap_or(0), claimed))
    }

    pub async fn ip_pool_list(
        &self,
        caller: &Caller,
        pod_manager: Option<String>,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> Result<Paged<(IpPool, Usage)>, Error> {
        caller.require_admin_read()?;
        let paged = self
            .datastore
            .ip_pool_list(pod_manager.as_deref(), &page(limit, cursor)?)
            .await?;
        let mut items = Vec::with_capacity(paged.items.len());
        for row in paged.items {
            let pool = IpPool::from_row(row)?;
            let usage = self.ip_pool_usage(&pool).await?;
            items.push((pool, usage));
        }
        Ok(Paged {
            items,
            next: paged.next,
        })
    }

    pub async fn ip_pool_update(
        &self,
        caller: &Caller,
        id: &str,
        params: IpPoolUpdate,
    ) -> Result<(IpPool, Usage), Error> {
        caller.require_admin()?;
        let entry = self.ipam_locks.get(id);
        let mut state = entry.state.lock().await;
        // Whatever happens, the cached free space is rebuilt from the stored pool next time.
        *state = None;
        let base = self.ip_pool_load(id).await?;
        let def = IpPoolCreate {
            name: params.name.unwrap_or_else(|| base.row.name.clone()),
            ranges: params.ranges.unwrap_or_else(|| base.ranges.clone()),
            prefix: params
                .prefix
                .unwrap_or(u8::try_from(base.row.prefix).unwrap_or(u8::MAX)),
            gateway: params.gateway.unwrap_or_else(|| base.row.gateway.clone()),
            dns_servers: params
                .dns_servers
                .unwrap_or_else(|| base.dns_servers.clone()),
            reserved: params.reserved.unwrap_or_else(|| base.reserved.clone()),
            pre_allocations: params
                .pre_allocations
                .unwrap_or_else(|| base.pre_allocations.clone()),
            plugin: params.plugin,
            pod_manager: params
                .pod_manager
                .unwrap_or_else(|| base.row.pod_manager.clone()),
            tenants: params.tenants.unwrap_or_else(|| base.tenants.clone()),
        };
        let Checked { space, row } = self.ip_pool_check(def, Some(&base)).await?;
        self.ip_pool_name_free(&row.name, Some(id)).await?;
        let replaced = self
            .datastore
            .ip_pool_replace(&row, |allocations| {
                for a in allocations {
                    let v = space::from_key(&a.addr_key).ok_or_else(|| {
                        Error::Internal(anyhow::anyhow!("allocation {} has a bad key", a.id))
                    })?;
                    let refuse = |field: &str, why: &str| Error::ConflictField {
                        code: "pool_in_use",
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
                Ok(())
            })
            .await?;
        match replaced {
            Ok(true) => {}
            Ok(false) => return Err(Error::not_found("IP pool", id)),
            Err(e) => return Err(e),
        }
        let pool = self.ip_pool_load(id).await?;
        let usage = self.ip_pool_usage(&pool).await?;
        Ok((pool, usage))
    }

    pub async fn ip_pool_delete(&self, caller: &Caller, id: &str) -> Result<(), Error> {
        caller.require_admin()?;
        let entry = self.ipam_locks.get(id);
        let mut state = entry.state.lock().await;
        *state = None;
        match self.datastore.ip_pool_delete(id).await? {
            None => Err(Error::not_found("IP pool", id)),
            Some(0) => {
                self.ipam_locks.forget(id);
                Ok(())
            }
            Some(n) => Err(Error::Conflict {
                code: "pool_in_use",
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
        pool_id: &str,
        params: IpClaimCreate,
    ) -> Result<(IpClaim, bool), Error> {
        caller.require_admin()?;
        let owner = Owner::parse("owner", &params.owner)?;
        let host = match &owner {
            Owner::Host(id) => {
                let host = self
                    .datastore
                    .host_get(id)
                    .await?
                    .ok_or_else(|| Error::invalid("owner", format!("no host `{id}`")))?;
                Some(host_facts(&host)?)
            }
            Owner::Claim(id) => {
                if self.datastore.claim_get(None, id).await?.is_none() {
                    return Err(Error::invalid("owner", format!("no claim `{id}`")));
                }
                None
            }
            Owner::Name(_) => None,
        };
        self.ip_allocate(pool_id, &params.owner, host, params.address.as_deref())
            .await
    }

    /// The pool's cached state, loaded (definition and free space) when there is none, or when
    /// other processes may have changed it since (PostgreSQL, after `STATE_MAX_AGE`).
    async fn ip_state<'a>(
        &self,
        slot: &'a mut Option<PoolState>,
        pool_id: &str,
    ) -> Result<(&'a PoolState, bool), Error> {
        let stale = match slot.as_ref() {
            None => true,
            Some(state) => {
                self.datastore.backend() == Backend::Postgres
                    && state.loaded.elapsed() > STATE_MAX_AGE
            }
        };
        if stale {
            let loaded = Instant::now();
            let pool = self.ip_pool_load(pool_id).await?;
            let taken = self.datastore.ip_allocated_values(pool_id).await?;
            let free = FreeSpace::new(pool.space.free_extents(taken));
            *slot = Some(PoolState {
                pool,
                free: Arc::new(Mutex::new(free)),
                loaded,
            });
        }
        Ok((slot.as_ref().expect("loaded above"), stale))
    }

    /// The allocation itself, for any caller of the application that checked who is asking.
    ///
    /// Requests for one pool are committed in groups: each queues its job and hands the queue to
    /// a task that takes the pool's lock and processes every job waiting by then, committing
    /// them with one insert, so that under load one round trip to the datastore serves many.
    /// The task is spawned so that a caller that goes away (a client that disconnects) cannot
    /// cancel the jobs of others. A request that finds the pool idle is a group of one and
    /// runs in place.
    pub(crate) async fn ip_allocate(
        &self,
        pool_id: &str,
        owner: &str,
        host: Option<IpamHost>,
        wanted: Option<&str>,
    ) -> Result<(IpClaim, bool), Error> {
        let entry = self.ipam_locks.get(pool_id);
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = Job {
            owner: owner.to_owned(),
            host,
            wanted: wanted.map(str::to_owned),
            reply,
        };
        // Alone: no group to form, and nobody else's job to lose if this caller goes away, so
        // the work is done here, without a task.
        if let Ok(mut slot) = entry.state.try_lock()
            && entry.queue.lock().expect("queue poisoned").is_empty()
        {
            use std::sync::atomic::Ordering;
            if entry.unfinished.swap(true, Ordering::AcqRel) {
                *slot = None;
            }
            self.ip_allocate_group(pool_id, &mut slot, vec![job]).await;
            entry.unfinished.store(false, Ordering::Release);
            drop(slot);
            return answer.await.unwrap_or_else(|_| {
                Err(Error::Internal(anyhow::anyhow!(
                    "the allocation ended without an answer"
                )))
            });
        }
        entry.queue.lock().expect("queue poisoned").push(job);
        let podium = self.clone();
        let pool_id = pool_id.to_owned();
        tokio::spawn(async move {
            let mut slot = entry.state.lock().await;
            if entry
                .unfinished
                .swap(false, std::sync::atomic::Ordering::AcqRel)
            {
                *slot = None;
            }
            let jobs = std::mem::take(&mut *entry.queue.lock().expect("queue poisoned"));
            if !jobs.is_empty() {
                podium.ip_allocate_group(&pool_id, &mut slot, jobs).await;
            }
        });
        answer.await.unwrap_or_else(|_| {
            Err(Error::Internal(anyhow::anyhow!(
                "the allocation task ended without an answer"
            )))
        })
    }

    /// Processes a group of jobs under the pool's lock: chooses an address for each (the plugin
    /// sees the ones chosen before it as taken), commits them with one insert, and retries the
    /// ones that missed from the datastore's state.
    async fn ip_allocate_group(&self, pool_id: &str, slot: &mut Option<PoolState>, jobs: Vec<Job>) {
        let mut pending = jobs;
        for _ in 0..COMMIT_ATTEMPTS {
            if pending.is_empty() {
                return;
            }
            let (state, fresh) = match self.ip_state(slot, pool_id).await {
                Ok(state) => state,
                Err(e) => {
                    for job in pending {
                        let _ = job.reply.send(Err(e.duplicate()));
                    }
                    return;
                }
            };
            let mut chosen = Vec::with_capacity(pending.len());
            let mut retry = Vec::new();
            for job in pending.drain(..) {
                match self.ip_choose(state, &job).await {
                    Ok(Choice::Insert(insert)) => chosen.push((job, *insert)),
                    // Full as far as this process knows: addresses may have been released by
                    // another process since the cache was loaded; ask the datastore once more.
                    Err(Error::Conflict {
                        code: "pool_exhausted",
                        ..
                    }) if !fresh => retry.push(job),
                    Ok(Choice::Answer(answer)) => {
                        let _ = job.reply.send(*answer);
                    }
                    Err(e) => {
                        let _ = job.reply.send(Err(e));
                    }
                }
            }
            let reload = !retry.is_empty();
            pending.extend(retry);
            if chosen.is_empty() {
                if reload {
                    *slot = None;
                    continue;
                }
                return;
            }
            let rows: Vec<(IpAllocationRow, u128)> = chosen
                .iter()
                .map(|(_, c)| (c.row.clone(), c.value))
                .collect();
            let inserted = match self
                .datastore
                .ip_insert_many(&rows, state.pool.row.generation)
                .await
            {
                Ok(inserted) => inserted,
                Err(e) => {
                    let e = Error::from(e);
                    for (job, _) in chosen {
                        let _ = job.reply.send(Err(e.duplicate()));
                    }
                    *slot = None;
                    return;
                }
            };
            let mut stale = reload;
            let committed: std::collections::HashSet<u128> = chosen
                .iter()
                .filter(|(_, c)| inserted.contains(&c.row.id))
                .map(|(_, c)| c.value)
                .collect();
            for (job, c) in chosen {
                if inserted.contains(&c.row.id) {
                    let _ = job
                        .reply
                        .send(Ok((state.pool.claim(c.row, c.network_data), true)));
                    continue;
                }
                let missed = self.datastore.ip_missed(pool_id, &job.owner, c.value).await;
                // Give the address back unless someone (of this group or not) holds it now.
                match &missed {
                    Ok(Missed::OwnerHolds(_)) | Ok(Missed::PoolChanged)
                        if c.from_free && !committed.contains(&c.value) =>
                    {
                        state
                            .free
                            .lock()
                            .expect("free space poisoned")
                            .give(c.value);
                    }
                    Ok(Missed::Taken(_)) if !committed.contains(&c.value) => stale = true,
                    _ => {}
                }
                let answer = match missed {
                    Ok(Missed::OwnerHolds(existing)) => {
                        self.ip_claim_existing(&state.pool, &c.request, existing, c.wanted)
                            .await
                    }
                    Ok(Missed::Taken(holder)) if c.wanted.is_some() => Err(address_taken(
                        state.pool.space.addr(c.value),
                        &holder.owner,
                        "held by",
                    )),
                    // Another process took the address or changed the pool: choose again from
                    // what the datastore holds now.
                    Ok(Missed::Taken(_) | Missed::PoolChanged) => {
                        stale = true;
                        pending.push(job);
                        continue;
                    }
                    Err(e) => Err(e.into()),
                };
                let _ = job.reply.send(answer);
            }
            if stale {
                *slot = None;
            }
        }
        for job in pending {
            let _ = job.reply.send(Err(Error::Conflict {
                code: "pool_busy",
                message: format!(
                    "the pool changed under {COMMIT_ATTEMPTS} attempts in a row; try again"
                ),
            }));
        }
    }

    /// Chooses the address of one job: its pre-allocation, the address it wants, or the
    /// plugin's proposal (then marked taken, so that the next job of the group gets another).
    async fn ip_choose(&self, state: &PoolState, job: &Job) -> Result<Choice, Error> {
        let pool = &state.pool;
        let pool_id = pool.row.id.as_str();
        let owner = job.owner.as_str();
        let wanted = job
            .wanted
            .as_deref()
            .map(|w| parse_addr("address", w, Some(pool.space.family)))
            .transpose()?
            .map(space::to_u128);
        if let Some(w) = wanted
            && !pool.space.allocatable(w)
        {
            let addr = pool.space.addr(w);
            let why = if pool.space.gateway == Some(w) {
                "is the gateway"
            } else if pool.space.excluded.contains(&w) {
                "is reserved"
            } else {
                "is not in the pool's ranges"
            };
            return Err(Error::invalid("address", format!("{addr} {why}")));
        }
        let request = pool.request(owner, job.host.clone());
        let (value, from_free) = if let Some(&v) = pool.space.pre_allocations.get(owner) {
            if let Some(w) = wanted
                && w != v
            {
                return Err(Error::ConflictField {
                    code: "owner_pre_allocated",
                    field: "address".into(),
                    message: format!(
                        "`{owner}` is pre-allocated {} in this pool, not {}",
                        pool.space.addr(v),
                        pool.space.addr(w)
                    ),
                });
            }
            (v, false)
        } else if let Some(w) = wanted {
            if let Some(other) = pool.space.pre_allocated_to(w) {
                return Err(address_taken(pool.space.addr(w), other, "pre-allocated to"));
            }
            // Taken as far as this process knows: say by whom (or hand the owner its own).
            let free = state.free.lock().expect("free space poisoned").take(w);
            if !free && let Some(holder) = self.datastore.ip_allocation_at(pool_id, w).await? {
                if holder.owner == owner {
                    let answer = self.ip_claim_existing(pool, &request, holder, wanted).await;
                    return Ok(Choice::Answer(Box::new(answer)));
                }
                return Err(address_taken(pool.space.addr(w), &holder.owner, "held by"));
            }
            (w, free)
        } else {
            match self.ip_propose(state, &request).await? {
                Some(v) => {
                    state.free.lock().expect("free space poisoned").take(v);
                    (v, true)
                }
                None => {
                    // The owner may hold one already: a repeated claim on a full pool.
                    if let Some(existing) = self
                        .datastore
                        .ip_allocation_of_owner(pool_id, owner)
                        .await?
                    {
                        let answer = self.ip_claim_existing(pool, &request, existing, None).await;
                        return Ok(Choice::Answer(Box::new(answer)));
                    }
                    return Err(Error::Conflict {
                        code: "pool_exhausted",
                        message: format!("IP pool `{}` has no free address left", pool.row.name),
                    });
                }
            }
        };
        let address = pool.space.addr(value);
        // Rendered before the commit: a plugin that cannot write the document for this host
        // leaves no allocation behind.
        let network_data = match self.ip_network_data(pool, &request, address).await {
            Ok(nd) => nd,
            Err(e) => {
                if from_free {
                    state.free.lock().expect("free space poisoned").give(value);
                }
                return Err(e);
            }
        };
        Ok(Choice::Insert(Box::new(Chosen {
            row: IpAllocationRow {
                id: podium_store::new_id(),
                pool_id: pool_id.to_owned(),
                address: address.to_string(),
                addr_key: space::key(value),
                owner: owner.to_owned(),
                created_at: podium_store::now(),
            },
            value,
            from_free,
            wanted,
            request,
            network_data,
        })))
    }

    async fn ip_claim_existing(
        &self,
        pool: &IpPool,
        request: &IpamRequest,
        existing: IpAllocationRow,
        wanted: Option<u128>,
    ) -> Result<(IpClaim, bool), Error> {
        if let Some(w) = wanted
            && space::from_key(&existing.addr_key) != Some(w)
        {
            return Err(Error::ConflictField {
                code: "owner_holds_address",
                field: "address".into(),
                message: format!(
                    "`{}` already holds {} in this pool; release it first",
                    existing.owner, existing.address
                ),
            });
        }
        let address = parse_addr("address", &existing.address, None)?;
        let network_data = self.ip_network_data(pool, request, address).await?;
        Ok((pool.claim(existing, network_data), false))
    }

    /// Asks the pool's plugin for a free address and checks the answer against the pool.
    async fn ip_propose(
        &self,
        state: &PoolState,
        request: &IpamRequest,
    ) -> Result<Option<u128>, Error> {
        let pool = &state.pool;
        let plugin = self.plugin_load(&pool.plugin.sha256).await?;
        let view = PoolView {
            free: state.free.clone(),
            family: pool.space.family,
        };
        let context = CallContext {
            config: pool.plugin.config.to_string(),
            endpoint: None,
            allocations: Some(Box::new(view)),
        };
        let proposal = self
            .runtime
            .ipam(&plugin, context)
            .propose(request)
            .await
            .map_err(ipam_error)?;
        let Some(addr) = proposal else {
            return Ok(None);
        };
        let malformed = |reason: String| {
            Error::Plugin(CallError::Malformed {
                plugin: plugin.label(),
                reason,
            })
        };
        if Family::of(addr) != pool.space.family {
            return Err(malformed(format!("proposed {addr}, of the wrong family")));
        }
        let v = space::to_u128(addr);
        if !state.free.lock().expect("free space poisoned").is_free(v) {
            return Err(malformed(format!(
                "proposed {addr}, which is not free (the host's allocations import said so)"
            )));
        }
        Ok(Some(v))
    }

    async fn ip_network_data(
        &self,
        pool: &IpPool,
        request: &IpamRequest,
        address: IpAddr,
    ) -> Result<Option<serde_json::Value>, Error> {
        if request.host.is_none() {
            return Ok(None);
        }
        let plugin = self.plugin_load(&pool.plugin.sha256).await?;
        let context = CallContext {
            config: pool.plugin.config.to_string(),
            endpoint: None,
            allocations: None,
        };
        self.runtime
            .ipam(&plugin, context)
            .preprovisioning_network_data(request, address)
            .await
            .map_err(ipam_error)
    }

    pub async fn ip_claim_view(
        &self,
        caller: &Caller,
        pool_id: &str,
        id: &str,
    ) -> Result<IpClaim, Error> {
        caller.require_admin_read()?;
        let pool = self.ip_pool_load(pool_id).await?;
        let row = self
            .datastore
            .ip_allocation_get(pool_id, id)
            .await?
            .ok_or_else(|| Error::not_found("IP claim", id))?;
        let host = match Owner::parse("owner", &row.owner) {
            Ok(Owner::Host(h)) => match self.datastore.host_get(&h).await? {
                Some(host) => Some(host_facts(&host)?),
                None => None,
            },
            _ => None,
        };
        let request = pool.request(&row.owner, host);
        let address = parse_addr("address", &row.address, None)?;
        let network_data = self.ip_network_data(&pool, &request, address).await?;
        Ok(pool.claim(row, network_data))
    }

    pub async fn ip_claim_list(
        &self,
        caller: &Caller,
        pool_id: &str,
        limit: Option<u32>,
        cursor: Option<String>,
    ) -> Result<Paged<IpClaim>, Error> {
        caller.require_admin_read()?;
        let pool = self.ip_pool_load(pool_id).await?;
        let paged = self
            .datastore
            .ip_allocation_list(pool_id, &page(limit, cursor)?)
            .await?;
        Ok(Paged {
            items: paged
                .items
                .into_iter()
                .map(|row| pool.claim(row, None))
                .collect(),
            next: paged.next,
        })
    }

    pub async fn ip_claim_delete(
        &self,
        caller: &Caller,
        pool_id: &str,
        id: &str,
    ) -> Result<(), Error> {
        caller.require_admin()?;
        if self.datastore.ip_pool_get(pool_id).await?.is_none() {
            return Err(Error::not_found("IP pool", pool_id));
        }
        if !self.ip_release(pool_id, id).await? {
            return Err(Error::not_found("IP claim", id));
        }
        Ok(())
    }

    /// Releases one allocation; its address is free again unless it is pre-allocated.
    async fn ip_release(&self, pool_id: &str, id: &str) -> Result<bool, Error> {
        let entry = self.ipam_locks.get(pool_id);
        let slot = entry.state.lock().await;
        let Some(value) = self.datastore.ip_release(pool_id, id).await? else {
            return Ok(false);
        };
        if let Some(state) = slot.as_ref()
            && state.pool.space.allocatable(value)
            && state.pool.space.pre_allocated_to(value).is_none()
        {
            state.free.lock().expect("free space poisoned").give(value);
        }
        Ok(true)
    }

    /// Releases every address an owner holds, in every pool (a claim released, a host deleted).
    /// `keep` spares the allocations of pools it selects.
    pub(crate) async fn ip_release_owner(
        &self,
        owner: &str,
        keep: impl Fn(&IpPool) -> bool,
    ) -> Result<usize, Error> {
        let mut released = 0;
        for a in self.datastore.ip_allocations_of_owner(owner).await? {
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
        for (pool_id, id) in self.datastore.ip_allocations_of_gone_hosts().await? {
            if self.ip_release(&pool_id, &id).await? {
                released += 1;
            }
        }
        Ok(released)
    }

    /// The pools a pod manager may use, decoded: its own and those bound to no pod manager.
    pub(crate) async fn ip_pools_serving(&self, pod_manager: &str) -> Result<Vec<IpPool>, Error> {
        self.datastore
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
        host: &podium_store::HostRow,
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
        host: &podium_store::HostRow,
        network_data: bool,
    ) -> Result<Option<IpClaim>, Error> {
        let Some(row) = self
            .datastore
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
        host: &podium_store::HostRow,
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
    pub async fn claim_addresses(
        &self,
        claim: &podium_store::ClaimRow,
        host: Option<&podium_store::HostRow>,
    ) -> Result<Vec<IpClaim>, Error> {
        let mut owners = vec![Owner::claim(&claim.id)];
        if let Some(h) = host {
            owners.push(Owner::host(&h.id));
        }
        let mut claims = Vec::new();
        for owner in owners {
            for a in self.datastore.ip_allocations_of_owner(&owner).await? {
                let pool = self.ip_pool_load(&a.pool_id).await?;
                claims.push(pool.claim(a, None));
            }
        }
        Ok(claims)
    }
}

impl IpPool {
    fn claim(&self, row: IpAllocationRow, network_data: Option<serde_json::Value>) -> IpClaim {
        IpClaim {
            row,
            prefix: u8::try_from(self.row.prefix).unwrap_or(u8::MAX),
            gateway: self.row.gateway.clone(),
            dns_servers: self.dns_servers.clone(),
            network_data,
        }
    }

    /// The release setting of an `ipam-dhcpless` pool: `keep` holds a host's preprovisioning
    /// address for as long as the host exists.
    pub fn keeps_host_addresses(&self) -> bool {
        self.plugin.config.get("release").and_then(|v| v.as_str()) == Some("keep")
    }
}

fn address_taken(addr: IpAddr, holder: &str, how: &str) -> Error {
    Error::ConflictField {
        code: "address_taken",
        field: "address".into(),
        message: format!("{addr} is {how} `{holder}`"),
    }
}

/// A plugin's `invalid-input` is about the owner it was asked for (a host without a boot NIC).
fn ipam_error(e: CallError) -> Error {
    match e {
        CallError::Plugin {
            plugin,
            error: PluginError::InvalidInput(message),
        } => Error::invalid("owner", format!("plugin {plugin}: {message}")),
        other => Error::Plugin(other),
    }
}

/// JSON text of a stored field.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("pool fields serialize")
}
