//! `network_data.json` in the OpenStack format, and its rendering from a template for one host and
//! the addresses IPAM holds for it (policy `admin`, and the base of `layered`).
//!
//! The output follows what cloud-init's OpenStack reader (`convert_net_json`) reads: `phy` links
//! carry `ethernet_mac_address` (cloud-init finds the interface by it), bonds `bond_links`,
//! `bond_mode` and the other `bond_*` parameters, VLANs `vlan_link`, `vlan_id` and
//! `vlan_mac_address` (which cloud-init requires). Static networks carry `ip_address`, `netmask`
//! and `routes` (`{network, netmask, gateway}`); IPv6 netmasks are written as an address
//! (`ffff:ffff:ffff:ffff::`), which cloud-init turns back into a prefix length. Absent optional
//! fields are left out, never `null`; everything is in template order.

use std::collections::HashMap;
use std::net::IpAddr;

use serde::Serialize;

use crate::net::{self, Family};
use crate::template::{self, Gateway, MacRef, NetworkKind, NicRef, Template};
use crate::{Address, Error, Host};

/// A `network_data.json` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkData {
    pub links: Vec<Link>,
    pub networks: Vec<Network>,
    pub services: Vec<Service>,
}

/// A link (`links[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    pub id: String,
    /// `type` and the type's fields.
    #[serde(flatten)]
    pub kind: LinkKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u16>,
    /// The interface name cloud-init gives the link (a consumer's document only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// OpenStack's VIF id (a consumer's document only; readers ignore it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vif_id: Option<String>,
}

/// A link's type and the fields that go with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum LinkKind {
    Phy {
        ethernet_mac_address: String,
    },
    Bond {
        bond_links: Vec<String>,
        bond_mode: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        bond_xmit_hash_policy: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        bond_miimon: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ethernet_mac_address: Option<String>,
    },
    Vlan {
        vlan_link: String,
        vlan_id: u16,
        /// Always set in a rendered document: cloud-init requires it.
        #[serde(skip_serializing_if = "Option::is_none")]
        vlan_mac_address: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ethernet_mac_address: Option<String>,
    },
}

/// A network (`networks[]`): an address configuration on a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Network {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_id: Option<String>,
    /// `ipv4`, `ipv6`, `ipv4_dhcp`, `ipv6_dhcpv6-stateful`, `ipv6_slaac`, ...
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub link: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netmask: Option<String>,
    /// Present (possibly empty) on static networks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes: Option<Vec<Route>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns_nameservers: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<Service>>,
}

/// A static route of a network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    pub network: String,
    pub netmask: String,
    pub gateway: String,
}

/// A service (`services[]`); only DNS servers exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Service {
    #[serde(rename = "type")]
    pub kind: ServiceKind,
    pub address: String,
    /// Search domains. Not in OpenStack's schema: cloud-init reads them from a `dns` service
    /// (as `search`), which is where the template's `dns.search` goes (on the first service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<Vec<String>>,
}

/// The type of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceKind {
    Dns,
}

impl Service {
    /// A DNS server, without search domains.
    pub fn dns(address: IpAddr) -> Self {
        Self {
            kind: ServiceKind::Dns,
            address: address.to_string(),
            search: None,
        }
    }
}

impl NetworkData {
    /// The JSON text of the document.
    pub fn to_json(&self) -> Result<String, Error> {
        serde_json::to_string(self)
            .map_err(|e| Error::Internal(format!("network_data: cannot serialize ({e})")))
    }

    /// The link of that id.
    pub fn link(&self, id: &str) -> Option<&Link> {
        self.links.iter().find(|l| l.id == id)
    }

    /// The MAC address a link has on the host: a `phy` link's `ethernet_mac_address`, a bond's
    /// (else its first link's, as the kernel does), a VLAN's `vlan_mac_address` (else its link's).
    pub fn mac_of(&self, id: &str) -> Option<&str> {
        let mut id = id;
        // Bond -> phy and VLAN -> bond -> phy: three steps at most in a valid document.
        for _ in 0..4 {
            match &self.link(id)?.kind {
                LinkKind::Phy {
                    ethernet_mac_address,
                } => return Some(ethernet_mac_address),
                LinkKind::Bond {
                    ethernet_mac_address: Some(mac),
                    ..
                }
                | LinkKind::Vlan {
                    vlan_mac_address: Some(mac),
                    ..
                } => return Some(mac),
                LinkKind::Bond { bond_links, .. } => id = bond_links.first()?,
                LinkKind::Vlan { vlan_link, .. } => id = vlan_link,
            }
        }
        None
    }

