//! `ipam-dhcpless`: an IPAM strategy (world `ipam`) for DHCP-less preprovisioning. It allocates
//! only for a host, for that host's boot NIC, so the address can be baked into the config drive
//! the host boots with instead of being handed out by a DHCP server.
//!
//! Address stability is the host's job, not this plugin's: the host keys allocations by owner and
//! hands the same owner the address it already holds (also when a host is inspected again), so
//! `propose` is only asked when the owner has none. How long the address is kept is the
//! configuration's `release` field (`"on-available"`, the default, or `"keep"`), which the host
//! reads; this plugin only validates it.
//!
//! Picking the address reuses `plugin-ipam-static`'s strategies, from its `ipam-strategy` library
//! crate (sequential by default, `"strategy": "random"` optional).

use ipam_strategy::config::{Strategy, parse_object, unknown_field};

mod component;
pub use component::IpamDhcpless;

/// When the host releases the address of a host that leaves the pod.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Release {
    /// Released when the host becomes available again (is reset for the next tenant).
    #[default]
    OnAvailable,
    /// Kept for the host for as long as it exists.
    Keep,
}

/// The configuration of `ipam-dhcpless`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    pub release: Release,
    pub strategy: Strategy,
}

impl Config {
    /// Parses and validates a configuration document. The error names the field.
    pub fn parse(json: &str) -> Result<Self, String> {
        let mut config = Self::default();
        for (key, value) in &parse_object(json)? {
            match key.as_str() {
                "release" => {
                    config.release = match value.as_str() {
                        Some("on-available") => Release::OnAvailable,
                        Some("keep") => Release::Keep,
                        _ => {
                            return Err(format!(
                                "release: expected \"on-available\" or \"keep\", got {value}"
                            ));
                        }
                    }
                }
                "strategy" => config.strategy = Strategy::from_value(value)?,
                other => return Err(unknown_field(other, &["release", "strategy"])),
            }
        }
        Ok(config)
    }
}

/// Checks that the host has a boot NIC: a `boot-mac` that is one of its NICs' MACs (compared
/// case-insensitively). The error names the problem.
pub fn check_boot_nic<'a>(
    host_name: &str,
    boot_mac: Option<&str>,
    nic_macs: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    let Some(boot_mac) = boot_mac.filter(|m| !m.trim().is_empty()) else {
        return Err(format!(
            "host {host_name:?} has no boot NIC (host.boot-mac is not set)"
        ));
    };
    if nic_macs
        .into_iter()
        .any(|mac| mac.trim().eq_ignore_ascii_case(boot_mac.trim()))
    {
        Ok(())
    } else {
        Err(format!(
            "host {host_name:?}: boot MAC {boot_mac} is not among its NICs (host.nics)"
        ))
    }
}

/// What the ramdisk needs to configure its boot NIC without DHCP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootNetwork<'a> {
    /// The boot NIC's MAC address.
    pub mac: &'a str,
    pub address: &'a str,
    pub prefix: u8,
    pub gateway: Option<&'a str>,
    pub dns_servers: &'a [String],
}

