//! Address text as `network_data.json` spells it: MAC addresses, IP addresses, netmasks and CIDRs.
//!
//! IP addresses are parsed with `std::net`; CIDRs and netmasks are the small arithmetic on top.
//! The functions here return the bare reason of a failure; callers put the field's path in front.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IP address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    /// The family of an address.
    pub fn of(ip: IpAddr) -> Self {
        if ip.is_ipv4() { Self::V4 } else { Self::V6 }
    }

    /// The longest prefix of the family (32 or 128).
    pub fn max_prefix(self) -> u8 {
        match self {
            Self::V4 => 32,
            Self::V6 => 128,
        }
    }

    /// The address of the family's default route, `0.0.0.0` or `::`.
    pub fn unspecified(self) -> IpAddr {
        match self {
            Self::V4 => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            Self::V6 => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::V4 => "IPv4",
            Self::V6 => "IPv6",
        })
    }
}

/// Parses a MAC address: six pairs of hex digits separated by `:` or `-`, in any case. Returns it
/// lower-case and colon-separated, the form cloud-init matches against the host's interfaces.
pub fn parse_mac(text: &str) -> Result<String, String> {
    let bad =
        || format!("{text:?} is not a MAC address (expected six hex pairs like 52:54:00:aa:00:01)");
    let separator = if text.contains('-') { '-' } else { ':' };
    let octets: Vec<&str> = text.split(separator).collect();
    if octets.len() != 6
        || octets
            .iter()
            .any(|o| o.len() != 2 || !o.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err(bad());
    }
    Ok(octets.join(":").to_ascii_lowercase())
}

/// Parses an IP address (IPv4 or IPv6, no prefix).
pub fn parse_ip(text: &str) -> Result<IpAddr, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not an IP address"))
}

/// Parses an IP address of the given family.
pub fn parse_ip_of(text: &str, family: Family) -> Result<IpAddr, String> {
    let ip = parse_ip(text)?;
    if Family::of(ip) != family {
        return Err(format!(
            "{ip} is {}, expected an {family} address",
            Family::of(ip)
        ));
    }
    Ok(ip)
}

/// Parses a prefix length (`24` of `10.0.0.0/24`) for a family.
pub fn parse_prefix(text: &str, family: Family) -> Result<u8, String> {
    let max = family.max_prefix();
    match text.parse::<u8>() {
        Ok(prefix) if prefix <= max && !text.starts_with('+') => Ok(prefix),
        _ => Err(format!("prefix {text:?} is not a number from 0 to {max}")),
    }
}

/// Parses `ADDRESS/PREFIX` (a route's destination): the address must have no bits set past the
/// prefix, since the kernel refuses such a route.
pub fn parse_cidr(text: &str) -> Result<(IpAddr, u8), String> {
    let Some((address, prefix)) = text.split_once('/') else {
        return Err(format!(
            "{text:?} is not a CIDR (expected ADDRESS/PREFIX, like 10.0.0.0/8)"
        ));
    };
    let ip = parse_ip(address)?;
    let prefix = parse_prefix(prefix, Family::of(ip))?;
    if network_of(ip, prefix) != ip {
        return Err(format!(
            "{text} has host bits set (the network is {}/{prefix})",
            network_of(ip, prefix)
        ));
    }
    Ok((ip, prefix))
}

