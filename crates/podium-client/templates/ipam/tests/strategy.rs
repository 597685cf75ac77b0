//! The strategy's calls run natively, as the host makes them, against an in-memory pool.

use podium_plugin::ipam::{AllocationRequest, IpRange, Pool};
use podium_plugin::testing::{Host, MemoryPool};

use {{crate_name}}::Strategy;

#[test]
fn proposes_the_lowest_free_address() {
    let host = Host::new().allocations(MemoryPool::with_taken(["10.0.0.10"]));
    let request = AllocationRequest {
        pool: Pool {
            id: "p1".into(),
            name: "provisioning".into(),
            ranges: vec![IpRange { start: "10.0.0.10".into(), end: "10.0.0.20".into() }],
            prefix: 24,
            gateway: None,
            dns_servers: vec![],
        },
        owner: "host-1".into(),
        host: None,
    };
    let proposed = host.ipam::<Strategy>().propose(request).unwrap();
    assert_eq!(proposed.as_deref(), Some("10.0.0.11"));
}
