//! A consumer's `network_data`: a whole `network_data.json` under policy `consumer`, additions to
//! the template's rendering under `layered`.
//!
//! Both are read with the same rules, the OpenStack schema as cloud-init reads it: link types
//! `phy`, `bond` and `vlan`; network types `ipv4`, `ipv6`, `ipv4_dhcp`, `ipv6_dhcp`,
//! `ipv6_dhcpv6-stateful`, `ipv6_dhcpv6-stateless` and `ipv6_slaac`; services of type `dns`.
//! Besides the fields each type needs, OpenStack's optional ones are accepted (`name`, `mtu`,
//! `vif_id` on links; `bond_miimon`, `bond_xmit_hash_policy`, `ethernet_mac_address` on bonds;
//! `vlan_mac_address`, `ethernet_mac_address` on VLANs; `network_id`, `dns_nameservers`, `services`
//! on networks; `search` on a `dns` service, which cloud-init reads); any other field is refused.
//!
//! Errors start with the field's path under `network_data` (`network_data.links[0].vlan_id: ...`).

use std::collections::HashMap;

use serde_json::Value;

use crate::json::{self, Obj, index, string_at};
use crate::net::{self, Family};
use crate::network_data::{Link, LinkKind, Network, NetworkData, Route, Service, ServiceKind};
use crate::template::{self, BOND_MODES, HASH_POLICIES, LINK_TYPES, MTU_MAX, MTU_MIN, Template};
use crate::{Error, Host, network_data};

/// The network types a consumer may use.
pub const NETWORK_TYPES: &[&str] = &[
    "ipv4",
    "ipv6",
    "ipv4_dhcp",
    "ipv6_dhcp",
    "ipv6_dhcpv6-stateful",
    "ipv6_dhcpv6-stateless",
    "ipv6_slaac",
];

const ROOT: &str = "network_data";

/// The claim's network data, if it brought any: absent, blank, `null` and `{}` bring nothing.
pub fn brought(network_data: Option<&str>) -> Option<&str> {
    let text = network_data?.trim();
    if text.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Null) => None,
        Ok(Value::Object(map)) if map.is_empty() => None,
        // Anything else, even unparsable, is something the claim brought.
        _ => Some(text),
    }
}

/// Reads and checks a whole `network_data.json` (policy `consumer`): ids unique, every reference
/// points at a link of the right type, addresses, netmasks, routes and DNS servers valid and of
/// their network's family; with a host, every `phy` link's MAC is one of its NICs.
///
/// Returns the document normalized: MACs lower-case and colon-separated, and every VLAN with a
/// `vlan_mac_address` (its link's MAC where the consumer set none), which cloud-init requires.
pub fn parse_document(text: &str, host: Option<&Host>) -> Result<NetworkData, Error> {
    let mut doc = parse(text).map_err(Error::InvalidInput)?;
    check_references(&doc).map_err(Error::InvalidInput)?;
    if let Some(host) = host {
        let macs = doc
            .links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match &l.kind {
                LinkKind::Phy {
                    ethernet_mac_address,
                } => Some((
                    format!("{ROOT}.links[{i}].ethernet_mac_address"),
                    ethernet_mac_address.as_str(),
                )),
                _ => None,
            });
        network_data::check_host_macs(host, macs)?;
    }
    let missing: Vec<(usize, Option<String>)> = doc
        .links
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match &l.kind {
            LinkKind::Vlan {
                vlan_link,
                vlan_mac_address: None,
                ..
            } => Some((i, doc.mac_of(vlan_link).map(str::to_string))),
            _ => None,
        })
        .collect();
    for (i, mac) in missing {
        if let LinkKind::Vlan {
            vlan_mac_address, ..
        } = &mut doc.links[i].kind
        {
            *vlan_mac_address = mac;
        }
    }
    Ok(doc)
}

/// Reads and checks a claim's additions to the template (policy `layered`): only `vlan` links, on
/// template links whose `tenants.links.<id>.vlans` ranges hold the VLAN id (and no VLAN of the
/// template with that id on that link); networks only on template links open to tenants'
/// networks or on the claim's own VLANs; no id of the template reused; DNS servers.
pub fn parse_additions(text: &str, template: &Template) -> Result<NetworkData, Error> {
    let doc = parse(text).map_err(Error::InvalidInput)?;
    check_additions(&doc, template).map_err(Error::InvalidInput)?;
    Ok(doc)
}

/// The template's rendering with a claim's additions: their VLANs (with the MAC of the link they
/// are on as `vlan_mac_address`, where they set none) and networks after the template's (with
/// their id as `network_id` where they set none, as the template's are rendered), their DNS
/// servers after the template's, without duplicates.
pub fn merge(mut base: NetworkData, additions: NetworkData) -> NetworkData {
    for mut link in additions.links {
        if let LinkKind::Vlan {
            vlan_link,
            vlan_mac_address: mac @ None,
            ..
        } = &mut link.kind
        {
            *mac = base.mac_of(vlan_link).map(str::to_string);
        }
        base.links.push(link);
    }
    base.networks
        .extend(additions.networks.into_iter().map(|mut network| {
            network.network_id.get_or_insert_with(|| network.id.clone());
            network
        }));
    base.add_services(additions.services);
    base
}