/// Renders the preprovisioning `network_data.json` (OpenStack format, as cloud-init, Glean and
/// Ironic's ramdisk read it): one physical link for the boot NIC, one static network on it with a
/// default route through the gateway, and the DNS servers as services. Every address is checked;
/// the error names the offending one.
pub fn preprovisioning_network_data(net: &BootNetwork<'_>) -> Result<String, String> {
    use serde_json::json;
    use std::net::IpAddr;

    let address: IpAddr = net
        .address
        .parse()
        .map_err(|_| format!("address {:?} is not an IP address", net.address))?;
    let v4 = address.is_ipv4();
    let max = if v4 { 32 } else { 128 };
    if net.prefix > max {
        return Err(format!(
            "pool.prefix {} is too long for {address} (at most {max})",
            net.prefix
        ));
    }
    let same_family = |field: &str, text: &str| -> Result<IpAddr, String> {
        let ip: IpAddr = text
            .parse()
            .map_err(|_| format!("{field} {text:?} is not an IP address"))?;
        if ip.is_ipv4() != v4 {
            return Err(format!(
                "{field} {ip} is not of the same family as the address {address}"
            ));
        }
        Ok(ip)
    };
    let mac = net.mac.trim().to_ascii_lowercase();
    let mut network = json!({
        "id": "preprovisioning",
        "network_id": "preprovisioning",
        "type": if v4 { "ipv4" } else { "ipv6" },
        "link": "boot",
        "ip_address": address.to_string(),
        "netmask": netmask(v4, net.prefix),
        "routes": [],
    });
    if let Some(gateway) = net.gateway {
        let gateway = same_family("pool.gateway", gateway)?;
        let any = if v4 { "0.0.0.0" } else { "::" };
        network["routes"] =
            json!([{ "network": any, "netmask": any, "gateway": gateway.to_string() }]);
    }
    let services = net
        .dns_servers
        .iter()
        .enumerate()
        .map(|(i, dns)| {
            // DNS servers may be of either family: a v6 resolver serves a v4 host fine.
            dns.parse::<IpAddr>()
                .map(|ip| json!({ "type": "dns", "address": ip.to_string() }))
                .map_err(|_| format!("pool.dns-servers[{i}] {dns:?} is not an IP address"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let document = json!({
        "links": [{ "id": "boot", "type": "phy", "ethernet_mac_address": mac }],
        "networks": [network],
        "services": services,
    });
    Ok(document.to_string())
}

/// The netmask of a prefix length in the notation `network_data.json` uses: dotted quad for
/// IPv4, an IPv6 address for IPv6.
fn netmask(v4: bool, prefix: u8) -> String {
    use std::net::{Ipv4Addr, Ipv6Addr};
    if v4 {
        let bits = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        Ipv4Addr::from(bits).to_string()
    } else {
        let bits = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
        Ipv6Addr::from(bits).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipam_strategy::strategy::{Allocations, sequential};
    use ipam_strategy::{Family, parse_ranges};

    #[test]
    fn config_defaults_and_values() {
        assert_eq!(Config::parse("{}").unwrap(), Config::default());
        let c = Config::parse(r#"{"release":"keep","strategy":"random"}"#).unwrap();
        assert_eq!(c.release, Release::Keep);
        assert_eq!(c.strategy, Strategy::Random);
        let c = Config::parse(r#"{"release":"on-available"}"#).unwrap();
        assert_eq!(c.release, Release::OnAvailable);
        assert_eq!(c.strategy, Strategy::Sequential);
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Config::parse(r#"{"release":"never"}"#).unwrap_err();
        assert!(e.starts_with("release:"), "{e}");
        let e = Config::parse(r#"{"strategy":"best"}"#).unwrap_err();
        assert!(e.starts_with("strategy:"), "{e}");
        let e = Config::parse(r#"{"lease":"keep"}"#).unwrap_err();
        assert!(e.starts_with("lease: unknown field"), "{e}");
        assert!(Config::parse("null").is_err());
    }

    #[test]
    fn boot_nic_must_be_one_of_the_nics() {
        let nics = ["52:54:00:00:00:01", "52:54:00:00:00:02"];
        assert!(check_boot_nic("n1", Some("52:54:00:00:00:02"), nics).is_ok());
        assert!(check_boot_nic("n1", Some("52:54:00:00:00:0A"), ["52:54:00:00:00:0a"]).is_ok());
        let e = check_boot_nic("n1", None, nics).unwrap_err();
        assert!(e.contains("has no boot NIC"), "{e}");
        let e = check_boot_nic("n1", Some(""), nics).unwrap_err();
        assert!(e.contains("has no boot NIC"), "{e}");
        let e = check_boot_nic("n1", Some("52:54:00:00:00:09"), nics).unwrap_err();
        assert!(e.contains("not among its NICs"), "{e}");
        let e = check_boot_nic("n1", Some("52:54:00:00:00:01"), []).unwrap_err();
        assert!(e.contains("not among its NICs"), "{e}");
    }

    struct Full;

    impl Allocations for Full {
        fn first_free(&mut self, start: &str, _: &str) -> Option<String> {
            (start != "10.0.0.1").then(|| start.to_string())
        }
        fn is_free(&mut self, _: &str) -> bool {
            false
        }
    }

    #[test]
    fn library_reuse_of_ipam_strategy_works() {
        let ranges = parse_ranges([("10.0.0.1", "10.0.0.1"), ("10.0.0.5", "10.0.0.9")]).unwrap();
        assert_eq!(ranges[0].family(), Family::V4);
        let got = sequential(&ranges, &mut Full).unwrap();
        assert_eq!(got, Some("10.0.0.5".parse().unwrap()));
    }

    fn doc(net: &BootNetwork<'_>) -> serde_json::Value {
        serde_json::from_str(&preprovisioning_network_data(net).unwrap()).unwrap()
    }

    #[test]
    fn network_data_for_ipv4() {
        let dns = vec!["10.0.0.53".to_string(), "2001:db8::53".to_string()];
        let d = doc(&BootNetwork {
            mac: "52:54:00:AA:00:01",
            address: "10.0.0.7",
            prefix: 24,
            gateway: Some("10.0.0.1"),
            dns_servers: &dns,
        });
        assert_eq!(d["links"][0]["ethernet_mac_address"], "52:54:00:aa:00:01");
        let n = &d["networks"][0];
        assert_eq!(n["type"], "ipv4");
        assert_eq!(n["link"], "boot");
        assert_eq!(n["ip_address"], "10.0.0.7");
        assert_eq!(n["netmask"], "255.255.255.0");
        assert_eq!(n["routes"][0]["gateway"], "10.0.0.1");
        assert_eq!(n["routes"][0]["network"], "0.0.0.0");
        assert_eq!(d["services"][1]["address"], "2001:db8::53");
    }

    #[test]
    fn network_data_for_ipv6_and_without_gateway() {
        let d = doc(&BootNetwork {
            mac: "52:54:00:aa:00:01",
            address: "2001:db8::10",
            prefix: 64,
            gateway: None,
            dns_servers: &[],
        });
        let n = &d["networks"][0];
        assert_eq!(n["type"], "ipv6");
        assert_eq!(n["netmask"], "ffff:ffff:ffff:ffff::");
        assert_eq!(n["routes"], serde_json::json!([]));
        assert_eq!(netmask(true, 0), "0.0.0.0");
        assert_eq!(netmask(true, 32), "255.255.255.255");
    }

    #[test]
    fn network_data_names_bad_input() {
        let net = |address, prefix, gateway| BootNetwork {
            mac: "52:54:00:aa:00:01",
            address,
            prefix,
            gateway,
            dns_servers: &[],
        };
        let e = preprovisioning_network_data(&net("10.0.0.7", 33, None)).unwrap_err();
        assert!(e.starts_with("pool.prefix"), "{e}");
        let e =
            preprovisioning_network_data(&net("10.0.0.7", 24, Some("2001:db8::1"))).unwrap_err();
        assert!(e.starts_with("pool.gateway"), "{e}");
        let e = preprovisioning_network_data(&net("nope", 24, None)).unwrap_err();
        assert!(e.starts_with("address"), "{e}");
    }
}
