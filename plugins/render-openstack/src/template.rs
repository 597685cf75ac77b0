//! The pod manager's network template (`docs/network-config.md`, "The template"): its model, and
//! its parsing and validation.
//!
//! [`Template::parse`] checks everything that does not depend on a host: every object refuses
//! fields it does not know, link and network ids are unique, every reference points at a link of
//! the right type, each pool serves one network, routes are of their network's family. Errors
//! start with the field's path relative to the template (`links[2].mode: ...`).

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use serde_json::Value;

use crate::json::{self, Obj, index, integer_in, shown, string_at};
use crate::net::{self, Family};

/// Bond modes, as the Linux bonding driver (and cloud-init's `bond_mode`) names them.
pub const BOND_MODES: &[&str] = &[
    "balance-rr",
    "active-backup",
    "balance-xor",
    "broadcast",
    "802.3ad",
    "balance-tlb",
    "balance-alb",
];

/// Bond transmit hash policies (`bond_xmit_hash_policy`).
pub const HASH_POLICIES: &[&str] = &["layer2", "layer2+3", "layer3+4", "encap2+3", "encap3+4"];

/// The link types of a template (and of a consumer's `network_data`).
pub const LINK_TYPES: &[&str] = &["phy", "bond", "vlan"];

/// The network types of a template.
pub const NETWORK_TYPES: &[&str] = &["ipv4", "ipv6", "ipv4_dhcp", "ipv6_dhcp", "ipv6_slaac"];

/// The MTU range of a link.
pub const MTU_MIN: u64 = 68;
/// The MTU range of a link.
pub const MTU_MAX: u64 = 65535;

/// The most `meta_data` keys a template (and, separately, a claim) may set.
pub const MAX_META_KEYS: usize = 64;
/// The longest `meta_data` key, in characters.
pub const MAX_META_KEY_CHARS: usize = 255;
/// The longest `meta_data` value, in bytes.
pub const MAX_META_VALUE_BYTES: usize = 4096;

/// A validated network template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    /// In template order (the order they are rendered in).
    pub links: Vec<Link>,
    pub networks: Vec<Network>,
    pub dns: Dns,
    /// Rendered under `meta` in `meta_data.json`.
    pub meta_data: BTreeMap<String, String>,
    pub tenants: Tenants,
}

/// A link of the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub id: String,
    pub mtu: Option<u16>,
    pub kind: LinkKind,
}

/// What a link is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkKind {
    /// A NIC of the host.
    Phy { nic: NicRef },
    /// A bond of two or more `phy` links.
    Bond {
        links: Vec<String>,
        mode: &'static str,
        hash_policy: Option<&'static str>,
        miimon: Option<u32>,
        mac: Option<MacRef>,
    },
    /// A VLAN on a `phy` or `bond` link.
    Vlan {
        link: String,
        vlan_id: u16,
        mac: Option<MacRef>,
    },
}

impl LinkKind {
    /// The type's name in the template (`phy`, `bond`, `vlan`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Phy { .. } => "phy",
            Self::Bond { .. } => "bond",
            Self::Vlan { .. } => "vlan",
        }
    }
}

/// Which NIC of the host a `phy` link is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NicRef {
    /// The NIC of that name in the host's inventory.
    Name(String),
    /// The NIC of that MAC (lower-case, colon-separated).
    Mac(String),
    /// The host's boot NIC: its boot MAC, else its first NIC.
    Boot,
}

/// The MAC of a bond or VLAN, where the template sets one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MacRef {
    /// The (rendered) MAC of that link.
    Link(String),
    /// That MAC (lower-case, colon-separated).
    Mac(String),
}

/// A network of the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    pub id: String,
    /// The id of the link it is on.
    pub link: String,
    pub kind: NetworkKind,
}

/// What a network is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkKind {
    /// `ipv4` or `ipv6`: a static address from a pool.
    Static {
        family: Family,
        pool: String,
        routes: Vec<Route>,
        default_route: bool,
    },
    /// `ipv4_dhcp`.
    Ipv4Dhcp,
    /// `ipv6_dhcp`: DHCPv6 stateful.
    Ipv6Dhcp,
    /// `ipv6_slaac`.
    Ipv6Slaac,
}

/// A static route of a network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The destination's network address (no host bits set).
    pub network: IpAddr,
    pub prefix: u8,
    pub gateway: Gateway,
}

/// A route's gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gateway {
    /// `"pool"`: the gateway of the network's pool.
    Pool,
    Address(IpAddr),
}

/// The template's `dns`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dns {
    pub servers: Vec<IpAddr>,
    /// Add the DNS servers of the pools the template's networks use, in network order.
    pub from_pools: bool,
    pub search: Vec<String>,
}

/// What tenants may add.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tenants {
    /// A claim may bring metaData keys (under every policy).
    pub meta_data: bool,
    /// Per link id, what a claim may add on it (policy `layered`).
    pub links: BTreeMap<String, TenantLink>,
}

