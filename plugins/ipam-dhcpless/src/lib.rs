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
}