    /// Adds DNS servers not listed yet (compared as addresses: `2001:DB8::1` is `2001:db8::1`),
    /// in order.
    pub fn add_services(&mut self, services: impl IntoIterator<Item = Service>) {
        let key = |s: &Service| s.address.parse::<IpAddr>().map_err(|_| s.address.clone());
        for service in services {
            if !self.services.iter().any(|s| key(s) == key(&service)) {
                self.services.push(service);
            }
        }
    }
}

/// The host's NICs, with their MACs normalized.
#[derive(Debug)]
struct Nics<'a> {
    host: &'a Host,
    /// `(name, MAC)` in inventory order.
    nics: Vec<(Option<&'a str>, String)>,
    boot_mac: Option<String>,
}

impl<'a> Nics<'a> {
    fn new(host: &'a Host) -> Result<Self, Error> {
        let nics = host
            .nics
            .iter()
            .enumerate()
            .map(|(i, nic)| {
                net::parse_mac(&nic.mac)
                    .map(|mac| (nic.name.as_deref(), mac))
                    .map_err(|e| Error::InvalidInput(format!("host.nics[{i}].mac: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let boot_mac = host
            .boot_mac
            .as_deref()
            .filter(|m| !m.trim().is_empty())
            .map(|m| {
                net::parse_mac(m.trim())
                    .map_err(|e| Error::InvalidInput(format!("host.boot-mac: {e}")))
            })
            .transpose()?;
        Ok(Self {
            host,
            nics,
            boot_mac,
        })
    }

    /// The NICs as an error message lists them: by name where they have one, else by MAC.
    fn listed_by_name(&self) -> String {
        if self.nics.is_empty() {
            return "it has none".to_string();
        }
        let names: Vec<&str> = self
            .nics
            .iter()
            .map(|(name, mac)| name.unwrap_or(mac))
            .collect();
        format!("it has {}", names.join(", "))
    }

    /// The NICs as an error message lists them: by MAC, with the name where known.
    pub(crate) fn listed_by_mac(&self) -> String {
        if self.nics.is_empty() {
            return "it has none".to_string();
        }
        let macs: Vec<String> = self
            .nics
            .iter()
            .map(|(name, mac)| match name {
                Some(name) => format!("{mac} ({name})"),
                None => mac.clone(),
            })
            .collect();
        format!("it has {}", macs.join(", "))
    }

    fn has_mac(&self, mac: &str) -> bool {
        self.nics.iter().any(|(_, m)| m == mac)
    }

    /// The MAC of the NIC a `phy` link names; `path` is the link's `nic` field.
    fn resolve(&self, nic: &NicRef, path: &str) -> Result<String, Error> {
        let host = &self.host.name;
        match nic {
            NicRef::Name(name) => self
                .nics
                .iter()
                .find(|(n, _)| *n == Some(name.as_str()))
                .map(|(_, mac)| mac.clone())
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "{path}: host {host} has no NIC named {name:?}; {}",
                        self.listed_by_name()
                    ))
                }),
            NicRef::Mac(mac) => {
                if self.has_mac(mac) {
                    Ok(mac.clone())
                } else {
                    Err(Error::NotFound(format!(
                        "{path}: host {host} has no NIC with MAC {mac}; {}",
                        self.listed_by_mac()
                    )))
                }
            }
            NicRef::Boot => self
                .boot_mac
                .clone()
                .or_else(|| self.nics.first().map(|(_, mac)| mac.clone()))
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "{path}: host {host} has no boot NIC (no boot MAC, no NICs)"
                    ))
                }),
        }
    }
}