/// What a claim may add on one link of the template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantLink {
    /// The claim may put networks on the link.
    pub networks: bool,
    /// Inclusive ranges of VLAN ids the claim may create on the link.
    pub vlans: Vec<(u16, u16)>,
}

impl TenantLink {
    /// Whether the claim may create VLAN `vlan_id` on the link.
    pub fn allows_vlan(&self, vlan_id: u16) -> bool {
        self.vlans
            .iter()
            .any(|(first, last)| (*first..=*last).contains(&vlan_id))
    }
}

impl Template {
    /// Parses and validates a template (JSON text). The error starts with the offending field's
    /// path relative to the template; `template: ...` when the document itself is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value = json::parse(text, "template")?;
        if !value.is_object() {
            return Err(format!(
                "template: expected a JSON object, got {}",
                shown(&value)
            ));
        }
        let root = Obj::new(&value, "", "a template")?;
        root.only(&["links", "networks", "dns", "meta_data", "tenants"])?;
        let links = parse_links(root.array("links")?.unwrap_or_default())?;
        let networks = parse_networks(root.array("networks")?.unwrap_or_default(), &links)?;
        let dns = match root.get("dns") {
            None => Dns::default(),
            Some(v) => parse_dns(v, networks.iter().any(|n| n.pool().is_some()))?,
        };
        let meta_data = match root.object("meta_data")? {
            None => BTreeMap::new(),
            Some(map) => parse_meta(map)?,
        };
        let tenants = match root.get("tenants") {
            None => Tenants::default(),
            Some(v) => parse_tenants(v, &links)?,
        };
        Ok(Self {
            links,
            networks,
            dns,
            meta_data,
            tenants,
        })
    }

    /// The pools the template takes addresses from, in network order (each once).
    pub fn pools(&self) -> Vec<String> {
        self.pool_needs()
            .into_iter()
            .map(|(name, _, _)| name)
            .collect()
    }

    /// Each pool with where the template names it (`networks[i].pool`) and the family its
    /// network needs.
    pub fn pool_needs(&self) -> Vec<(String, String, Family)> {
        self.networks
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match &n.kind {
                NetworkKind::Static { family, pool, .. } => {
                    Some((pool.clone(), format!("networks[{i}].pool"), *family))
                }
                _ => None,
            })
            .collect()
    }

    /// The link of that id.
    pub fn link(&self, id: &str) -> Option<&Link> {
        self.links.iter().find(|l| l.id == id)
    }
}

impl Network {
    /// The pool of a static network.
    pub fn pool(&self) -> Option<&str> {
        match &self.kind {
            NetworkKind::Static { pool, .. } => Some(pool),
            _ => None,
        }
    }
}

/// Checks an id: a string of 1 to 64 characters.
fn parse_id<'a>(obj: &Obj<'a>) -> Result<&'a str, String> {
    let id = obj.required_string("id")?;
    if id.chars().count() > 64 {
        return Err(format!(
            "{}: {:?} is longer than 64 characters",
            obj.path("id"),
            id
        ));
    }
    Ok(id)
}

/// An optional `mtu`.
fn parse_mtu(obj: &Obj<'_>) -> Result<Option<u16>, String> {
    Ok(obj
        .integer("mtu", MTU_MIN, MTU_MAX)?
        .and_then(|m| u16::try_from(m).ok()))
}

/// The `links` of a template: each one's own fields first, then the references between them.
fn parse_links(items: &[Value]) -> Result<Vec<Link>, String> {
    let mut links = Vec::with_capacity(items.len());
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let paths: Vec<String> = (0..items.len()).map(|i| index("links", i)).collect();
    for (i, item) in items.iter().enumerate() {
        let obj = Obj::new(item, &paths[i], "a link")?;
        let kind = obj.choice("type", LINK_TYPES)?;
        let Some(kind) = kind else {
            return Err(format!("{}: missing (required)", obj.path("type")));
        };
        let fields: &[&str] = match kind {
            "phy" => &["id", "type", "nic", "mtu"],
            "bond" => &[
                "id",
                "type",
                "links",
                "mode",
                "hash_policy",
                "miimon",
                "mtu",
                "mac",
            ],
            _ => &["id", "type", "link", "vlan_id", "mtu", "mac"],
        };
        obj.only(fields)?;
        let id = parse_id(&obj)?;
        if let Some(first) = ids.insert(id, i) {
            return Err(format!(
                "{}: {id:?} is used by links[{first}] already",
                obj.path("id")
            ));
        }
        let mtu = parse_mtu(&obj)?;
        let kind = match kind {
            "phy" => LinkKind::Phy {
                nic: parse_nic(&obj)?,
            },
            "bond" => parse_bond(&obj)?,
            _ => parse_vlan(&obj)?,
        };
        links.push(Link {
            id: id.to_string(),
            mtu,
            kind,
        });
    }
    check_link_references(&links, &paths)?;
    Ok(links)
}

