//! IP address ranges as 128-bit integers, so that one piece of arithmetic serves IPv4 and IPv6
//! and an IPv6 /64 (or larger) never has to be enumerated.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The address family of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    /// The family of `addr`.
    pub fn of(addr: IpAddr) -> Self {
        match addr {
            IpAddr::V4(_) => Self::V4,
            IpAddr::V6(_) => Self::V6,
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

/// An inclusive range `[start, end]` of addresses of one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrRange {
    family: Family,
    start: u128,
    end: u128,
}

impl AddrRange {
    /// A range from two parsed addresses: same family, `start <= end`.
    pub fn new(start: IpAddr, end: IpAddr) -> Result<Self, String> {
        let family = Family::of(start);
        if Family::of(end) != family {
            return Err(format!(
                "start {start} is {family} but end {end} is {}",
                Family::of(end)
            ));
        }
        let (s, e) = (to_u128(start), to_u128(end));
        if s > e {
            return Err(format!("start {start} is after end {end}"));
        }
        Ok(Self {
            family,
            start: s,
            end: e,
        })
    }

    /// A range from the textual start and end of a WIT `ip-range`.
    pub fn parse(start: &str, end: &str) -> Result<Self, String> {
        let s = start
            .parse::<IpAddr>()
            .map_err(|_| format!("start {start:?} is not an IP address"))?;
        let e = end
            .parse::<IpAddr>()
            .map_err(|_| format!("end {end:?} is not an IP address"))?;
        Self::new(s, e)
    }

    pub fn family(&self) -> Family {
        self.family
    }

    pub fn start(&self) -> IpAddr {
        from_u128(self.family, self.start)
    }

    pub fn end(&self) -> IpAddr {
        from_u128(self.family, self.end)
    }

    /// `end - start`: the number of addresses minus one, which fits in a `u128` even for `::/0`.
    pub fn span(&self) -> u128 {
        self.end - self.start
    }

    /// The number of addresses, saturated at `u128::MAX` (only `::/0` holds one more).
    pub fn size_saturating(&self) -> u128 {
        self.span().saturating_add(1)
    }

    /// The address `offset` places after `start`, clamped to `end`.
    pub fn addr_at(&self, offset: u128) -> IpAddr {
        from_u128(self.family, self.start + offset.min(self.span()))
    }

    /// Whether `addr` lies in the range.
    pub fn contains(&self, addr: IpAddr) -> bool {
        Family::of(addr) == self.family && (self.start..=self.end).contains(&to_u128(addr))
    }
}

impl fmt::Display for AddrRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.start(), self.end())
    }
}

/// Parses a pool's ranges, naming the offending one (`ranges[1]: ...`) on failure.
pub fn parse_ranges<'a, I>(ranges: I) -> Result<Vec<AddrRange>, String>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    ranges
        .into_iter()
        .enumerate()
        .map(|(i, (start, end))| {
            AddrRange::parse(start, end).map_err(|e| format!("pool.ranges[{i}]: {e}"))
        })
        .collect()
}

fn to_u128(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

fn from_u128(family: Family, value: u128) -> IpAddr {
    match family {
        // A V4 range only ever holds values below 2^32.
        Family::V4 => IpAddr::V4(Ipv4Addr::from(u32::try_from(value).unwrap_or(u32::MAX))),
        Family::V6 => IpAddr::V6(Ipv6Addr::from(value)),
    }
}