/// Reads a document's objects and their own fields; ids unique.
fn parse(text: &str) -> Result<NetworkData, String> {
    let value = json::parse(text, ROOT)?;
    let root = Obj::new(&value, ROOT, "a network_data.json document")?;
    root.only(&["links", "networks", "services"])?;
    let mut doc = NetworkData::default();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (i, item) in root.array("links")?.unwrap_or_default().iter().enumerate() {
        let path = index(&root.path("links"), i);
        let obj = Obj::new(item, &path, "a link")?;
        let link = parse_link(&obj)?;
        if let Some(first) = ids.insert(link.id.clone(), i) {
            return Err(format!(
                "{}: {:?} is used by {ROOT}.links[{first}] already",
                obj.path("id"),
                link.id
            ));
        }
        doc.links.push(link);
    }
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (i, item) in root
        .array("networks")?
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let path = index(&root.path("networks"), i);
        let obj = Obj::new(item, &path, "a network")?;
        let network = parse_network(&obj)?;
        if let Some(first) = ids.insert(network.id.clone(), i) {
            return Err(format!(
                "{}: {:?} is used by {ROOT}.networks[{first}] already",
                obj.path("id"),
                network.id
            ));
        }
        doc.networks.push(network);
    }
    doc.services = parse_services(&root)?.unwrap_or_default();
    Ok(doc)
}

/// A link id: 1 to 64 characters.
fn parse_id(obj: &Obj<'_>) -> Result<String, String> {
    let id = obj.required_string("id")?;
    if id.chars().count() > 64 {
        return Err(format!(
            "{}: {id:?} is longer than 64 characters",
            obj.path("id")
        ));
    }
    Ok(id.to_string())
}

/// An optional MAC field, normalized.
fn parse_mac_field(obj: &Obj<'_>, key: &str) -> Result<Option<String>, String> {
    obj.string(key)?
        .map(|m| net::parse_mac(m).map_err(|e| format!("{}: {e}", obj.path(key))))
        .transpose()
}

fn parse_link(obj: &Obj<'_>) -> Result<Link, String> {
    let kind = obj.required_string("type")?;
    let common = ["id", "type", "name", "mtu", "vif_id"];
    let own: &[&str] = match kind {
        "phy" => &["ethernet_mac_address"],
        "bond" => &[
            "bond_links",
            "bond_mode",
            "bond_xmit_hash_policy",
            "bond_miimon",
            "ethernet_mac_address",
        ],
        "vlan" => &[
            "vlan_link",
            "vlan_id",
            "vlan_mac_address",
            "ethernet_mac_address",
        ],
        other => {
            return Err(format!(
                "{}: unsupported link type {other:?}; expected one of {}",
                obj.path("type"),
                LINK_TYPES.join(", ")
            ));
        }
    };
    let known: Vec<&str> = common.iter().chain(own).copied().collect();
    obj.only(&known)?;
    let id = parse_id(obj)?;
    let name = obj.string("name")?;
    if let Some(name) = name {
        // cloud-init names the interface after it: a Linux interface name.
        let ok = (1..=15).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'/' && b != b':');
        if !ok {
            return Err(format!(
                "{}: {name:?} is not an interface name (1 to 15 characters, no '/', ':' or spaces)",
                obj.path("name")
            ));
        }
    }
    let kind = match kind {
        "phy" => LinkKind::Phy {
            ethernet_mac_address: parse_mac_field(obj, "ethernet_mac_address")?.ok_or_else(
                || format!("{}: missing (required)", obj.path("ethernet_mac_address")),
            )?,
        },
        "bond" => {
            let path = obj.path("bond_links");
            let items = obj
                .array("bond_links")?
                .ok_or_else(|| format!("{path}: missing (required)"))?;
            if items.is_empty() {
                return Err(format!("{path}: a bond needs at least one link"));
            }
            let mut members: Vec<String> = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let member = string_at(item, &index(&path, i))?;
                if let Some(first) = members.iter().position(|m| m == member) {
                    return Err(format!(
                        "{}: {member:?} is {path}[{first}] already",
                        index(&path, i)
                    ));
                }
                members.push(member.to_string());
            }
            LinkKind::Bond {
                bond_links: members,
                bond_mode: obj
                    .choice("bond_mode", BOND_MODES)?
                    .ok_or_else(|| format!("{}: missing (required)", obj.path("bond_mode")))?
                    .to_string(),
                bond_xmit_hash_policy: obj
                    .choice("bond_xmit_hash_policy", HASH_POLICIES)?
                    .map(str::to_string),
                bond_miimon: obj
                    .integer("bond_miimon", 0, u64::from(u32::MAX))?
                    .and_then(|m| u32::try_from(m).ok()),
                ethernet_mac_address: parse_mac_field(obj, "ethernet_mac_address")?,
            }
        }
        _ => LinkKind::Vlan {
            vlan_link: obj.required_string("vlan_link")?.to_string(),
            vlan_id: obj
                .integer("vlan_id", 1, 4094)?
                .and_then(|v| u16::try_from(v).ok())
                .ok_or_else(|| format!("{}: missing (required)", obj.path("vlan_id")))?,
            vlan_mac_address: parse_mac_field(obj, "vlan_mac_address")?,
            ethernet_mac_address: parse_mac_field(obj, "ethernet_mac_address")?,
        },
    };
    Ok(Link {
        id,
        kind,
        mtu: obj
            .integer("mtu", MTU_MIN, MTU_MAX)?
            .and_then(|m| u16::try_from(m).ok()),
        name: name.map(str::to_string),
        vif_id: obj.string("vif_id")?.map(str::to_string),
    })
}

