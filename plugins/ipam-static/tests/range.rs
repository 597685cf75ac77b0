//! Native tests of the range arithmetic: IPv4, IPv6 (up to the whole address space, without
//! overflow) and the validation of a request's ranges.

use plugin_ipam_static::range::{AddrRange, Family, parse_ranges};

#[test]
fn parses_v4_and_v6() {
    let r = AddrRange::parse("10.0.0.10", "10.0.0.20").unwrap();
    assert_eq!(r.family(), Family::V4);
    assert_eq!(r.span(), 10);
    assert_eq!(r.size_saturating(), 11);
    assert_eq!(r.addr_at(3).to_string(), "10.0.0.13");
    assert_eq!(r.addr_at(1000).to_string(), "10.0.0.20");

    let r = AddrRange::parse("2001:db8::", "2001:db8::ffff:ffff:ffff:ffff").unwrap();
    assert_eq!(r.family(), Family::V6);
    assert_eq!(r.size_saturating(), 1 << 64);
    assert!(r.contains("2001:db8::1234".parse().unwrap()));
    assert!(!r.contains("2001:db9::".parse().unwrap()));
    assert!(!r.contains("10.0.0.1".parse().unwrap()));
}

#[test]
fn whole_v6_space_does_not_overflow() {
    let r = AddrRange::parse("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").unwrap();
    assert_eq!(r.span(), u128::MAX);
    assert_eq!(r.size_saturating(), u128::MAX);
    assert_eq!(r.addr_at(u128::MAX), r.end());
}

#[test]
fn rejects_bad_ranges() {
    let e = AddrRange::parse("10.0.0.300", "10.0.0.1").unwrap_err();
    assert!(
        e.contains("start \"10.0.0.300\" is not an IP address"),
        "{e}"
    );
    let e = AddrRange::parse("10.0.0.1", "nope").unwrap_err();
    assert!(e.contains("end \"nope\""), "{e}");
    let e = AddrRange::parse("10.0.0.9", "10.0.0.1").unwrap_err();
    assert!(e.contains("after"), "{e}");
    let e = AddrRange::parse("10.0.0.1", "::1").unwrap_err();
    assert!(e.contains("IPv4") && e.contains("IPv6"), "{e}");
    let e = parse_ranges([("10.0.0.1", "10.0.0.2"), ("b", "c")]).unwrap_err();
    assert!(e.starts_with("pool.ranges[1]: "), "{e}");
}
