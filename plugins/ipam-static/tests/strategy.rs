//! Native tests of the strategies against a fake host `allocations` import: sequential, random
//! (spread, weighting, fallback), an IPv6 /64, exhaustion and bad host answers.

use std::collections::BTreeSet;
use std::net::IpAddr;

use plugin_ipam_static::Strategy;
use plugin_ipam_static::range::{AddrRange, parse_ranges};
use plugin_ipam_static::strategy::{
    Allocations, ProposeError, RANDOM_ATTEMPTS, SplitMix64, propose, random, sequential,
    uniform_below,
};

/// A pool whose allocated addresses are listed; answers like the host would.
#[derive(Default)]
struct FakePool {
    allocated: BTreeSet<IpAddr>,
    /// Ranges of the pool, for `is-free`.
    ranges: Vec<AddrRange>,
    first_free_calls: Vec<(String, String)>,
    is_free_calls: Vec<String>,
}

impl FakePool {
    fn new(ranges: &[(&str, &str)], allocated: &[&str]) -> Self {
        Self {
            allocated: allocated.iter().map(|a| a.parse().unwrap()).collect(),
            ranges: parse_ranges(ranges.iter().copied()).unwrap(),
            ..Self::default()
        }
    }
}

impl Allocations for FakePool {
    fn first_free(&mut self, start: &str, end: &str) -> Option<String> {
        self.first_free_calls.push((start.into(), end.into()));
        let range = AddrRange::parse(start, end).unwrap();
        // Small test ranges only: enumerate at most a few thousand addresses.
        (0..=range.span().min(4096))
            .map(|i| range.addr_at(i))
            .find(|a| !self.allocated.contains(a))
            .map(|a| a.to_string())
    }

    fn is_free(&mut self, address: &str) -> bool {
        self.is_free_calls.push(address.into());
        let addr: IpAddr = address.parse().unwrap();
        self.ranges.iter().any(|r| r.contains(addr)) && !self.allocated.contains(&addr)
    }
}

fn ranges(list: &[(&str, &str)]) -> Vec<AddrRange> {
    parse_ranges(list.iter().copied()).unwrap()
}

#[test]
fn sequential_takes_the_lowest_free_of_the_first_range_with_one() {
    let list = [("10.0.0.1", "10.0.0.2"), ("10.0.1.1", "10.0.1.9")];
    let mut pool = FakePool::new(&list, &["10.0.0.1"]);
    let got = sequential(&ranges(&list), &mut pool).unwrap();
    assert_eq!(got, Some("10.0.0.2".parse().unwrap()));

    let mut pool = FakePool::new(&list, &["10.0.0.1", "10.0.0.2", "10.0.1.1"]);
    let got = sequential(&ranges(&list), &mut pool).unwrap();
    assert_eq!(got, Some("10.0.1.2".parse().unwrap()));
    assert_eq!(
        pool.first_free_calls,
        vec![
            ("10.0.0.1".into(), "10.0.0.2".into()),
            ("10.0.1.1".into(), "10.0.1.9".into())
        ]
    );
}

#[test]
fn exhausted_pool_gives_none() {
    let list = [("10.0.0.1", "10.0.0.2"), ("fd00::1", "fd00::1")];
    let allocated = ["10.0.0.1", "10.0.0.2", "fd00::1"];
    let mut pool = FakePool::new(&list, &allocated);
    assert_eq!(sequential(&ranges(&list), &mut pool).unwrap(), None);
    let mut rng = SplitMix64::new(7);
    assert_eq!(random(&ranges(&list), &mut pool, &mut rng).unwrap(), None);
    assert_eq!(pool.is_free_calls.len(), RANDOM_ATTEMPTS);
    assert_eq!(sequential(&[], &mut pool).unwrap(), None);
    assert_eq!(random(&[], &mut pool, &mut rng).unwrap(), None);
}

#[test]
fn random_picks_free_addresses_across_ranges() {
    let list = [("10.0.0.0", "10.0.0.99"), ("10.0.1.0", "10.0.1.99")];
    let rs = ranges(&list);
    let mut pool = FakePool::new(&list, &[]);
    let mut rng = SplitMix64::new(42);
    let mut seen = BTreeSet::new();
    for _ in 0..400 {
        let addr = random(&rs, &mut pool, &mut rng).unwrap().unwrap();
        assert!(rs.iter().any(|r| r.contains(addr)), "{addr}");
        seen.insert(addr);
    }
    // Both ranges are hit and the picks are spread, not sequential.
    assert!(seen.iter().any(|a| rs[0].contains(*a)));
    assert!(seen.iter().any(|a| rs[1].contains(*a)));
    assert!(seen.len() > 100, "only {} distinct picks", seen.len());
    assert!(pool.first_free_calls.is_empty());
}

#[test]
fn random_weights_ranges_by_size() {
    // 1 address against 1000: the small range should almost never be picked.
    let list = [("10.0.0.1", "10.0.0.1"), ("10.1.0.0", "10.1.3.231")];
    let rs = ranges(&list);
    let mut pool = FakePool::new(&list, &[]);
    let mut rng = SplitMix64::new(1);
    let small = (0..2000)
        .filter(|_| rs[0].contains(random(&rs, &mut pool, &mut rng).unwrap().unwrap()))
        .count();
    assert!(small < 20, "small range picked {small} times out of 2000");
}