fn parse_network(obj: &Obj<'_>) -> Result<Network, String> {
    let kind = obj
        .choice("type", NETWORK_TYPES)?
        .ok_or_else(|| format!("{}: missing (required)", obj.path("type")))?;
    let family = if kind.starts_with("ipv4") {
        Family::V4
    } else {
        Family::V6
    };
    let is_static = matches!(kind, "ipv4" | "ipv6");
    let common = [
        "id",
        "type",
        "link",
        "routes",
        "network_id",
        "dns_nameservers",
        "services",
    ];
    if is_static {
        let known: Vec<&str> = common
            .iter()
            .chain(&["ip_address", "netmask"])
            .copied()
            .collect();
        obj.only(&known)?;
    } else {
        for key in ["ip_address", "netmask"] {
            if obj.get(key).is_some() {
                return Err(format!(
                    "{}: only ipv4 and ipv6 networks take an {key}; {kind} gets its address from the network",
                    obj.path(key)
                ));
            }
        }
        obj.only(&common)?;
    }
    let id = parse_id(obj)?;
    let mut network = Network {
        id,
        network_id: obj.string("network_id")?.map(str::to_string),
        kind,
        link: obj.required_string("link")?.to_string(),
        ip_address: None,
        netmask: None,
        routes: None,
        dns_nameservers: None,
        services: parse_services(obj)?,
    };
    if is_static {
        let (address, netmask) = parse_address(obj, family)?;
        network.ip_address = Some(address);
        network.netmask = netmask;
    }
    if let Some(items) = obj.array("routes")? {
        network.routes = Some(parse_routes(items, &obj.path("routes"), family, obj.at())?);
    } else if is_static {
        network.routes = Some(Vec::new());
    }
    if let Some(items) = obj.array("dns_nameservers")? {
        let path = obj.path("dns_nameservers");
        let servers = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = index(&path, i);
                let text = string_at(item, &at)?;
                net::parse_ip(text)
                    .map(|_| text.to_string())
                    .map_err(|e| format!("{at}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        network.dns_nameservers = Some(servers);
    }
    Ok(network)
}

/// A static network's `ip_address` (optionally with `/prefix`) and `netmask`: of the network's
/// family, the netmask contiguous, required unless the address carries a prefix, and agreeing
/// with it when both are given.
fn parse_address(obj: &Obj<'_>, family: Family) -> Result<(String, Option<String>), String> {
    let path = obj.path("ip_address");
    let text = obj.required_string("ip_address")?;
    let (address, prefix) = match text.split_once('/') {
        Some((address, prefix)) => (
            address,
            Some(net::parse_prefix(prefix, family).map_err(|e| format!("{path}: {e}"))?),
        ),
        None => (text, None),
    };
    let ip = net::parse_ip(address).map_err(|e| format!("{path}: {e}"))?;
    if Family::of(ip) != family {
        return Err(format!(
            "{path}: {ip} is {}; {} is {}",
            Family::of(ip),
            obj.at(),
            if family == Family::V4 { "ipv4" } else { "ipv6" }
        ));
    }
    let netmask = obj.string("netmask")?;
    let mask_prefix = netmask
        .map(|m| net::parse_netmask(m, family).map_err(|e| format!("{}: {e}", obj.path("netmask"))))
        .transpose()?;
    match (prefix, mask_prefix) {
        (None, None) => Err(format!(
            "{}: missing (required unless ip_address has a /prefix)",
            obj.path("netmask")
        )),
        (Some(p), Some(m)) if p != m => Err(format!(
            "{}: {} is /{m}, but ip_address says /{p}",
            obj.path("netmask"),
            netmask.unwrap_or_default()
        )),
        _ => Ok((text.to_string(), netmask.map(str::to_string))),
    }
}

/// A network's `routes`: `{network, netmask, gateway}`, all of the network's family.
fn parse_routes(
    items: &[Value],
    path: &str,
    family: Family,
    network: &str,
) -> Result<Vec<Route>, String> {
    let mut routes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = index(path, i);
        let obj = Obj::new(item, &at, "a route")?;
        obj.only(&["network", "netmask", "gateway"])?;
        let of_family = |key: &str| -> Result<std::net::IpAddr, String> {
            let text = obj.required_string(key)?;
            let ip = net::parse_ip(text).map_err(|e| format!("{}: {e}", obj.path(key)))?;
            if Family::of(ip) != family {
                return Err(format!(
                    "{}: {ip} is {}; {network} is {family}",
                    obj.path(key),
                    Family::of(ip)
                ));
            }
            Ok(ip)
        };
        let destination = of_family("network")?;
        of_family("gateway")?;
        let mask = obj.required_string("netmask")?;
        let prefix = net::parse_netmask(mask, family)
            .map_err(|e| format!("{}: {e}", obj.path("netmask")))?;
        if net::network_of(destination, prefix) != destination {
            return Err(format!(
                "{}: {destination} has host bits set for netmask {mask} (the network is {})",
                obj.path("network"),
                net::network_of(destination, prefix)
            ));
        }
        routes.push(Route {
            network: obj.required_string("network")?.to_string(),
            netmask: mask.to_string(),
            gateway: obj.required_string("gateway")?.to_string(),
        });
    }
    Ok(routes)
}

/// An object's optional `services`: `{"type": "dns", "address": ADDRESS}`, optionally with
/// `search` domains.
fn parse_services(parent: &Obj<'_>) -> Result<Option<Vec<Service>>, String> {
    let Some(items) = parent.array("services")? else {
        return Ok(None);
    };
    let path = parent.path("services");
    let mut services = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = index(&path, i);
        let obj = Obj::new(item, &at, "a service")?;
        obj.choice("type", &["dns"])?
            .ok_or_else(|| format!("{}: missing (required)", obj.path("type")))?;
        obj.only(&["type", "address", "search"])?;
        let address = obj.required_string("address")?;
        net::parse_ip(address).map_err(|e| format!("{}: {e}", obj.path("address")))?;
        let search = obj
            .array("search")?
            .map(|domains| {
                domains
                    .iter()
                    .enumerate()
                    .map(|(d, domain)| {
                        let at = index(&obj.path("search"), d);
                        let text = string_at(domain, &at)?;
                        net::check_domain(text).map_err(|e| format!("{at}: {e}"))?;
                        Ok(text.to_string())
                    })
                    .collect::<Result<Vec<_>, String>>()
            })
            .transpose()?;
        services.push(Service {
            kind: ServiceKind::Dns,
            address: address.to_string(),
            search,
        });
    }
    Ok(Some(services))
}

