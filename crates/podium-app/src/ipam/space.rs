//! A pool's address space as plain arithmetic: addresses as `u128` (IPv4 in the low 32 bits),
//! the pool's definition checked field by field, and the free extents that the datastore keeps.
//!
//! Nothing here enumerates a range: an IPv6 /64 costs what a /30 costs.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::Error;
use podium_types::requests::IpRangeParams;

/// The address family of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    V4,
    V6,
}

impl Family {
    pub(crate) fn of(addr: IpAddr) -> Family {
        match addr {
            IpAddr::V4(_) => Family::V4,
            IpAddr::V6(_) => Family::V6,
        }
    }

    pub(crate) fn bits(self) -> u8 {
        match self {
            Family::V4 => 32,
            Family::V6 => 128,
        }
    }

    pub(crate) fn number(self) -> i64 {
        match self {
            Family::V4 => 4,
            Family::V6 => 6,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Family::V4 => "IPv4",
            Family::V6 => "IPv6",
        }
    }
}

pub(crate) fn to_u128(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

pub(crate) fn from_u128(family: Family, value: u128) -> IpAddr {
    match family {
        // Values of a V4 pool are below 2^32 by construction.
        Family::V4 => IpAddr::V4(Ipv4Addr::from(u32::try_from(value).unwrap_or(u32::MAX))),
        Family::V6 => IpAddr::V6(Ipv6Addr::from(value)),
    }
}

/// The datastore's key of an address: 16 bytes, big-endian, so that byte order is numeric order.
pub(crate) fn key(value: u128) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

/// The address value of a datastore key.
pub(crate) fn from_key(bytes: &[u8]) -> Option<u128> {
    <[u8; 16]>::try_from(bytes).ok().map(u128::from_be_bytes)
}

/// Parses an address of `family`; the error names `field`.
pub(crate) fn parse_addr(field: &str, text: &str, family: Option<Family>) -> Result<IpAddr, Error> {
    let addr: IpAddr = text
        .trim()
        .parse()
        .map_err(|_| Error::invalid(field, format!("`{text}` is not an IP address")))?;
    if let Some(family) = family
        && Family::of(addr) != family
    {
        return Err(Error::invalid(
            field,
            format!("{addr} is not an {} address like the pool's", family.name()),
        ));
    }
    Ok(addr)
}

/// A subnet: a network address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Subnet {
    pub(crate) family: Family,
    pub(crate) network: u128,
    pub(crate) prefix: u8,
}

impl Subnet {
    /// The subnet of `prefix` bits that holds `addr`.
    pub(crate) fn containing(addr: IpAddr, prefix: u8) -> Subnet {
        let family = Family::of(addr);
        let host_bits = u32::from(family.bits() - prefix);
        let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
        Subnet {
            family,
            network: to_u128(addr) & mask,
            prefix,
        }
    }

    /// The last address of the subnet.
    pub(crate) fn last(&self) -> u128 {
        let host_bits = u32::from(self.family.bits() - self.prefix);
        let size_minus_one = u128::MAX.checked_shr(128 - host_bits).unwrap_or(0);
        if host_bits == 0 {
            self.network
        } else {
            self.network | size_minus_one
        }
    }

    pub(crate) fn contains(&self, value: u128) -> bool {
        (self.network..=self.last()).contains(&value)
    }

    /// Parses `a.b.c.d/n` or `x::/n`; the error names `field`.
    pub(crate) fn parse(field: &str, text: &str) -> Result<Subnet, Error> {
        let bad = |why: String| Error::invalid(field, format!("`{text}` {why}"));
        let (addr, prefix) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| bad("is not a subnet like 10.0.0.0/24".into()))?;
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| bad("does not start with an IP address".into()))?;
        let prefix: u8 = prefix
            .parse()
            .map_err(|_| bad("has no prefix length after `/`".into()))?;
        let family = Family::of(addr);
        if prefix > family.bits() {
            return Err(bad(format!(
                "has a prefix longer than {} bits",
                family.bits()
            )));
        }
        let subnet = Subnet::containing(addr, prefix);
        if subnet.network != to_u128(addr) {
            return Err(bad(format!(
                "has host bits set (the network is {})",
                subnet.display()
            )));
        }
        Ok(subnet)
    }

    pub(crate) fn display(&self) -> String {
        format!("{}/{}", from_u128(self.family, self.network), self.prefix)
    }
}