#[test]
fn random_falls_back_to_first_free_when_nearly_full() {
    // 200 addresses, one free: random picks miss, the scan finds it.
    let list = [("10.0.0.0", "10.0.0.99"), ("10.0.1.0", "10.0.1.99")];
    let allocated: Vec<String> = ranges(&list)
        .iter()
        .flat_map(|r| (0..=r.span()).map(|i| r.addr_at(i).to_string()))
        .filter(|a| a != "10.0.1.57")
        .collect();
    let allocated: Vec<&str> = allocated.iter().map(String::as_str).collect();
    for seed in 0..20 {
        let mut pool = FakePool::new(&list, &allocated);
        let mut rng = SplitMix64::new(seed);
        let got = random(&ranges(&list), &mut pool, &mut rng).unwrap();
        assert_eq!(got, Some("10.0.1.57".parse().unwrap()), "seed {seed}");
    }
}

#[test]
fn random_fallback_order_is_pick_to_end_then_range_then_others() {
    let list = [("10.0.0.0", "10.0.0.9"), ("10.0.1.0", "10.0.1.9")];
    let mut all: Vec<String> = Vec::new();
    for r in ranges(&list) {
        all.extend((0..=r.span()).map(|i| r.addr_at(i).to_string()));
    }
    let allocated: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut pool = FakePool::new(&list, &allocated);
    let mut rng = SplitMix64::new(3);
    assert_eq!(random(&ranges(&list), &mut pool, &mut rng).unwrap(), None);
    let calls = &pool.first_free_calls;
    assert_eq!(calls.len(), 3, "{calls:?}");
    let last_pick: IpAddr = pool.is_free_calls.last().unwrap().parse().unwrap();
    assert_eq!(calls[0].0, last_pick.to_string());
    let index = usize::from(!ranges(&list)[0].contains(last_pick));
    let picked = ranges(&list)[index];
    let other = ranges(&list)[1 - index];
    assert_eq!(calls[0].1, picked.end().to_string());
    assert_eq!(
        calls[1],
        (picked.start().to_string(), picked.end().to_string())
    );
    assert_eq!(
        calls[2],
        (other.start().to_string(), other.end().to_string())
    );
}

#[test]
fn ipv6_slash_64_without_enumeration() {
    let list = [("2001:db8:0:1::", "2001:db8:0:1:ffff:ffff:ffff:ffff")];
    let rs = ranges(&list);
    let mut pool = FakePool::new(&list, &["2001:db8:0:1::"]);
    assert_eq!(
        sequential(&rs, &mut pool).unwrap(),
        Some("2001:db8:0:1::1".parse().unwrap())
    );
    let mut rng = SplitMix64::new(99);
    let mut seen = BTreeSet::new();
    for _ in 0..100 {
        let addr = random(&rs, &mut pool, &mut rng).unwrap().unwrap();
        assert!(rs[0].contains(addr));
        seen.insert(addr);
    }
    // 100 draws from 2^64 addresses: all distinct, and spread into the upper half too.
    assert_eq!(seen.len(), 100);
    let upper: IpAddr = "2001:db8:0:1:8000::".parse().unwrap();
    assert!(seen.iter().any(|a| *a >= upper));
    assert!(pool.first_free_calls.len() == 1);
}

#[test]
fn whole_ipv6_space_is_fine() {
    let list = [("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")];
    let mut pool = FakePool::new(&list, &[]);
    let mut rng = SplitMix64::new(5);
    assert!(
        random(&ranges(&list), &mut pool, &mut rng)
            .unwrap()
            .is_some()
    );
}

#[test]
fn uniform_below_stays_in_bounds() {
    let mut rng = SplitMix64::new(11);
    for n in [1u128, 2, 3, 7, 1000, 1 << 64, u128::MAX] {
        for _ in 0..100 {
            assert!(uniform_below(&mut rng, n) < n);
        }
    }
}

/// A host that answers nonsense.
struct LyingHost(&'static str);

impl Allocations for LyingHost {
    fn first_free(&mut self, _: &str, _: &str) -> Option<String> {
        Some(self.0.into())
    }
    fn is_free(&mut self, _: &str) -> bool {
        false
    }
}

#[test]
fn host_answers_are_checked() {
    let rs = ranges(&[("10.0.0.1", "10.0.0.9")]);
    let e = sequential(&rs, &mut LyingHost("banana")).unwrap_err();
    assert!(matches!(e, ProposeError::Internal(m) if m.contains("not an IP address")));
    let e = sequential(&rs, &mut LyingHost("10.0.0.10")).unwrap_err();
    assert!(matches!(e, ProposeError::Internal(m) if m.contains("outside")));
}

#[test]
fn propose_dispatches_and_seeds_from_the_os() {
    let list = [("10.0.0.1", "10.0.0.5")];
    let mut pool = FakePool::new(&list, &[]);
    let got = propose(Strategy::Sequential, &ranges(&list), &mut pool).unwrap();
    assert_eq!(got, Some("10.0.0.1".parse().unwrap()));
    let got = propose(Strategy::Random, &ranges(&list), &mut pool).unwrap();
    assert!(ranges(&list)[0].contains(got.unwrap()));
}