/// The references of a whole document: bond links exist, are `phy` and in one bond only; a
/// VLAN's link exists and is `phy` or `bond`, its id unique on it; every network's link exists;
/// no MAC on two `phy` links.
fn check_references(doc: &NetworkData) -> Result<(), String> {
    let find = |id: &str| doc.links.iter().position(|l| l.id == id);
    let mut bond_of: HashMap<&str, &str> = HashMap::new();
    let mut vlans: HashMap<(&str, u16), usize> = HashMap::new();
    let mut macs: HashMap<&str, usize> = HashMap::new();
    for (i, link) in doc.links.iter().enumerate() {
        let path = format!("{ROOT}.links[{i}]");
        match &link.kind {
            LinkKind::Phy {
                ethernet_mac_address,
            } => {
                if let Some(first) = macs.insert(ethernet_mac_address, i) {
                    return Err(format!(
                        "{path}.ethernet_mac_address: {ethernet_mac_address} is {ROOT}.links[{first}] already"
                    ));
                }
            }
            LinkKind::Bond { bond_links, .. } => {
                for (m, member) in bond_links.iter().enumerate() {
                    let at = format!("{path}.bond_links[{m}]");
                    let Some(j) = find(member) else {
                        return Err(format!("{at}: no link {member:?} in {ROOT}.links"));
                    };
                    if !matches!(doc.links[j].kind, LinkKind::Phy { .. }) {
                        return Err(format!(
                            "{at}: {member:?} is not a phy link; a bond's links are phy links"
                        ));
                    }
                    if let Some(other) = bond_of.insert(member, &link.id) {
                        return Err(format!("{at}: {member:?} is in bond {other:?} already"));
                    }
                }
            }
            LinkKind::Vlan {
                vlan_link, vlan_id, ..
            } => {
                let Some(j) = find(vlan_link) else {
                    return Err(format!(
                        "{path}.vlan_link: no link {vlan_link:?} in {ROOT}.links"
                    ));
                };
                if matches!(doc.links[j].kind, LinkKind::Vlan { .. }) {
                    return Err(format!(
                        "{path}.vlan_link: {vlan_link:?} is a vlan link; a VLAN goes on a phy or bond link"
                    ));
                }
                if let Some(first) = vlans.insert((vlan_link, *vlan_id), i) {
                    return Err(format!(
                        "{path}.vlan_id: VLAN {vlan_id} on {vlan_link:?} is {ROOT}.links[{first}] already"
                    ));
                }
            }
        }
    }
    for (i, network) in doc.networks.iter().enumerate() {
        if find(&network.link).is_none() {
            return Err(format!(
                "{ROOT}.networks[{i}].link: no link {:?} in {ROOT}.links",
                network.link
            ));
        }
    }
    Ok(())
}