/// A pool's address space, checked: what can be handed out and what cannot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Space {
    pub(crate) family: Family,
    pub(crate) subnet: Subnet,
    pub(crate) gateway: Option<u128>,
    /// Inclusive ranges of allocatable addresses, sorted and disjoint.
    pub(crate) ranges: Vec<(u128, u128)>,
    /// Addresses inside the ranges that are never handed out: the gateway, the reserved ones.
    pub(crate) excluded: BTreeSet<u128>,
    /// Pre-allocations: owner to address (inside the ranges, not excluded, distinct).
    pub(crate) pre_allocations: BTreeMap<String, u128>,
}

/// The definition of a pool's address space, as a request gives it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpaceParams<'a> {
    pub(crate) ranges: &'a [IpRangeParams],
    pub(crate) prefix: u8,
    pub(crate) gateway: Option<&'a str>,
    pub(crate) reserved: &'a [String],
    pub(crate) pre_allocations: &'a BTreeMap<String, String>,
}

impl Space {
    /// Checks a pool's definition; every error names the offending field.
    pub(crate) fn new(p: SpaceParams<'_>) -> Result<Space, Error> {
        if p.ranges.is_empty() {
            return Err(Error::invalid(
                "ranges",
                "a pool needs at least one range ({\"start\", \"end\"} or {\"subnet\"})",
            ));
        }
        // Each range as given, with its own field name.
        let mut ranges = Vec::with_capacity(p.ranges.len());
        let mut family = None;
        for (i, r) in p.ranges.iter().enumerate() {
            let field = format!("ranges[{i}]");
            let range = match (&r.start, &r.end, &r.subnet) {
                (Some(start), Some(end), None) => {
                    let s = parse_addr(&format!("{field}.start"), start, family)?;
                    let e = parse_addr(&format!("{field}.end"), end, Some(Family::of(s)))?;
                    if to_u128(s) > to_u128(e) {
                        return Err(Error::invalid(field, format!("start {s} is after end {e}")));
                    }
                    (Family::of(s), to_u128(s), to_u128(e), None)
                }
                (None, None, Some(subnet)) => {
                    let subnet = Subnet::parse(&format!("{field}.subnet"), subnet)?;
                    if let Some(f) = family
                        && f != subnet.family
                    {
                        return Err(Error::invalid(
                            format!("{field}.subnet"),
                            format!("is not an {} subnet like the pool's", f.name()),
                        ));
                    }
                    (subnet.family, subnet.network, subnet.last(), Some(subnet))
                }
                _ => {
                    return Err(Error::invalid(
                        field,
                        "a range is either {\"start\", \"end\"} or {\"subnet\"}",
                    ));
                }
            };
            family.get_or_insert(range.0);
            ranges.push(range);
        }
        let family = family.expect("at least one range");
        if p.prefix > family.bits() {
            return Err(Error::invalid(
                "prefix",
                format!(
                    "{} is longer than an {} address ({} bits)",
                    p.prefix,
                    family.name(),
                    family.bits()
                ),
            ));
        }
        let subnet = Subnet::containing(from_u128(family, ranges[0].1), p.prefix);

        let mut excluded = BTreeSet::new();
        let mut allocatable = Vec::with_capacity(ranges.len());
        for (i, &(_, start, end, range_subnet)) in ranges.iter().enumerate() {
            for (which, value) in [("start", start), ("end", end)] {
                if !subnet.contains(value) {
                    let field = match range_subnet {
                        Some(_) => format!("ranges[{i}].subnet"),
                        None => format!("ranges[{i}].{which}"),
                    };
                    return Err(Error::invalid(
                        field,
                        format!(
                            "{} is outside the pool's subnet {} (prefix {})",
                            from_u128(family, value),
                            subnet.display(),
                            p.prefix
                        ),
                    ));
                }
            }
            // A whole subnet gives up its network address (and its IPv4 broadcast address)
            // where it has more than two addresses.
            let (start, end) = match range_subnet {
                Some(s) if s.family.bits() - s.prefix >= 2 => match family {
                    Family::V4 => (start + 1, end - 1),
                    Family::V6 => (start + 1, end),
                },
                _ => (start, end),
            };
            allocatable.push((i, start, end));
        }
        allocatable.sort_by_key(|&(_, start, _)| start);
        for pair in allocatable.windows(2) {
            let ((i, s1, e1), (j, s2, e2)) = (pair[0], pair[1]);
            if s2 <= e1 {
                let (first, second) = (i.min(j), i.max(j));
                return Err(Error::invalid(
                    format!("ranges[{second}]"),
                    format!(
                        "overlaps ranges[{first}] ({} to {} and {} to {})",
                        from_u128(family, s1),
                        from_u128(family, e1),
                        from_u128(family, s2),
                        from_u128(family, e2)
                    ),
                ));
            }
        }
        let ranges: Vec<(u128, u128)> = allocatable.iter().map(|&(_, s, e)| (s, e)).collect();
        let in_ranges = |v: u128| ranges.iter().any(|&(s, e)| (s..=e).contains(&v));

        let gateway = match p.gateway {
            Some(text) => {
                let gw = to_u128(parse_addr("gateway", text, Some(family))?);
                if !subnet.contains(gw) {
                    return Err(Error::invalid(
                        "gateway",
                        format!(
                            "{} is outside the pool's subnet {}",
                            from_u128(family, gw),
                            subnet.display()
                        ),
                    ));
                }
                if in_ranges(gw) {
                    excluded.insert(gw);
                }
                Some(gw)
            }
            None => None,
        };
        for (i, text) in p.reserved.iter().enumerate() {
            let field = format!("reserved[{i}]");
            let v = to_u128(parse_addr(&field, text, Some(family))?);
            if !subnet.contains(v) {
                return Err(Error::invalid(
                    field,
                    format!(
                        "{} is outside the pool's subnet {}",
                        from_u128(family, v),
                        subnet.display()
                    ),
                ));
            }
            if in_ranges(v) {
                excluded.insert(v);
            }
        }

        let mut pre_allocations = BTreeMap::new();
        let mut holders: BTreeMap<u128, &str> = BTreeMap::new();
        for (owner, text) in p.pre_allocations {
            let field = format!("pre_allocations.{owner}");
            crate::labels::validate_owner_text(&field, owner)?;
            let v = to_u128(parse_addr(&field, text, Some(family))?);
            let addr = from_u128(family, v);
            if !in_ranges(v) {
                return Err(Error::invalid(
                    field,
                    format!("{addr} is not in the pool's ranges"),
                ));
            }
            if gateway == Some(v) {
                return Err(Error::invalid(field, format!("{addr} is the gateway")));
            }
            if excluded.contains(&v) {
                return Err(Error::invalid(field, format!("{addr} is reserved")));
            }
            if let Some(other) = holders.insert(v, owner) {
                return Err(Error::invalid(
                    field,
                    format!("{addr} is also pre-allocated to `{other}`"),
                ));
            }
            pre_allocations.insert(owner.clone(), v);
        }
        Ok(Space {
            family,
            subnet,
            gateway,
            ranges,
            excluded,
            pre_allocations,
        })
    }