/// A `phy` link's `nic`: `{"name": ...}`, `{"mac": ...}` or `"boot"`.
fn parse_nic(obj: &Obj<'_>) -> Result<NicRef, String> {
    let path = obj.path("nic");
    let expected = "expected {\"name\": NAME}, {\"mac\": MAC} or \"boot\"";
    let value = obj.require("nic")?;
    match value {
        Value::String(s) if s == "boot" => Ok(NicRef::Boot),
        Value::Object(map) if map.len() == 1 => {
            let nic = Obj::new(value, &path, "a NIC")?;
            nic.only(&["name", "mac"])?;
            if let Some(name) = nic.string("name")? {
                if name.is_empty() {
                    return Err(format!("{}: must not be empty", nic.path("name")));
                }
                Ok(NicRef::Name(name.to_string()))
            } else if let Some(mac) = nic.string("mac")? {
                net::parse_mac(mac)
                    .map(NicRef::Mac)
                    .map_err(|e| format!("{}: {e}", nic.path("mac")))
            } else {
                Err(format!("{path}: {expected}"))
            }
        }
        other => Err(format!("{path}: {expected}, got {}", shown(other))),
    }
}

/// A `mac` of a bond or VLAN: a MAC where the text is one, else a link id (checked once all links
/// are known).
fn parse_mac_ref(obj: &Obj<'_>) -> Result<Option<MacRef>, String> {
    let Some(text) = obj.string("mac")? else {
        return Ok(None);
    };
    Ok(Some(match net::parse_mac(text) {
        Ok(mac) => MacRef::Mac(mac),
        // Checked against the links once they are all known.
        Err(_) => MacRef::Link(text.to_string()),
    }))
}

fn parse_bond(obj: &Obj<'_>) -> Result<LinkKind, String> {
    let path = obj.path("links");
    let items = obj
        .array("links")?
        .ok_or_else(|| format!("{path}: missing (required)"))?;
    let mut members: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let member = string_at(item, &index(&path, i))?;
        if let Some(first) = members.iter().position(|m| m == member) {
            return Err(format!(
                "{}: {member:?} is {}[{first}] already",
                index(&path, i),
                path
            ));
        }
        members.push(member.to_string());
    }
    if members.len() < 2 {
        return Err(format!(
            "{path}: a bond needs two or more links, got {}",
            members.len()
        ));
    }
    let mode = obj
        .choice("mode", BOND_MODES)?
        .ok_or_else(|| format!("{}: missing (required)", obj.path("mode")))?;
    Ok(LinkKind::Bond {
        links: members,
        mode,
        hash_policy: obj.choice("hash_policy", HASH_POLICIES)?,
        miimon: obj
            .integer("miimon", 0, u64::from(u32::MAX))?
            .and_then(|m| u32::try_from(m).ok()),
        mac: parse_mac_ref(obj)?,
    })
}

fn parse_vlan(obj: &Obj<'_>) -> Result<LinkKind, String> {
    let link = obj.required_string("link")?;
    let vlan_id = obj
        .integer("vlan_id", 1, 4094)?
        .and_then(|v| u16::try_from(v).ok())
        .ok_or_else(|| format!("{}: missing (required)", obj.path("vlan_id")))?;
    Ok(LinkKind::Vlan {
        link: link.to_string(),
        vlan_id,
        mac: parse_mac_ref(obj)?,
    })
}