/// The additions' references, against the template (policy `layered`).
fn check_additions(doc: &NetworkData, template: &Template) -> Result<(), String> {
    let open = &template.tenants.links;
    for (i, link) in doc.links.iter().enumerate() {
        let path = format!("{ROOT}.links[{i}]");
        if template.link(&link.id).is_some() {
            return Err(format!(
                "{path}.id: {:?} is a link of the site's template",
                link.id
            ));
        }
        let LinkKind::Vlan {
            vlan_link, vlan_id, ..
        } = &link.kind
        else {
            return Err(format!(
                "{path}.type: a claim adds only vlan links on this pod manager (policy layered); \
                 phy and bond links come from the site's template, got {:?}",
                link_type(&link.kind)
            ));
        };
        if template.link(vlan_link).is_none() {
            let hint = if doc.link(vlan_link).is_some() {
                format!(
                    "{vlan_link:?} is a vlan link of network_data; a VLAN goes on a phy or bond \
                     link of the site's template"
                )
            } else {
                format!("no link {vlan_link:?} in the site's template")
            };
            return Err(format!("{path}.vlan_link: {hint}"));
        }
        let ranges = open
            .get(vlan_link)
            .map(|t| t.vlans.as_slice())
            .unwrap_or_default();
        if ranges.is_empty() {
            return Err(format!(
                "{path}.vlan_link: the site's template opens no VLANs on link {vlan_link:?}"
            ));
        }
        if !open.get(vlan_link).is_some_and(|t| t.allows_vlan(*vlan_id)) {
            let shown: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
            return Err(format!(
                "{path}.vlan_id: VLAN {vlan_id} is outside the ranges open on {vlan_link:?} ({})",
                shown.join(", ")
            ));
        }
        if let Some(theirs) = template.links.iter().find(|l| {
            matches!(&l.kind, template::LinkKind::Vlan { link, vlan_id: v, .. } if link == vlan_link && v == vlan_id)
        }) {
            return Err(format!(
                "{path}.vlan_id: VLAN {vlan_id} on {vlan_link:?} is the site's link {:?}",
                theirs.id
            ));
        }
        if let Some(first) = doc.links[..i].iter().position(|l| {
            matches!(&l.kind, LinkKind::Vlan { vlan_link: other, vlan_id: v, .. } if other == vlan_link && v == vlan_id)
        }) {
            return Err(format!(
                "{path}.vlan_id: VLAN {vlan_id} on {vlan_link:?} is {ROOT}.links[{first}] already"
            ));
        }
    }
    for (i, network) in doc.networks.iter().enumerate() {
        let path = format!("{ROOT}.networks[{i}]");
        if template.networks.iter().any(|n| n.id == network.id) {
            return Err(format!(
                "{path}.id: {:?} is a network of the site's template",
                network.id
            ));
        }
        let link = &network.link;
        if doc.link(link).is_some() {
            continue;
        }
        if template.link(link).is_none() {
            return Err(format!(
                "{path}.link: no link {link:?} in network_data.links or the site's template"
            ));
        }
        if !open.get(link).is_some_and(|t| t.networks) {
            return Err(format!(
                "{path}.link: link {link:?} of the site's template is not open to tenants' networks"
            ));
        }
    }
    Ok(())
}