    /// Whether `value` is in the ranges and not excluded: an address the pool can hand out.
    pub(crate) fn allocatable(&self, value: u128) -> bool {
        self.ranges.iter().any(|&(s, e)| (s..=e).contains(&value))
            && !self.excluded.contains(&value)
    }

    /// The owner `value` is pre-allocated to, if any.
    pub(crate) fn pre_allocated_to(&self, value: u128) -> Option<&str> {
        self.pre_allocations
            .iter()
            .find(|&(_, &v)| v == value)
            .map(|(owner, _)| owner.as_str())
    }

    /// How many addresses the pool can hand out, pre-allocated ones included.
    pub(crate) fn total(&self) -> u128 {
        let size: u128 = self.ranges.iter().fold(0u128, |sum, &(s, e)| {
            sum.saturating_add((e - s).saturating_add(1))
        });
        size - self.excluded.len() as u128
    }

    /// The free extents: the ranges minus the excluded, pre-allocated and `taken` addresses.
    /// `taken` need not be sorted.
    pub(crate) fn free_extents(&self, taken: impl IntoIterator<Item = u128>) -> Vec<(u128, u128)> {
        let holes: BTreeSet<u128> = self
            .excluded
            .iter()
            .copied()
            .chain(self.pre_allocations.values().copied())
            .chain(taken)
            .collect();
        let mut extents = Vec::new();
        for &(start, end) in &self.ranges {
            let mut next = Some(start);
            for &hole in holes.range(start..=end) {
                if let Some(n) = next
                    && n < hole
                {
                    extents.push((n, hole - 1));
                }
                next = hole.checked_add(1);
            }
            if let Some(n) = next
                && n <= end
            {
                extents.push((n, end));
            }
        }
        extents
    }