/// Checks that every MAC is one of the host's NICs; `macs` yields `(path, MAC)`. The error names
/// the field and the NICs the host has.
pub(crate) fn check_host_macs<'m>(
    host: &Host,
    macs: impl IntoIterator<Item = (String, &'m str)>,
) -> Result<(), Error> {
    let nics = Nics::new(host)?;
    for (path, mac) in macs {
        if !nics.has_mac(mac) {
            return Err(Error::InvalidInput(format!(
                "{path}: host {} has no NIC with MAC {mac}; {}",
                host.name,
                nics.listed_by_mac()
            )));
        }
    }
    Ok(())
}

/// An address IPAM holds, checked.
#[derive(Debug)]
struct Held {
    address: IpAddr,
    prefix: u8,
    gateway: Option<IpAddr>,
    dns_servers: Vec<IpAddr>,
}

/// The address held from `pool`, for the static network `networks[index]` of `family`.
fn held(addresses: &[Address], pool: &str, family: Family, network: &str) -> Result<Held, Error> {
    let bad = |m: String| Error::InvalidInput(format!("addresses: {m}"));
    let mut from_pool = addresses.iter().filter(|a| a.pool == pool);
    let Some(held) = from_pool.next() else {
        return Err(bad(format!("no address from pool {pool:?}")));
    };
    if from_pool.next().is_some() {
        return Err(bad(format!(
            "{} addresses from pool {pool:?}; expected one",
            addresses.iter().filter(|a| a.pool == pool).count()
        )));
    }
    let address = net::parse_ip(&held.address).map_err(|e| bad(format!("pool {pool:?}: {e}")))?;
    if Family::of(address) != family {
        return Err(bad(format!(
            "{address} from pool {pool:?} is {}; {network} takes {family}",
            Family::of(address)
        )));
    }
    if held.prefix > family.max_prefix() {
        return Err(bad(format!(
            "prefix /{} of pool {pool:?} is too long for {family}",
            held.prefix
        )));
    }
    let gateway = held
        .gateway
        .as_deref()
        .filter(|g| !g.is_empty())
        .map(|g| {
            net::parse_ip_of(g, family).map_err(|e| bad(format!("gateway of pool {pool:?}: {e}")))
        })
        .transpose()?;
    let dns_servers = held
        .dns_servers
        .iter()
        .map(|d| net::parse_ip(d).map_err(|e| bad(format!("DNS server of pool {pool:?}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Held {
        address,
        prefix: held.prefix,
        gateway,
        dns_servers,
    })
}

/// The `type` a template network is rendered with. `ipv6_dhcp` becomes OpenStack's
/// `ipv6_dhcpv6-stateful` (cloud-init configures DHCPv6 and accepts router advertisements).
fn network_type(kind: &NetworkKind) -> &'static str {
    match kind {
        NetworkKind::Static {
            family: Family::V4, ..
        } => "ipv4",
        NetworkKind::Static {
            family: Family::V6, ..
        } => "ipv6",
        NetworkKind::Ipv4Dhcp => "ipv4_dhcp",
        NetworkKind::Ipv6Dhcp => "ipv6_dhcpv6-stateful",
        NetworkKind::Ipv6Slaac => "ipv6_slaac",
    }
}

/// Renders a template for a host and the addresses IPAM holds for it (one per pool of
/// [`Template::pools`]).
///
/// Errors: `not-found` when the host lacks a NIC a `phy` link names (the message lists the NICs
/// it has); `invalid-input` when an address is missing or does not fit its network, a pool has no
/// gateway for a route that takes it, or two `phy` links come out as the same NIC.
pub fn render(
    template: &Template,
    host: &Host,
    addresses: &[Address],
) -> Result<NetworkData, Error> {
    let nics = Nics::new(host)?;
    let mut macs: HashMap<&str, String> = HashMap::new();
    // Physical links first, then bonds (which take their links' MACs), then VLANs.
    for (i, link) in template.links.iter().enumerate() {
        if let template::LinkKind::Phy { nic } = &link.kind {
            let path = format!("links[{i}].nic");
            let mac = nics.resolve(nic, &path)?;
            if let Some(other) = macs.iter().find(|(_, m)| **m == mac).map(|(id, _)| *id) {
                return Err(Error::InvalidInput(format!(
                    "{path}: on host {} this is NIC {mac}, which link {other:?} is already",
                    host.name
                )));
            }
            macs.insert(&link.id, mac);
        }
    }
    let mac_of = |mac: &Option<MacRef>, default: &str, macs: &HashMap<&str, String>| match mac {
        Some(MacRef::Mac(mac)) => Some(mac.clone()),
        Some(MacRef::Link(id)) => macs.get(id.as_str()).cloned(),
        None => macs.get(default).cloned(),
    };
    for link in &template.links {
        if let template::LinkKind::Bond { links, mac, .. } = &link.kind {
            let first = links.first().map(String::as_str).unwrap_or_default();
            if let Some(mac) = mac_of(mac, first, &macs) {
                macs.insert(&link.id, mac);
            }
        }
    }
    for link in &template.links {
        if let template::LinkKind::Vlan {
            link: parent, mac, ..
        } = &link.kind
            && let Some(mac) = mac_of(mac, parent, &macs)
        {
            macs.insert(&link.id, mac);
        }
    }
    let rendered_mac = |id: &str| {
        macs.get(id)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("links: no MAC for link {id:?}")))
    };

    let mut links = Vec::with_capacity(template.links.len());
    for link in &template.links {
        let kind = match &link.kind {
            template::LinkKind::Phy { .. } => LinkKind::Phy {
                ethernet_mac_address: rendered_mac(&link.id)?,
            },
            template::LinkKind::Bond {
                links,
                mode,
                hash_policy,
                miimon,
                ..
            } => LinkKind::Bond {
                bond_links: links.clone(),
                bond_mode: (*mode).to_string(),
                bond_xmit_hash_policy: hash_policy.map(str::to_string),
                bond_miimon: *miimon,
                ethernet_mac_address: Some(rendered_mac(&link.id)?),
            },
            template::LinkKind::Vlan {
                link: parent,
                vlan_id,
                ..
            } => LinkKind::Vlan {
                vlan_link: parent.clone(),
                vlan_id: *vlan_id,
                vlan_mac_address: Some(rendered_mac(&link.id)?),
                ethernet_mac_address: None,
            },
        };
        links.push(Link {
            id: link.id.clone(),
            kind,
            mtu: link.mtu,
            name: None,
            vif_id: None,
        });
    }

    let mut networks = Vec::with_capacity(template.networks.len());
    let mut pool_dns: Vec<IpAddr> = Vec::new();
    for (i, network) in template.networks.iter().enumerate() {
        let mut rendered = Network {
            id: network.id.clone(),
            network_id: Some(network.id.clone()),
            kind: network_type(&network.kind),
            link: network.link.clone(),
            ip_address: None,
            netmask: None,
            routes: None,
            dns_nameservers: None,
            services: None,
        };
        if let NetworkKind::Static {
            family,
            pool,
            routes,
            default_route,
        } = &network.kind
        {
            let path = format!("networks[{i}]");
            let held = held(
                addresses,
                pool,
                *family,
                &format!("{path} ({})", network.id),
            )?;
            let pool_gateway = |field: String| {
                held.gateway.ok_or_else(|| {
                    Error::InvalidInput(format!("{field}: pool {pool:?} has no gateway"))
                })
            };
            let mut out = Vec::with_capacity(routes.len() + 1);
            for (r, route) in routes.iter().enumerate() {
                let gateway = match route.gateway {
                    Gateway::Address(ip) => ip,
                    Gateway::Pool => pool_gateway(format!("{path}.routes[{r}].gateway"))?,
                };
                out.push(Route {
                    network: route.network.to_string(),
                    netmask: net::netmask(*family, route.prefix).to_string(),
                    gateway: gateway.to_string(),
                });
            }
            if *default_route {
                let any = family.unspecified().to_string();
                out.push(Route {
                    network: any.clone(),
                    netmask: any,
                    gateway: pool_gateway(format!("{path}.default_route"))?.to_string(),
                });
            }
            rendered.ip_address = Some(held.address.to_string());
            rendered.netmask = Some(net::netmask(*family, held.prefix).to_string());
            rendered.routes = Some(out);
            pool_dns.extend(held.dns_servers);
        }
        networks.push(rendered);
    }

    let mut document = NetworkData {
        links,
        networks,
        services: Vec::new(),
    };
    document.add_services(template.dns.servers.iter().copied().map(Service::dns));
    if template.dns.from_pools {
        document.add_services(pool_dns.into_iter().map(Service::dns));
    }
    if !template.dns.search.is_empty() {
        let Some(first) = document.services.first_mut() else {
            return Err(Error::InvalidInput(
                "dns.search: no DNS server to carry the search domains (dns.servers is empty and \
                 the pools have none)"
                    .to_string(),
            ));
        };
        first.search = Some(template.dns.search.clone());
    }
    Ok(document)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Nic;
    use serde_json::{Value, json};

    /// A host whose `eno1`/`eno2` are bonded and which boots from `eno3`.
    pub(crate) fn doc_host() -> Host {
        let nic = |name: &str, mac: &str| Nic {
            name: Some(name.to_string()),
            mac: mac.to_string(),
        };
        Host {
            id: "0b5e8a2c-5a39-4a4e-9f0a-6f0c5e3d2a11".into(),
            name: "node-7".into(),
            uuid: Some("4c4c4544-0047-3110-8052-b4c04f4b5a31".into()),
            boot_mac: Some("52:54:00:AA:00:03".into()),
            nics: vec![
                nic("eno1", "52:54:00:aa:00:01"),
                nic("eno2", "52:54:00:aa:00:02"),
                nic("eno3", "52:54:00:aa:00:03"),
            ],
        }
    }

    /// The addresses IPAM holds for the doc's host.
    pub(crate) fn doc_addresses() -> Vec<Address> {
        vec![
            Address {
                pool: "prod-v4".into(),
                address: "192.168.10.7".into(),
                prefix: 24,
                gateway: Some("192.168.10.1".into()),
                dns_servers: vec!["192.168.10.53".into(), "192.0.2.53".into()],
            },
            Address {
                pool: "prod-v6".into(),
                address: "2001:db8:10::7".into(),
                prefix: 64,
                gateway: Some("2001:db8:10::1".into()),
                dns_servers: vec![],
            },
        ]
    }

    pub(crate) fn doc_template() -> Template {
        Template::parse(&crate::template::tests::doc_template().to_string()).unwrap()
    }

    /// The rendering `docs/network-config.md` shows for its template.
    pub(crate) fn doc_rendering() -> Value {
        json!({
          "links": [
            {"id": "nic1", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:01", "mtu": 9000},
            {"id": "nic2", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:02", "mtu": 9000},
            {"id": "boot", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:03"},
            {"id": "bond0", "type": "bond", "bond_links": ["nic1", "nic2"], "bond_mode": "802.3ad",
             "bond_xmit_hash_policy": "layer3+4", "bond_miimon": 100,
             "ethernet_mac_address": "52:54:00:aa:00:01", "mtu": 9000},
            {"id": "bond0.100", "type": "vlan", "vlan_link": "bond0", "vlan_id": 100,
             "vlan_mac_address": "52:54:00:aa:00:01"}
          ],
          "networks": [
            {"id": "prod", "network_id": "prod", "type": "ipv4", "link": "bond0.100",
             "ip_address": "192.168.10.7", "netmask": "255.255.255.0",
             "routes": [{"network": "10.0.0.0", "netmask": "255.0.0.0", "gateway": "192.168.10.254"},
                        {"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "192.168.10.1"}]},
            {"id": "prod6", "network_id": "prod6", "type": "ipv6", "link": "bond0",
             "ip_address": "2001:db8:10::7", "netmask": "ffff:ffff:ffff:ffff::",
             "routes": [{"network": "::", "netmask": "::", "gateway": "2001:db8:10::1"}]},
            {"id": "mgmt", "network_id": "mgmt", "type": "ipv4_dhcp", "link": "boot"}
          ],
          "services": [{"type": "dns", "address": "192.0.2.53"}, {"type": "dns", "address": "192.168.10.53"}]
        })
    }

    fn rendered(template: &Template, host: &Host, addresses: &[Address]) -> Value {
        let text = render(template, host, addresses)
            .unwrap()
            .to_json()
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn doc_example_renders_exactly() {
        let got = rendered(&doc_template(), &doc_host(), &doc_addresses());
        assert_eq!(got, doc_rendering());
    }

    #[test]
    fn rendering_is_in_template_order_and_has_no_nulls() {
        let text = render(&doc_template(), &doc_host(), &doc_addresses())
            .unwrap()
            .to_json()
            .unwrap();
        assert!(!text.contains("null"), "{text}");
        assert!(text.starts_with(
            r#"{"links":[{"id":"nic1","type":"phy","ethernet_mac_address":"52:54:00:aa:00:01","mtu":9000}"#
        ), "{text}");
    }

    #[test]
    fn empty_template_renders_empty_document() {
        let got = rendered(&Template::default(), &doc_host(), &[]);
        assert_eq!(got, json!({"links": [], "networks": [], "services": []}));
    }

    #[test]
    fn missing_nic_names_what_the_host_has() {
        let mut host = doc_host();
        host.nics[0].name = Some("eno1np0".into());
        host.nics.pop();
        host.boot_mac = None;
        let e = render(&doc_template(), &host, &doc_addresses()).unwrap_err();
        assert_eq!(
            e,
            Error::NotFound(
                "links[0].nic: host node-7 has no NIC named \"eno1\"; it has eno1np0, eno2".into()
            )
        );
        let mut host = doc_host();
        host.nics[1].mac = "52:54:00:aa:00:09".into();
        let e = render(&doc_template(), &host, &doc_addresses()).unwrap_err();
        assert_eq!(
            e,
            Error::NotFound(
                "links[1].nic: host node-7 has no NIC with MAC 52:54:00:aa:00:02; it has \
                 52:54:00:aa:00:01 (eno1), 52:54:00:aa:00:09 (eno2), 52:54:00:aa:00:03 (eno3)"
                    .into()
            )
        );
    }

    #[test]
    fn boot_falls_back_to_the_first_nic() {
        let mut host = doc_host();
        host.boot_mac = None;
        // The first NIC is nic1's; that is two links on one NIC.
        let e = render(&doc_template(), &host, &doc_addresses()).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidInput(
                "links[2].nic: on host node-7 this is NIC 52:54:00:aa:00:01, which link \"nic1\" is already".into()
            )
        );
        host.nics.rotate_left(2);
        let got = rendered(&doc_template(), &host, &doc_addresses());
        assert_eq!(got["links"][2]["ethernet_mac_address"], "52:54:00:aa:00:03");
    }

    #[test]
    fn missing_or_wrong_address() {
        let mut addresses = doc_addresses();
        addresses.remove(0);
        let e = render(&doc_template(), &doc_host(), &addresses).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidInput("addresses: no address from pool \"prod-v4\"".into())
        );
        let mut addresses = doc_addresses();
        addresses[0].address = "2001:db8::9".into();
        let e = render(&doc_template(), &doc_host(), &addresses).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidInput(
                "addresses: 2001:db8::9 from pool \"prod-v4\" is IPv6; networks[0] (prod) takes IPv4".into()
            )
        );
        let mut addresses = doc_addresses();
        addresses[1].gateway = None;
        let e = render(&doc_template(), &doc_host(), &addresses).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidInput(
                "networks[1].default_route: pool \"prod-v6\" has no gateway".into()
            )
        );
    }

    #[test]
    fn macs_gateways_and_search() {
        let mut t = crate::template::tests::doc_template();
        t["links"][3]["mac"] = json!("nic2");
        t["networks"][0]["routes"][0]["gateway"] = json!("pool");
        t["dns"] = json!({"search": ["example.com"], "from_pools": true});
        t["networks"][2]["type"] = json!("ipv6_dhcp");
        let t = Template::parse(&t.to_string()).unwrap();
        let got = rendered(&t, &doc_host(), &doc_addresses());
        assert_eq!(got["links"][3]["ethernet_mac_address"], "52:54:00:aa:00:02");
        assert_eq!(got["links"][4]["vlan_mac_address"], "52:54:00:aa:00:02");
        assert_eq!(got["networks"][0]["routes"][0]["gateway"], "192.168.10.1");
        assert_eq!(got["networks"][2]["type"], "ipv6_dhcpv6-stateful");
        assert_eq!(
            got["services"],
            json!([
                {"type": "dns", "address": "192.168.10.53", "search": ["example.com"]},
                {"type": "dns", "address": "192.0.2.53"}
            ])
        );
    }
}