/// Checks what links say of each other: bond members are `phy` links in no other bond, a VLAN is
/// on a `phy` or `bond` link and its id is unique on that link, `mac` names a fitting link, no
/// two `phy` links name the same NIC.
fn check_link_references(links: &[Link], paths: &[String]) -> Result<(), String> {
    let find = |id: &str| links.iter().position(|l| l.id == id);
    let mut bond_of: HashMap<&str, &str> = HashMap::new();
    let mut vlans: HashMap<(&str, u16), usize> = HashMap::new();
    let mut nics: Vec<(&NicRef, usize)> = Vec::new();
    for (i, link) in links.iter().enumerate() {
        let path = &paths[i];
        match &link.kind {
            LinkKind::Phy { nic } => {
                let same = |other: &NicRef| match (nic, other) {
                    (NicRef::Name(a), NicRef::Name(b)) | (NicRef::Mac(a), NicRef::Mac(b)) => a == b,
                    (NicRef::Boot, NicRef::Boot) => true,
                    _ => false,
                };
                if let Some((_, first)) = nics.iter().find(|(other, _)| same(other)) {
                    return Err(format!("{path}.nic: links[{first}] is this NIC already"));
                }
                nics.push((nic, i));
            }
            LinkKind::Bond {
                links: members,
                mac,
                ..
            } => {
                for (m, member) in members.iter().enumerate() {
                    let at = format!("{path}.links[{m}]");
                    let Some(j) = find(member) else {
                        return Err(format!("{at}: no link {member:?} in links"));
                    };
                    if !matches!(links[j].kind, LinkKind::Phy { .. }) {
                        return Err(format!(
                            "{at}: {member:?} is a {} link; a bond's links are phy links",
                            links[j].kind.name()
                        ));
                    }
                    if let Some(other) = bond_of.insert(member, &link.id) {
                        return Err(format!("{at}: {member:?} is in bond {other:?} already"));
                    }
                }
                if let Some(MacRef::Link(id)) = mac
                    && !members.contains(id)
                {
                    return Err(format!(
                        "{path}.mac: expected a MAC or the id of one of the bond's links ({}), got {id:?}",
                        members.join(", ")
                    ));
                }
            }
            LinkKind::Vlan {
                link: parent,
                vlan_id,
                mac,
            } => {
                let Some(j) = find(parent) else {
                    return Err(format!("{path}.link: no link {parent:?} in links"));
                };
                if matches!(links[j].kind, LinkKind::Vlan { .. }) {
                    return Err(format!(
                        "{path}.link: {parent:?} is a vlan link; a VLAN goes on a phy or bond link"
                    ));
                }
                if let Some(first) = vlans.insert((parent, *vlan_id), i) {
                    return Err(format!(
                        "{path}.vlan_id: VLAN {vlan_id} on {parent:?} is links[{first}] already"
                    ));
                }
                if let Some(MacRef::Link(id)) = mac {
                    let fits =
                        find(id).is_some_and(|k| !matches!(links[k].kind, LinkKind::Vlan { .. }));
                    if !fits {
                        return Err(format!(
                            "{path}.mac: expected a MAC or the id of a phy or bond link, got {id:?}"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

fn parse_networks(items: &[Value], links: &[Link]) -> Result<Vec<Network>, String> {
    let mut networks: Vec<Network> = Vec::with_capacity(items.len());
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut pools: HashMap<String, usize> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let path = index("networks", i);
        let obj = Obj::new(item, &path, "a network")?;
        let kind = obj
            .choice("type", NETWORK_TYPES)?
            .ok_or_else(|| format!("{}: missing (required)", obj.path("type")))?;
        let family = match kind {
            "ipv4" => Some(Family::V4),
            "ipv6" => Some(Family::V6),
            _ => None,
        };
        if family.is_some() {
            obj.only(&["id", "type", "link", "pool", "routes", "default_route"])?;
        } else {
            for key in ["pool", "routes", "default_route"] {
                if obj.get(key).is_some() {
                    return Err(format!(
                        "{}: only ipv4 and ipv6 networks take a {key}; {kind} gets its address from the network",
                        obj.path(key)
                    ));
                }
            }
            obj.only(&["id", "type", "link"])?;
        }
        let id = parse_id(&obj)?;
        if let Some(first) = ids.insert(id.to_string(), i) {
            return Err(format!(
                "{}: {id:?} is used by networks[{first}] already",
                obj.path("id")
            ));
        }
        let link = obj.required_string("link")?;
        if !links.iter().any(|l| l.id == link) {
            return Err(format!("{}: no link {link:?} in links", obj.path("link")));
        }
        let kind = match (kind, family) {
            (_, Some(family)) => {
                let pool = obj.required_string("pool")?;
                if let Some(first) = pools.insert(pool.to_string(), i) {
                    return Err(format!(
                        "{}: pool {pool:?} is used by networks[{first}] already",
                        obj.path("pool")
                    ));
                }
                NetworkKind::Static {
                    family,
                    pool: pool.to_string(),
                    routes: parse_routes(&obj, family, kind)?,
                    default_route: obj.boolean("default_route")?.unwrap_or(false),
                }
            }
            ("ipv4_dhcp", _) => NetworkKind::Ipv4Dhcp,
            ("ipv6_dhcp", _) => NetworkKind::Ipv6Dhcp,
            _ => NetworkKind::Ipv6Slaac,
        };
        networks.push(Network {
            id: id.to_string(),
            link: link.to_string(),
            kind,
        });
    }
    Ok(networks)
}

/// A static network's `routes`: each `{"network": CIDR, "gateway": ADDRESS | "pool"}` in the
/// network's family, no destination twice (`default_route` counts as `0.0.0.0/0` / `::/0`).
fn parse_routes(obj: &Obj<'_>, family: Family, kind: &str) -> Result<Vec<Route>, String> {
    let path = obj.path("routes");
    let mut routes: Vec<Route> = Vec::new();
    let default_route = obj.boolean("default_route")?.unwrap_or(false);
    for (i, item) in obj.array("routes")?.unwrap_or_default().iter().enumerate() {
        let at = index(&path, i);
        let route = Obj::new(item, &at, "a route")?;
        route.only(&["network", "gateway"])?;
        let network = route.required_string("network")?;
        let (ip, prefix) =
            net::parse_cidr(network).map_err(|e| format!("{}: {e}", route.path("network")))?;
        if Family::of(ip) != family {
            return Err(format!(
                "{}: {network} is {}; {} is {kind}",
                route.path("network"),
                Family::of(ip),
                obj.at()
            ));
        }
        let gateway = match route.required_string("gateway")? {
            "pool" => Gateway::Pool,
            text => {
                let gw =
                    net::parse_ip(text).map_err(|e| format!("{}: {e}", route.path("gateway")))?;
                if Family::of(gw) != family {
                    return Err(format!(
                        "{}: {gw} is {}; {} is {kind}",
                        route.path("gateway"),
                        Family::of(gw),
                        obj.at()
                    ));
                }
                Gateway::Address(gw)
            }
        };
        if let Some(first) = routes
            .iter()
            .position(|r| r.network == ip && r.prefix == prefix)
        {
            return Err(format!(
                "{}: {network} is {path}[{first}] already",
                route.path("network")
            ));
        }
        if default_route && prefix == 0 {
            return Err(format!(
                "{}: {network} is the default route, which default_route adds already",
                route.path("network")
            ));
        }
        routes.push(Route {
            network: ip,
            prefix,
            gateway,
        });
    }
    Ok(routes)
}

fn parse_dns(value: &Value, has_pools: bool) -> Result<Dns, String> {
    let obj = Obj::new(value, "dns", "the DNS settings")?;
    obj.only(&["servers", "from_pools", "search"])?;
    let mut dns = Dns {
        from_pools: obj.boolean("from_pools")?.unwrap_or(false),
        ..Dns::default()
    };
    for (i, item) in obj.array("servers")?.unwrap_or_default().iter().enumerate() {
        let at = index("dns.servers", i);
        let ip = net::parse_ip(string_at(item, &at)?).map_err(|e| format!("{at}: {e}"))?;
        if !dns.servers.contains(&ip) {
            dns.servers.push(ip);
        }
    }
    for (i, item) in obj.array("search")?.unwrap_or_default().iter().enumerate() {
        let at = index("dns.search", i);
        let domain = string_at(item, &at)?;
        net::check_domain(domain).map_err(|e| format!("{at}: {e}"))?;
        if !dns.search.iter().any(|d| d == domain) {
            dns.search.push(domain.to_string());
        }
    }
    // `network_data.json` has no place of its own for search domains: they ride on a `dns`
    // service, which needs a server.
    if !dns.search.is_empty() && dns.servers.is_empty() && !(dns.from_pools && has_pools) {
        return Err(
            "dns.search: search domains need a DNS server (set dns.servers, or dns.from_pools with a pool)"
                .to_string(),
        );
    }
    Ok(dns)
}

/// String keys and string values, at most [`MAX_META_KEYS`] of them.
fn parse_meta(map: &serde_json::Map<String, Value>) -> Result<BTreeMap<String, String>, String> {
    if map.len() > MAX_META_KEYS {
        return Err(format!(
            "meta_data: at most {MAX_META_KEYS} keys, got {}",
            map.len()
        ));
    }
    let mut meta = BTreeMap::new();
    for (key, value) in map {
        let path = json::join("meta_data", key);
        check_meta_entry(key, value.as_str(), &path)?;
        let value = string_at(value, &path)?;
        meta.insert(key.clone(), value.to_string());
    }
    Ok(meta)
}

/// Checks one metaData entry: a key of 1 to [`MAX_META_KEY_CHARS`] characters and a value of at
/// most [`MAX_META_VALUE_BYTES`] bytes. `path` names the entry.
pub(crate) fn check_meta_entry(key: &str, value: Option<&str>, path: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("meta_data: a key is empty".to_string());
    }
    if key.chars().count() > MAX_META_KEY_CHARS {
        return Err(format!(
            "{path}: the key is longer than {MAX_META_KEY_CHARS} characters"
        ));
    }
    if value.is_some_and(|v| v.len() > MAX_META_VALUE_BYTES) {
        return Err(format!(
            "{path}: the value is longer than {MAX_META_VALUE_BYTES} bytes"
        ));
    }
    Ok(())
}

fn parse_tenants(value: &Value, links: &[Link]) -> Result<Tenants, String> {
    let obj = Obj::new(value, "tenants", "the tenants' settings")?;
    obj.only(&["meta_data", "links"])?;
    let mut tenants = Tenants {
        meta_data: obj.boolean("meta_data")?.unwrap_or(false),
        links: BTreeMap::new(),
    };
    for (id, item) in obj.object("links")?.into_iter().flatten() {
        let path = json::join("tenants.links", id);
        let Some(link) = links.iter().find(|l| &l.id == id) else {
            return Err(format!("{path}: no link {id:?} in links"));
        };
        let open = Obj::new(item, &path, "what tenants may add on the link")?;
        open.only(&["networks", "vlans"])?;
        let mut tenant_link = TenantLink {
            networks: open.boolean("networks")?.unwrap_or(false),
            vlans: Vec::new(),
        };
        let vlans_path = open.path("vlans");
        let ranges = open.array("vlans")?.unwrap_or_default();
        if !ranges.is_empty() && matches!(link.kind, LinkKind::Vlan { .. }) {
            return Err(format!(
                "{vlans_path}: {id:?} is a vlan link; VLANs go on phy or bond links"
            ));
        }
        for (i, range) in ranges.iter().enumerate() {
            let at = index(&vlans_path, i);
            let bounds = match range.as_array() {
                Some(pair) if pair.len() == 2 => pair,
                _ => {
                    return Err(format!(
                        "{at}: expected [first, last] (VLAN ids from 1 to 4094), got {}",
                        shown(range)
                    ));
                }
            };
            let first = integer_in(&bounds[0], &index(&at, 0), 1, 4094)?;
            let last = integer_in(&bounds[1], &index(&at, 1), 1, 4094)?;
            if first > last {
                return Err(format!("{at}: first ({first}) is after last ({last})"));
            }
            tenant_link.vlans.push((
                u16::try_from(first).unwrap_or(u16::MAX),
                u16::try_from(last).unwrap_or(u16::MAX),
            ));
        }
        tenants.links.insert(id.clone(), tenant_link);
    }
    Ok(tenants)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// The template of `docs/network-config.md`.
    pub(crate) fn doc_template() -> Value {
        json!({
          "links": [
            {"id": "nic1", "type": "phy", "nic": {"name": "eno1"}, "mtu": 9000},
            {"id": "nic2", "type": "phy", "nic": {"mac": "52:54:00:aa:00:02"}, "mtu": 9000},
            {"id": "boot", "type": "phy", "nic": "boot"},
            {"id": "bond0", "type": "bond", "links": ["nic1", "nic2"], "mode": "802.3ad",
             "hash_policy": "layer3+4", "miimon": 100, "mtu": 9000},
            {"id": "bond0.100", "type": "vlan", "link": "bond0", "vlan_id": 100}
          ],
          "networks": [
            {"id": "prod", "type": "ipv4", "link": "bond0.100", "pool": "prod-v4", "default_route": true,
             "routes": [{"network": "10.0.0.0/8", "gateway": "192.168.10.254"}]},
            {"id": "prod6", "type": "ipv6", "link": "bond0", "pool": "prod-v6", "default_route": true},
            {"id": "mgmt", "type": "ipv4_dhcp", "link": "boot"}
          ],
          "dns": {"servers": ["192.0.2.53"], "from_pools": true, "search": []},
          "meta_data": {"rack": "r12"},
          "tenants": {"meta_data": true, "links": {"bond0": {"networks": true, "vlans": [[200, 299]]}}}
        })
    }

    /// The doc's template with `edit` applied.
    fn error_of(edit: impl FnOnce(&mut Value)) -> String {
        let mut template = doc_template();
        edit(&mut template);
        Template::parse(&template.to_string()).unwrap_err()
    }

    #[test]
    fn doc_template_parses() {
        let t = Template::parse(&doc_template().to_string()).unwrap();
        assert_eq!(t.pools(), ["prod-v4", "prod-v6"]);
        assert_eq!(t.links.len(), 5);
        assert_eq!(
            t.links[3].kind,
            LinkKind::Bond {
                links: vec!["nic1".into(), "nic2".into()],
                mode: "802.3ad",
                hash_policy: Some("layer3+4"),
                miimon: Some(100),
                mac: None,
            }
        );
        assert_eq!(
            t.links[1].kind,
            LinkKind::Phy {
                nic: NicRef::Mac("52:54:00:aa:00:02".into())
            }
        );
        assert_eq!(t.meta_data.get("rack").map(String::as_str), Some("r12"));
        assert!(t.tenants.meta_data);
        let bond0 = &t.tenants.links["bond0"];
        assert!(bond0.networks && bond0.allows_vlan(200) && bond0.allows_vlan(299));
        assert!(!bond0.allows_vlan(199) && !bond0.allows_vlan(300));
    }

    #[test]
    fn empty_template_is_valid() {
        assert_eq!(Template::parse("{}").unwrap(), Template::default());
        assert!(Template::parse("{}").unwrap().pools().is_empty());
    }

    #[test]
    fn document_errors() {
        assert!(
            Template::parse("[]")
                .unwrap_err()
                .starts_with("template: expected a JSON object")
        );
        assert!(
            Template::parse("{")
                .unwrap_err()
                .starts_with("template: not valid JSON")
        );
    }

    #[test]
    fn duplicate_link_id() {
        let e = error_of(|t| t["links"][1]["id"] = json!("nic1"));
        assert_eq!(e, "links[1].id: \"nic1\" is used by links[0] already");
    }

    #[test]
    fn bond_with_one_link() {
        let e = error_of(|t| t["links"][3]["links"] = json!(["nic1"]));
        assert_eq!(e, "links[3].links: a bond needs two or more links, got 1");
    }

    #[test]
    fn bond_member_not_phy() {
        let e = error_of(|t| t["links"][3]["links"] = json!(["nic1", "bond0.100"]));
        assert_eq!(
            e,
            "links[3].links[1]: \"bond0.100\" is a vlan link; a bond's links are phy links"
        );
        let e = error_of(|t| t["links"][3]["links"] = json!(["nic1", "nic9"]));
        assert_eq!(e, "links[3].links[1]: no link \"nic9\" in links");
    }

    #[test]
    fn phy_in_two_bonds() {
        let e = error_of(|t| {
            t["links"].as_array_mut().unwrap().push(
                json!({"id": "bond1", "type": "bond", "links": ["nic2", "boot"], "mode": "active-backup"}),
            );
        });
        assert_eq!(
            e,
            "links[5].links[0]: \"nic2\" is in bond \"bond0\" already"
        );
    }

    #[test]
    fn vlan_on_vlan() {
        let e = error_of(|t| {
            t["links"]
                .as_array_mut()
                .unwrap()
                .push(json!({"id": "qinq", "type": "vlan", "link": "bond0.100", "vlan_id": 7}));
        });
        assert_eq!(
            e,
            "links[5].link: \"bond0.100\" is a vlan link; a VLAN goes on a phy or bond link"
        );
    }

    #[test]
    fn vlan_id_twice_on_a_link() {
        let e = error_of(|t| {
            t["links"]
                .as_array_mut()
                .unwrap()
                .push(json!({"id": "again", "type": "vlan", "link": "bond0", "vlan_id": 100}));
        });
        assert_eq!(
            e,
            "links[5].vlan_id: VLAN 100 on \"bond0\" is links[4] already"
        );
        let e = error_of(|t| t["links"][4]["vlan_id"] = json!(4095));
        assert_eq!(
            e,
            "links[4].vlan_id: expected an integer from 1 to 4094, got 4095"
        );
    }

    #[test]
    fn bad_mode() {
        let e = error_of(|t| t["links"][3]["mode"] = json!("fast"));
        assert_eq!(
            e,
            "links[3].mode: expected one of balance-rr, active-backup, balance-xor, broadcast, \
             802.3ad, balance-tlb, balance-alb, got \"fast\""
        );
        let e = error_of(|t| t["links"][3]["hash_policy"] = json!("layer4"));
        assert!(
            e.starts_with("links[3].hash_policy: expected one of layer2,"),
            "{e}"
        );
    }

    #[test]
    fn bad_link_type_and_mtu() {
        let e = error_of(|t| t["links"][2]["type"] = json!("bridge"));
        assert_eq!(
            e,
            "links[2].type: expected one of phy, bond, vlan, got \"bridge\""
        );
        let e = error_of(|t| t["links"][0]["mtu"] = json!(67));
        assert_eq!(
            e,
            "links[0].mtu: expected an integer from 68 to 65535, got 67"
        );
    }

    #[test]
    fn nic_forms() {
        let e = error_of(|t| t["links"][2]["nic"] = json!("eno3"));
        assert_eq!(
            e,
            "links[2].nic: expected {\"name\": NAME}, {\"mac\": MAC} or \"boot\", got \"eno3\""
        );
        let e = error_of(|t| t["links"][1]["nic"] = json!({"mac": "52:54:00:aa:00"}));
        assert!(
            e.starts_with("links[1].nic.mac: \"52:54:00:aa:00\" is not a MAC"),
            "{e}"
        );
        let e = error_of(|t| t["links"][1]["nic"] = json!({"serial": "x"}));
        assert!(e.starts_with("links[1].nic.serial: unknown field"), "{e}");
        let e = error_of(|t| t["links"][1]["nic"] = json!({"name": "eno1"}));
        assert_eq!(e, "links[1].nic: links[0] is this NIC already");
    }

    #[test]
    fn mac_of_a_bond_names_a_member() {
        let e = error_of(|t| t["links"][3]["mac"] = json!("boot"));
        assert_eq!(
            e,
            "links[3].mac: expected a MAC or the id of one of the bond's links (nic1, nic2), got \"boot\""
        );
        let mut t = doc_template();
        t["links"][3]["mac"] = json!("nic2");
        t["links"][4]["mac"] = json!("52:54:00:AA:BB:CC");
        let t = Template::parse(&t.to_string()).unwrap();
        assert!(
            matches!(&t.links[3].kind, LinkKind::Bond { mac: Some(MacRef::Link(l)), .. } if l == "nic2")
        );
        assert!(
            matches!(&t.links[4].kind, LinkKind::Vlan { mac: Some(MacRef::Mac(m)), .. } if m == "52:54:00:aa:bb:cc")
        );
    }

    #[test]
    fn pool_used_twice() {
        let e = error_of(|t| {
            t["networks"][1] =
                json!({"id": "prod-b", "type": "ipv4", "link": "bond0", "pool": "prod-v4"})
        });
        assert_eq!(
            e,
            "networks[1].pool: pool \"prod-v4\" is used by networks[0] already"
        );
    }

    #[test]
    fn route_family_mismatch() {
        let e = error_of(|t| {
            t["networks"][0]["routes"] =
                json!([{"network": "2001:db8::/32", "gateway": "192.168.10.254"}]);
        });
        assert_eq!(
            e,
            "networks[0].routes[0].network: 2001:db8::/32 is IPv6; networks[0] is ipv4"
        );
        let e = error_of(|t| {
            t["networks"][1]["routes"] =
                json!([{"network": "2001:db8::/32", "gateway": "192.168.10.254"}]);
        });
        assert_eq!(
            e,
            "networks[1].routes[0].gateway: 192.168.10.254 is IPv4; networks[1] is ipv6"
        );
        let e = error_of(|t| t["networks"][0]["routes"][0]["network"] = json!("10.1.0.0/8"));
        assert!(
            e.starts_with("networks[0].routes[0].network: 10.1.0.0/8 has host bits set"),
            "{e}"
        );
        let e = error_of(|t| t["networks"][0]["routes"][0]["network"] = json!("0.0.0.0/0"));
        assert!(
            e.starts_with("networks[0].routes[0].network: 0.0.0.0/0 is the default route"),
            "{e}"
        );
    }

    #[test]
    fn unknown_field() {
        let e = error_of(|t| t["links"][0]["speed"] = json!(10));
        assert_eq!(
            e,
            "links[0].speed: unknown field; expected one of id, type, nic, mtu"
        );
        let e = error_of(|t| t["dhcp"] = json!(true));
        assert!(
            e.starts_with("dhcp: unknown field; expected one of links,"),
            "{e}"
        );
        let e = error_of(|t| t["networks"][0]["routes"][0]["metric"] = json!(5));
        assert_eq!(
            e,
            "networks[0].routes[0].metric: unknown field; expected one of network, gateway"
        );
        let e = error_of(|t| t["tenants"]["links"]["bond0"]["bridges"] = json!(true));
        assert_eq!(
            e,
            "tenants.links.bond0.bridges: unknown field; expected one of networks, vlans"
        );
    }

    #[test]
    fn dhcp_networks_take_no_pool() {
        let e = error_of(|t| t["networks"][2]["pool"] = json!("mgmt-v4"));
        assert!(
            e.starts_with("networks[2].pool: only ipv4 and ipv6 networks take a pool"),
            "{e}"
        );
    }

    #[test]
    fn network_references() {
        let e = error_of(|t| t["networks"][2]["link"] = json!("nic9"));
        assert_eq!(e, "networks[2].link: no link \"nic9\" in links");
        let e = error_of(|t| t["networks"][2]["id"] = json!("prod"));
        assert_eq!(e, "networks[2].id: \"prod\" is used by networks[0] already");
        let e = error_of(|t| t["networks"][0]["type"] = json!("ipv4_static"));
        assert!(
            e.starts_with("networks[0].type: expected one of ipv4, ipv6,"),
            "{e}"
        );
    }

    #[test]
    fn dns_and_meta_and_tenants() {
        let e = error_of(|t| t["dns"]["servers"] = json!(["192.0.2.530"]));
        assert_eq!(e, "dns.servers[0]: \"192.0.2.530\" is not an IP address");
        let e = error_of(|t| t["dns"] = json!({"search": ["example.com"]}));
        assert!(
            e.starts_with("dns.search: search domains need a DNS server"),
            "{e}"
        );
        let e = error_of(|t| t["meta_data"]["rack"] = json!(12));
        assert_eq!(e, "meta_data.rack: expected a string, got 12");
        let e = error_of(|t| t["tenants"]["links"] = json!({"nic9": {"networks": true}}));
        assert_eq!(e, "tenants.links.nic9: no link \"nic9\" in links");
        let e = error_of(|t| t["tenants"]["links"]["bond0"]["vlans"] = json!([[300, 200]]));
        assert_eq!(
            e,
            "tenants.links.bond0.vlans[0]: first (300) is after last (200)"
        );
        let e = error_of(|t| t["tenants"]["links"]["bond0"]["vlans"] = json!([[0, 200]]));
        assert_eq!(
            e,
            "tenants.links.bond0.vlans[0][0]: expected an integer from 1 to 4094, got 0"
        );
    }
}