    /// The ranges as `(start, end)` text, for the plugin.
    pub(crate) fn ranges_text(&self) -> Vec<(String, String)> {
        self.ranges
            .iter()
            .map(|&(s, e)| {
                (
                    from_u128(self.family, s).to_string(),
                    from_u128(self.family, e).to_string(),
                )
            })
            .collect()
    }

    pub(crate) fn addr(&self, value: u128) -> IpAddr {
        from_u128(self.family, value)
    }
}

/// A pool's free addresses as disjoint, non-adjacent extents (start to end, inclusive): what the
/// `allocations` import answers from. Every question is a lookup in a B-tree; the number of
/// extents grows with fragmentation, never with the size of the ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FreeSpace {
    extents: BTreeMap<u128, u128>,
}

impl FreeSpace {
    pub(crate) fn new(extents: impl IntoIterator<Item = (u128, u128)>) -> FreeSpace {
        FreeSpace {
            extents: extents.into_iter().collect(),
        }
    }

    /// The extent holding `value`.
    fn holding(&self, value: u128) -> Option<(u128, u128)> {
        self.extents
            .range(..=value)
            .next_back()
            .filter(|&(_, &end)| end >= value)
            .map(|(&start, &end)| (start, end))
    }

    /// The lowest free address in `[start, end]`.
    pub(crate) fn first_free(&self, start: u128, end: u128) -> Option<u128> {
        if self.holding(start).is_some() {
            return (start <= end).then_some(start);
        }
        let (&next, _) = self.extents.range(start..).next()?;
        (next <= end).then_some(next)
    }

    pub(crate) fn is_free(&self, value: u128) -> bool {
        self.holding(value).is_some()
    }

    /// Marks `value` taken; `false` when it was not free.
    pub(crate) fn take(&mut self, value: u128) -> bool {
        let Some((start, end)) = self.holding(value) else {
            return false;
        };
        self.extents.remove(&start);
        if start < value {
            self.extents.insert(start, value - 1);
        }
        if value < end {
            self.extents.insert(value + 1, end);
        }
        true
    }

    /// Marks `value` free again, merging it with its neighbours.
    pub(crate) fn give(&mut self, value: u128) {
        if self.is_free(value) {
            return;
        }
        let mut start = value;
        let mut end = value;
        if let Some(left) = value.checked_sub(1)
            && let Some((s, _)) = self.holding(left)
        {
            self.extents.remove(&s);
            start = s;
        }
        if let Some(right) = value.checked_add(1)
            && let Some(e) = self.extents.remove(&right)
        {
            end = e;
        }
        self.extents.insert(start, end);
    }

    #[cfg(test)]
    pub(crate) fn extents(&self) -> usize {
        self.extents.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: &str, end: &str) -> IpRangeParams {
        IpRangeParams {
            start: Some(start.into()),
            end: Some(end.into()),
            subnet: None,
        }
    }

    fn subnet(s: &str) -> IpRangeParams {
        IpRangeParams {
            start: None,
            end: None,
            subnet: Some(s.into()),
        }
    }

    fn space(ranges: &[IpRangeParams], prefix: u8, gateway: Option<&str>) -> Result<Space, Error> {
        Space::new(SpaceParams {
            ranges,
            prefix,
            gateway,
            reserved: &[],
            pre_allocations: &BTreeMap::new(),
        })
    }