/// The `type` of a link.
fn link_type(kind: &LinkKind) -> &'static str {
    match kind {
        LinkKind::Phy { .. } => "phy",
        LinkKind::Bond { .. } => "bond",
        LinkKind::Vlan { .. } => "vlan",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network_data::tests::{doc_addresses, doc_host, doc_template};
    use serde_json::json;

    /// The consumer example of `docs/network-config.md`.
    fn doc_consumer() -> Value {
        json!({
           "links": [{"id": "port0", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:01"}],
           "networks": [{"id": "n0", "type": "ipv4", "link": "port0", "ip_address": "203.0.113.9",
                         "netmask": "255.255.255.0",
                         "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "203.0.113.1"}]}],
           "services": [{"type": "dns", "address": "203.0.113.53"}]
        })
    }

    fn consumer_error(edit: impl FnOnce(&mut Value), host: Option<&Host>) -> Error {
        let mut doc = doc_consumer();
        edit(&mut doc);
        parse_document(&doc.to_string(), host).unwrap_err()
    }

    fn invalid(message: &str) -> Error {
        Error::InvalidInput(message.to_string())
    }

    fn as_value(doc: &NetworkData) -> Value {
        serde_json::from_str(&doc.to_json().unwrap()).unwrap()
    }

    #[test]
    fn brought_or_not() {
        assert_eq!(brought(None), None);
        assert_eq!(brought(Some(" ")), None);
        assert_eq!(brought(Some("null")), None);
        assert_eq!(brought(Some(" { } ")), None);
        assert_eq!(brought(Some("{\"links\":[]}")), Some("{\"links\":[]}"));
        assert_eq!(brought(Some("{")), Some("{"));
    }

    #[test]
    fn doc_example_is_accepted_and_normalized() {
        let mut doc = doc_consumer();
        doc["links"][0]["ethernet_mac_address"] = json!("52:54:00:AA:00:01");
        doc["links"].as_array_mut().unwrap().push(
            json!({"id": "v7", "type": "vlan", "vlan_link": "port0", "vlan_id": 7, "mtu": 1500, "name": "app0"}),
        );
        let got = parse_document(&doc.to_string(), Some(&doc_host())).unwrap();
        let got = as_value(&got);
        assert_eq!(got["links"][0]["ethernet_mac_address"], "52:54:00:aa:00:01");
        assert_eq!(
            got["links"][1],
            json!({"id": "v7", "type": "vlan", "vlan_link": "port0", "vlan_id": 7,
                   "vlan_mac_address": "52:54:00:aa:00:01", "mtu": 1500, "name": "app0"})
        );
        assert_eq!(got["networks"], doc_consumer()["networks"]);
        assert_eq!(got["services"], doc_consumer()["services"]);
    }

    #[test]
    fn unknown_mac_with_a_host() {
        let e = consumer_error(
            |d| d["links"][0]["ethernet_mac_address"] = json!("52:54:00:aa:00:09"),
            Some(&doc_host()),
        );
        assert_eq!(
            e,
            invalid(
                "network_data.links[0].ethernet_mac_address: host node-7 has no NIC with MAC \
                 52:54:00:aa:00:09; it has 52:54:00:aa:00:01 (eno1), 52:54:00:aa:00:02 (eno2), \
                 52:54:00:aa:00:03 (eno3)"
            )
        );
        // Without a host, the MAC is only checked for form.
        let mut doc = doc_consumer();
        doc["links"][0]["ethernet_mac_address"] = json!("52:54:00:aa:00:09");
        assert!(parse_document(&doc.to_string(), None).is_ok());
        let e = consumer_error(
            |d| d["links"][0]["ethernet_mac_address"] = json!("52:54:00"),
            None,
        );
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.starts_with("network_data.links[0].ethernet_mac_address: \"52:54:00\" is not a MAC")),
            "{e:?}"
        );
    }

    #[test]
    fn bad_netmask() {
        let e = consumer_error(|d| d["networks"][0]["netmask"] = json!("255.0.255.0"), None);
        assert_eq!(
            e,
            invalid("network_data.networks[0].netmask: 255.0.255.0 is not a contiguous netmask")
        );
        let e = consumer_error(|d| d["networks"][0]["netmask"] = json!("ffff:ffff::"), None);
        assert_eq!(
            e,
            invalid(
                "network_data.networks[0].netmask: ffff:ffff:: is an IPv6 netmask, expected IPv4"
            )
        );
        let e = consumer_error(|d| d["networks"][0]["netmask"] = Value::Null, None);
        assert_eq!(
            e,
            invalid(
                "network_data.networks[0].netmask: missing (required unless ip_address has a /prefix)"
            )
        );
        let e = consumer_error(
            |d| d["networks"][0]["routes"][0]["netmask"] = json!("255.255.0.255"),
            None,
        );
        assert_eq!(
            e,
            invalid(
                "network_data.networks[0].routes[0].netmask: 255.255.0.255 is not a contiguous netmask"
            )
        );
        let e = consumer_error(
            |d| d["networks"][0]["ip_address"] = json!("203.0.113.9/16"),
            None,
        );
        assert_eq!(
            e,
            invalid(
                "network_data.networks[0].netmask: 255.255.255.0 is /24, but ip_address says /16"
            )
        );
    }

    #[test]
    fn ipv6_with_prefix_needs_no_netmask() {
        let doc = json!({
            "links": [{"id": "p", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:01"}],
            "networks": [{"id": "n6", "type": "ipv6", "link": "p", "ip_address": "2001:db8::9/64",
                          "routes": [{"network": "::", "netmask": "::", "gateway": "2001:db8::1"}]},
                         {"id": "s", "type": "ipv6_slaac", "link": "p"}]
        });
        let got = as_value(&parse_document(&doc.to_string(), None).unwrap());
        assert_eq!(got["networks"][0]["ip_address"], "2001:db8::9/64");
        assert_eq!(
            got["networks"][1],
            json!({"id": "s", "type": "ipv6_slaac", "link": "p"})
        );
        let mut bad = doc.clone();
        bad["networks"][0]["routes"][0]["gateway"] = json!("192.0.2.1");
        let e = parse_document(&bad.to_string(), None).unwrap_err();
        assert_eq!(
            e,
            invalid(
                "network_data.networks[0].routes[0].gateway: 192.0.2.1 is IPv4; network_data.networks[0] is IPv6"
            )
        );
        let mut bad = doc;
        bad["networks"][0]["ip_address"] = json!("203.0.113.9/24");
        let e = parse_document(&bad.to_string(), None).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.starts_with("network_data.networks[0].ip_address: prefix \"24\"") || m.starts_with("network_data.networks[0].ip_address: 203.0.113.9 is IPv4")),
            "{e:?}"
        );
    }

    #[test]
    fn network_on_missing_link() {
        let e = consumer_error(|d| d["networks"][0]["link"] = json!("port9"), None);
        assert_eq!(
            e,
            invalid("network_data.networks[0].link: no link \"port9\" in network_data.links")
        );
    }

    #[test]
    fn duplicate_ids() {
        let e = consumer_error(
            |d| {
                d["links"].as_array_mut().unwrap().push(
                    json!({"id": "port0", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:02"}),
                );
            },
            None,
        );
        assert_eq!(
            e,
            invalid("network_data.links[1].id: \"port0\" is used by network_data.links[0] already")
        );
        let e = consumer_error(
            |d| {
                d["networks"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"id": "n0", "type": "ipv4_dhcp", "link": "port0"}));
            },
            None,
        );
        assert_eq!(
            e,
            invalid(
                "network_data.networks[1].id: \"n0\" is used by network_data.networks[0] already"
            )
        );
    }

    #[test]
    fn link_types_and_fields() {
        let e = consumer_error(|d| d["links"][0]["type"] = json!("bridge"), None);
        assert_eq!(
            e,
            invalid(
                "network_data.links[0].type: unsupported link type \"bridge\"; expected one of phy, bond, vlan"
            )
        );
        let e = consumer_error(|d| d["links"][0]["speed"] = json!(10), None);
        assert_eq!(
            e,
            invalid(
                "network_data.links[0].speed: unknown field; expected one of id, type, name, mtu, vif_id, ethernet_mac_address"
            )
        );
        let e = consumer_error(|d| d["networks"][0]["type"] = json!("ipv4_static"), None);
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.starts_with("network_data.networks[0].type: expected one of ipv4, ipv6,")),
            "{e:?}"
        );
        let e = consumer_error(|d| d["services"][0]["type"] = json!("ntp"), None);
        assert_eq!(
            e,
            invalid("network_data.services[0].type: expected one of dns, got \"ntp\"")
        );
        // OpenStack's optional fields pass.
        let mut doc = doc_consumer();
        doc["links"][0]["vif_id"] = json!("a1b2");
        doc["networks"][0]["network_id"] = json!("net-uuid");
        doc["networks"][0]["dns_nameservers"] = json!(["203.0.113.53"]);
        doc["networks"][0]["services"] = json!([{"type": "dns", "address": "203.0.113.53"}]);
        let got = as_value(&parse_document(&doc.to_string(), None).unwrap());
        assert_eq!(got["links"][0]["vif_id"], "a1b2");
        assert_eq!(got["networks"][0]["network_id"], "net-uuid");
        assert_eq!(got["networks"][0]["services"][0]["address"], "203.0.113.53");
    }

    #[test]
    fn bonds_and_vlans() {
        let base = json!({"links": [
            {"id": "a", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:01"},
            {"id": "b", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:02"},
            {"id": "bond", "type": "bond", "bond_links": ["a", "b"], "bond_mode": "active-backup"},
            {"id": "v", "type": "vlan", "vlan_link": "bond", "vlan_id": 10}
        ]});
        let got = as_value(&parse_document(&base.to_string(), Some(&doc_host())).unwrap());
        // The bond has no MAC of its own: the VLAN takes the first member's, as the kernel does.
        assert_eq!(got["links"][3]["vlan_mac_address"], "52:54:00:aa:00:01");
        let error = |edit: &dyn Fn(&mut Value)| {
            let mut doc = base.clone();
            edit(&mut doc);
            match parse_document(&doc.to_string(), None).unwrap_err() {
                Error::InvalidInput(m) => m,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            error(&|d| d["links"][2]["bond_links"] = json!(["a", "v"])),
            "network_data.links[2].bond_links[1]: \"v\" is not a phy link; a bond's links are phy links"
        );
        assert_eq!(
            error(&|d| d["links"][2]["bond_mode"] = json!("fast")),
            "network_data.links[2].bond_mode: expected one of balance-rr, active-backup, balance-xor, \
             broadcast, 802.3ad, balance-tlb, balance-alb, got \"fast\""
        );
        assert_eq!(
            error(&|d| d["links"][3]["vlan_link"] = json!("v")),
            "network_data.links[3].vlan_link: \"v\" is a vlan link; a VLAN goes on a phy or bond link"
        );
        assert_eq!(
            error(&|d| d["links"][3]["vlan_id"] = json!(0)),
            "network_data.links[3].vlan_id: expected an integer from 1 to 4094, got 0"
        );
        assert_eq!(
            error(&|d| d["links"][1]["ethernet_mac_address"] = json!("52:54:00:AA:00:01")),
            "network_data.links[1].ethernet_mac_address: 52:54:00:aa:00:01 is network_data.links[0] already"
        );
    }

    fn layered(additions: Value) -> Result<NetworkData, Error> {
        parse_additions(&additions.to_string(), &doc_template())
    }

    /// The layered example of `docs/network-config.md`.
    fn doc_additions() -> Value {
        json!({
           "links": [{"id": "app", "type": "vlan", "vlan_link": "bond0", "vlan_id": 210}],
           "networks": [{"id": "app-net", "type": "ipv4", "link": "app", "ip_address": "172.16.5.9",
                         "netmask": "255.255.0.0"}]
        })
    }

    #[test]
    fn layered_success() {
        let additions = layered(doc_additions()).unwrap();
        let base = network_data::render(&doc_template(), &doc_host(), &doc_addresses()).unwrap();
        let mut extra = additions.clone();
        extra.services = vec![
            Service::dns("192.0.2.53".parse().unwrap()),
            Service::dns("2001:db8::53".parse().unwrap()),
            Service {
                kind: ServiceKind::Dns,
                address: "2001:DB8:0::53".into(),
                search: None,
            },
        ];
        let merged = as_value(&merge(base, extra));
        let mut expected = crate::network_data::tests::doc_rendering();
        expected["links"].as_array_mut().unwrap().push(json!(
            {"id": "app", "type": "vlan", "vlan_link": "bond0", "vlan_id": 210,
             "vlan_mac_address": "52:54:00:aa:00:01"}
        ));
        expected["networks"].as_array_mut().unwrap().push(json!(
            {"id": "app-net", "network_id": "app-net", "type": "ipv4", "link": "app",
             "ip_address": "172.16.5.9", "netmask": "255.255.0.0", "routes": []}
        ));
        expected["services"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "dns", "address": "2001:db8::53"}));
        assert_eq!(merged, expected);
        // A network straight on the open bond.
        let ok = layered(json!({"networks": [{"id": "b", "type": "ipv6_slaac", "link": "bond0"}]}));
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn layered_vlan_outside_range() {
        let mut add = doc_additions();
        add["links"][0]["vlan_id"] = json!(100);
        assert_eq!(
            layered(add).unwrap_err(),
            invalid(
                "network_data.links[0].vlan_id: VLAN 100 is outside the ranges open on \"bond0\" (200-299)"
            )
        );
        let mut add = doc_additions();
        add["links"][0]["vlan_link"] = json!("boot");
        assert_eq!(
            layered(add).unwrap_err(),
            invalid(
                "network_data.links[0].vlan_link: the site's template opens no VLANs on link \"boot\""
            )
        );
        let mut add = doc_additions();
        add["links"][0] =
            json!({"id": "x", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:09"});
        assert!(
            matches!(layered(add).unwrap_err(), Error::InvalidInput(m) if m.starts_with("network_data.links[0].type: a claim adds only vlan links"))
        );
    }

    #[test]
    fn layered_vlan_of_the_template() {
        let mut t = crate::template::tests::doc_template();
        t["links"][4]["vlan_id"] = json!(210);
        let template = Template::parse(&t.to_string()).unwrap();
        let e = parse_additions(&doc_additions().to_string(), &template).unwrap_err();
        assert_eq!(
            e,
            invalid(
                "network_data.links[0].vlan_id: VLAN 210 on \"bond0\" is the site's link \"bond0.100\""
            )
        );
    }

    #[test]
    fn layered_network_on_a_closed_link() {
        let mut add = doc_additions();
        add["networks"][0]["link"] = json!("boot");
        assert_eq!(
            layered(add).unwrap_err(),
            invalid(
                "network_data.networks[0].link: link \"boot\" of the site's template is not open to tenants' networks"
            )
        );
        let mut add = doc_additions();
        add["networks"][0]["link"] = json!("nowhere");
        assert_eq!(
            layered(add).unwrap_err(),
            invalid(
                "network_data.networks[0].link: no link \"nowhere\" in network_data.links or the site's template"
            )
        );
    }

    #[test]
    fn layered_id_collision() {
        let mut add = doc_additions();
        add["links"][0]["id"] = json!("bond0.100");
        add["networks"][0]["link"] = json!("bond0.100");
        assert_eq!(
            layered(add).unwrap_err(),
            invalid("network_data.links[0].id: \"bond0.100\" is a link of the site's template")
        );
        let mut add = doc_additions();
        add["networks"][0]["id"] = json!("prod");
        assert_eq!(
            layered(add).unwrap_err(),
            invalid("network_data.networks[0].id: \"prod\" is a network of the site's template")
        );
    }
}