/// The netmask of a prefix length as `network_data.json` spells it: a dotted quad for IPv4, an
/// IPv6 address for IPv6 (`ffff:ffff:ffff:ffff::`, which cloud-init turns back into `/64`).
pub fn netmask(family: Family, prefix: u8) -> IpAddr {
    match family {
        Family::V4 => {
            let bits = u32::MAX
                .checked_shl(32 - u32::from(prefix.min(32)))
                .unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(bits))
        }
        Family::V6 => {
            let bits = u128::MAX
                .checked_shl(128 - u32::from(prefix.min(128)))
                .unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

/// The prefix length of a netmask, if the mask is contiguous (ones, then zeros).
pub fn mask_prefix(mask: IpAddr) -> Option<u8> {
    let (bits, width) = match mask {
        IpAddr::V4(m) => (u128::from(u32::from(m)) << 96, 32),
        IpAddr::V6(m) => (u128::from(m), 128),
    };
    let ones = bits.leading_ones();
    // Contiguous when nothing is set after the leading ones.
    let rest = bits.checked_shl(ones).unwrap_or(0);
    (rest == 0 && ones <= width).then(|| u8::try_from(ones).unwrap_or(u8::MAX))
}

/// Parses a netmask of a family: a valid, contiguous mask. Returns its prefix length.
pub fn parse_netmask(text: &str, family: Family) -> Result<u8, String> {
    let mask = parse_ip(text).map_err(|_| format!("{text:?} is not a netmask"))?;
    if Family::of(mask) != family {
        return Err(format!(
            "{mask} is an {} netmask, expected {family}",
            Family::of(mask)
        ));
    }
    mask_prefix(mask).ok_or_else(|| format!("{mask} is not a contiguous netmask"))
}

/// The network address of `ip/prefix`.
pub fn network_of(ip: IpAddr, prefix: u8) -> IpAddr {
    match (ip, netmask(Family::of(ip), prefix)) {
        (IpAddr::V4(a), IpAddr::V4(m)) => IpAddr::V4(Ipv4Addr::from(u32::from(a) & u32::from(m))),
        (IpAddr::V6(a), IpAddr::V6(m)) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & u128::from(m))),
        _ => ip,
    }
}

/// Checks a DNS domain name (a search domain): dot-separated labels of letters, digits and
/// hyphens, 1 to 63 characters each, not starting or ending with a hyphen, 253 characters in all.
/// One trailing dot is allowed.
pub fn check_domain(text: &str) -> Result<(), String> {
    let name = text.strip_suffix('.').unwrap_or(text);
    let label_ok = |label: &str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!("{text:?} is not a domain name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn macs_are_normalized() {
        assert_eq!(parse_mac("52:54:00:AA:00:0b").unwrap(), "52:54:00:aa:00:0b");
        assert_eq!(parse_mac("52-54-00-AA-00-0B").unwrap(), "52:54:00:aa:00:0b");
        for bad in [
            "",
            "52:54:00:aa:00",
            "52:54:00:aa:00:0g",
            "52:54:00:aa:00:001",
            "525400aa000b",
            "52:54-00:aa:00:01",
        ] {
            assert!(parse_mac(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn netmasks_both_ways() {
        assert_eq!(netmask(Family::V4, 24).to_string(), "255.255.255.0");
        assert_eq!(netmask(Family::V4, 0).to_string(), "0.0.0.0");
        assert_eq!(netmask(Family::V4, 32).to_string(), "255.255.255.255");
        assert_eq!(netmask(Family::V6, 64).to_string(), "ffff:ffff:ffff:ffff::");
        assert_eq!(netmask(Family::V6, 0).to_string(), "::");
        assert_eq!(parse_netmask("255.255.255.0", Family::V4), Ok(24));
        assert_eq!(parse_netmask("0.0.0.0", Family::V4), Ok(0));
        assert_eq!(parse_netmask("255.255.255.255", Family::V4), Ok(32));
        assert_eq!(parse_netmask("ffff:ffff:ffff:ff80::", Family::V6), Ok(57));
        assert!(
            parse_netmask("255.0.255.0", Family::V4)
                .unwrap_err()
                .contains("contiguous")
        );
        assert!(
            parse_netmask("ffff::", Family::V4)
                .unwrap_err()
                .contains("IPv6 netmask")
        );
        assert!(parse_netmask("24", Family::V4).is_err());
    }

    #[test]
    fn cidrs() {
        assert_eq!(parse_cidr("10.0.0.0/8"), Ok((ip("10.0.0.0"), 8)));
        assert_eq!(parse_cidr("2001:db8::/32"), Ok((ip("2001:db8::"), 32)));
        assert_eq!(parse_cidr("0.0.0.0/0"), Ok((ip("0.0.0.0"), 0)));
        assert!(parse_cidr("10.0.0.1/8").unwrap_err().contains("host bits"));
        assert!(parse_cidr("10.0.0.0/33").unwrap_err().contains("0 to 32"));
        assert!(parse_cidr("10.0.0.0").is_err());
        assert!(parse_cidr("10.0.0.0/+8").is_err());
    }

    #[test]
    fn domains() {
        assert!(check_domain("example.com").is_ok());
        assert!(check_domain("example.com.").is_ok());
        assert!(check_domain("-x.com").is_err());
        assert!(check_domain("a..b").is_err());
        assert!(check_domain("").is_err());
    }
}