    fn field(e: Error) -> String {
        match e {
            Error::Invalid { field, message } => format!("{}: {message}", field.unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ranges_are_checked_field_by_field() {
        let e = space(&[range("10.0.0.9", "10.0.0.1")], 24, None).unwrap_err();
        assert_eq!(field(e), "ranges[0]: start 10.0.0.9 is after end 10.0.0.1");
        let e = space(&[range("10.0.0.1", "10.0.1.5")], 24, None).unwrap_err();
        assert!(
            field(e)
                .starts_with("ranges[0].end: 10.0.1.5 is outside the pool's subnet 10.0.0.0/24")
        );
        let e = space(&[range("10.0.0.1", "10.0.0.9")], 24, Some("10.0.1.1")).unwrap_err();
        assert!(field(e).starts_with("gateway: 10.0.1.1 is outside"));
        let e = space(
            &[
                range("10.0.0.1", "10.0.0.9"),
                range("10.0.0.5", "10.0.0.20"),
            ],
            24,
            None,
        )
        .unwrap_err();
        assert!(field(e).starts_with("ranges[1]: overlaps ranges[0]"));
        let e = space(&[range("10.0.0.1", "2001:db8::1")], 24, None).unwrap_err();
        assert!(field(e).starts_with("ranges[0].end: 2001:db8::1 is not an IPv4"));
        let e = space(&[range("10.0.0.1", "10.0.0.2")], 33, None).unwrap_err();
        assert!(field(e).starts_with("prefix: 33 is longer"));
        let e = space(&[subnet("10.0.0.1/24")], 24, None).unwrap_err();
        assert!(field(e).starts_with("ranges[0].subnet: `10.0.0.1/24` has host bits set"));
        let e = space(&[], 24, None).unwrap_err();
        assert!(field(e).starts_with("ranges:"));
    }

    #[test]
    fn a_whole_subnet_gives_up_network_and_broadcast() {
        let s = space(&[subnet("10.0.0.0/24")], 24, Some("10.0.0.1")).unwrap();
        assert_eq!(
            s.ranges,
            vec![(
                to_u128("10.0.0.1".parse().unwrap()),
                to_u128("10.0.0.254".parse().unwrap())
            )]
        );
        assert_eq!(s.total(), 253);
        let extents = s.free_extents([]);
        assert_eq!(extents, vec![(s.ranges[0].0 + 1, s.ranges[0].1)]);
    }

    #[test]
    fn an_ipv6_slash_64_is_arithmetic_not_enumeration() {
        let s = space(&[subnet("2001:db8::/64")], 64, Some("2001:db8::1")).unwrap();
        assert_eq!(s.total(), (1u128 << 64) - 2);
        let base = to_u128("2001:db8::".parse().unwrap());
        let extents = s.free_extents([base + 5]);
        assert_eq!(
            extents,
            vec![(base + 2, base + 4), (base + 6, base + (1u128 << 64) - 1)]
        );
    }

    #[test]
    fn pre_allocations_are_checked() {
        let ranges = [range("10.0.0.10", "10.0.0.20")];
        let pre = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(o, a)| (o.to_string(), a.to_string()))
                .collect()
        };
        let make = |pre: &BTreeMap<String, String>| {
            Space::new(SpaceParams {
                ranges: &ranges,
                prefix: 24,
                gateway: Some("10.0.0.10"),
                reserved: &["10.0.0.11".into()],
                pre_allocations: pre,
            })
        };
        let e = make(&pre(&[("a", "10.0.0.12"), ("b", "10.0.0.12")])).unwrap_err();
        assert_eq!(
            field(e),
            "pre_allocations.b: 10.0.0.12 is also pre-allocated to `a`"
        );
        let e = make(&pre(&[("a", "10.0.0.10")])).unwrap_err();
        assert_eq!(field(e), "pre_allocations.a: 10.0.0.10 is the gateway");
        let e = make(&pre(&[("a", "10.0.0.11")])).unwrap_err();
        assert_eq!(field(e), "pre_allocations.a: 10.0.0.11 is reserved");
        let e = make(&pre(&[("a", "10.0.0.30")])).unwrap_err();
        assert_eq!(
            field(e),
            "pre_allocations.a: 10.0.0.30 is not in the pool's ranges"
        );
        let s = make(&pre(&[("a", "10.0.0.15")])).unwrap();
        assert_eq!(s.total(), 9);
        let v = |a: &str| to_u128(a.parse().unwrap());
        assert_eq!(
            s.free_extents([v("10.0.0.20")]),
            vec![
                (v("10.0.0.12"), v("10.0.0.14")),
                (v("10.0.0.16"), v("10.0.0.19"))
            ]
        );
        assert_eq!(s.pre_allocated_to(v("10.0.0.15")), Some("a"));
    }

    #[test]
    fn free_space_takes_gives_and_merges() {
        let mut f = FreeSpace::new([(10, 20), (30, 30)]);
        assert_eq!(f.first_free(0, 100), Some(10));
        assert_eq!(f.first_free(15, 100), Some(15));
        assert_eq!(f.first_free(21, 29), None);
        assert_eq!(f.first_free(21, 30), Some(30));
        assert!(f.take(10) && f.take(15) && !f.take(15) && !f.take(25));
        assert_eq!(f, FreeSpace::new([(11, 14), (16, 20), (30, 30)]));
        f.give(15);
        f.give(10);
        assert_eq!(f, FreeSpace::new([(10, 20), (30, 30)]));
        assert!(f.take(30));
        assert_eq!(f.first_free(21, u128::MAX), None);
        f.give(u128::MAX);
        assert_eq!(f.first_free(21, u128::MAX), Some(u128::MAX));
        assert_eq!(f.extents(), 2);
    }
}
