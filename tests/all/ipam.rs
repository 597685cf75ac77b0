//! IPAM: pools and claims through the API, the static strategies through the bundled plugin,
//! the Metal3 bugs that must not exist here, concurrency, and an IPv6 /64 that is never
//! enumerated.

use std::collections::BTreeSet;

use podium_tests::{Client, TestServer};
use podium_types::views::IpPoolView;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn pool(admin: &Client, body: Value) -> IpPoolView {
    admin.created("/v1/ip_pools", body).await.view()
}

async fn claim(admin: &Client, pool_id: &str, body: Value) -> podium_tests::Reply {
    admin
        .post(&format!("/v1/ip_pools/{pool_id}/claims"), body)
        .await
}

#[tokio::test]
async fn the_minimal_pool_hands_out_the_lowest_free_address_idempotently() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let p = pool(
        &admin,
        json!({"name": "prov", "ranges": [{"start": "192.0.2.10", "end": "192.0.2.20"}],
               "prefix": 24, "gateway": "192.0.2.1", "dns_servers": ["192.0.2.53"]}),
    )
    .await;
    assert_eq!(p.plugin.name, "ipam-static");
    assert_eq!(p.subnet, "192.0.2.0/24");
    let usage = &p.usage;
    assert_eq!(
        (
            usage.total,
            usage.allocated,
            usage.pre_allocated,
            usage.free
        ),
        (11, 0, 0, 11)
    );
    let id = p.id.as_str();

    let a = claim(&admin, id, json!({"owner": "node-a"})).await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.text);
    assert_eq!(a.body["address"], "192.0.2.10");
    assert_eq!(a.body["prefix"], 24);
    assert_eq!(a.body["gateway"], "192.0.2.1");
    assert_eq!(a.body["dns_servers"], json!(["192.0.2.53"]));
    let b = claim(&admin, id, json!({"owner": "node-b"})).await;
    assert_eq!(b.body["address"], "192.0.2.11");

    // The same owner again: the same address, not a second one.
    let again = claim(&admin, id, json!({"owner": "node-a"})).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text);
    assert_eq!(again.body["address"], "192.0.2.10");
    assert_eq!(again.body["id"], a.body["id"]);

    // Released, the lowest address is handed out again.
    let gone = admin
        .delete(&format!(
            "/v1/ip_pools/{id}/claims/{}",
            a.body["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);
    let c = claim(&admin, id, json!({"owner": "node-c"})).await;
    assert_eq!(c.body["address"], "192.0.2.10");

    let view = admin.get(&format!("/v1/ip_pools/{id}")).await;
    assert_eq!(view.body["usage"]["allocated"], "2");
    assert_eq!(view.body["usage"]["free"], "9");
    let list = admin.get(&format!("/v1/ip_pools/{id}/claims")).await;
    let owners: BTreeSet<&str> = list.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["owner"].as_str().unwrap())
        .collect();
    assert_eq!(owners, BTreeSet::from(["node-b", "node-c"]));
}

#[tokio::test]
async fn wanted_addresses_and_pre_allocations() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let p = pool(
        &admin,
        json!({"name": "p", "ranges": [{"start": "10.1.0.10", "end": "10.1.0.19"}], "prefix": 24,
               "reserved": ["10.1.0.12"], "pre_allocations": {"db-1": "10.1.0.10"}}),
    )
    .await;
    let id = p.id.as_str();
    assert_eq!(p.usage.total, 9);
    assert_eq!(p.usage.pre_allocated, 1);

    // The lowest address is pre-allocated and .12 reserved: others start at .11, then .13.
    assert_eq!(
        claim(&admin, id, json!({"owner": "x"})).await.body["address"],
        "10.1.0.11"
    );
    assert_eq!(
        claim(&admin, id, json!({"owner": "y"})).await.body["address"],
        "10.1.0.13"
    );
    // The pre-allocation wins, even over a wanted address.
    let db = claim(&admin, id, json!({"owner": "db-1"})).await;
    assert_eq!(db.body["address"], "10.1.0.10", "{}", db.text);

    // A pre-allocated owner cannot ask for another address.
    let other = claim(&admin, id, json!({"owner": "db-1", "address": "10.1.0.17"})).await;
    assert_eq!(other.status, StatusCode::CONFLICT, "{}", other.text);
    assert_eq!(other.code(), "owner_pre_allocated");

    let wanted = claim(&admin, id, json!({"owner": "z", "address": "10.1.0.18"})).await;
    assert_eq!(wanted.status, StatusCode::CREATED, "{}", wanted.text);
    assert_eq!(wanted.body["address"], "10.1.0.18");
    let held = claim(&admin, id, json!({"owner": "w", "address": "10.1.0.18"})).await;
    assert_eq!(held.status, StatusCode::CONFLICT, "{}", held.text);
    assert_eq!(held.code(), "address_taken");
    assert_eq!(held.field(), "address");
    assert!(held.message().contains("held by `z`"), "{}", held.text);
    let reserved = claim(&admin, id, json!({"owner": "w", "address": "10.1.0.12"})).await;
    assert_eq!(
        reserved.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reserved.text
    );
    assert!(reserved.message().contains("reserved"));
    let outside = claim(&admin, id, json!({"owner": "w", "address": "10.1.0.40"})).await;
    assert_eq!(outside.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(outside.field(), "address");

    // A pre-allocated address is nobody else's, even when asked for by name.
    let second = pool(
        &admin,
        json!({"name": "q", "ranges": [{"start": "10.2.0.1", "end": "10.2.0.5"}], "prefix": 24,
               "pre_allocations": {"db-2": "10.2.0.3"}}),
    )
    .await;
    let sid = second.id.as_str();
    let taken = claim(
        &admin,
        sid,
        json!({"owner": "intruder", "address": "10.2.0.3"}),
    )
    .await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(
        taken.message().contains("pre-allocated to `db-2`"),
        "{}",
        taken.text
    );
}

#[tokio::test]
async fn metal3_bugs_do_not_exist_here() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let base =
        json!({"name": "dup", "ranges": [{"start": "10.0.0.1", "end": "10.0.0.9"}], "prefix": 24});
    pool(&admin, base.clone()).await;
    let dup = admin.post("/v1/ip_pools", base).await;
    assert_eq!(dup.status, StatusCode::CONFLICT);
    assert_eq!(dup.field(), "name");

    let refused = [
        (
            json!({"ranges": [{"start": "10.0.0.9", "end": "10.0.0.1"}]}),
            "ranges[0]",
        ),
        (
            json!({"ranges": [{"start": "10.0.0.1", "end": "10.0.1.9"}]}),
            "ranges[0].end",
        ),
        (
            json!({"ranges": [{"start": "10.0.0.1", "end": "10.0.0.9"}], "gateway": "10.9.0.1"}),
            "gateway",
        ),
        (
            json!({"ranges": [{"start": "10.0.0.1", "end": "10.0.0.9"}, {"start": "10.0.0.5", "end": "10.0.0.20"}]}),
            "ranges[1]",
        ),
        (
            json!({"ranges": [{"start": "10.0.0.1", "end": "10.0.0.9"}],
                   "pre_allocations": {"a": "10.0.0.2", "b": "10.0.0.2"}}),
            "pre_allocations.b",
        ),
        (
            json!({"ranges": [{"subnet": "10.0.0.0/24"}], "prefix": 33}),
            "prefix",
        ),
        (json!({"ranges": []}), "ranges"),
    ];
    for (i, (body, field)) in refused.into_iter().enumerate() {
        let mut body = body;
        body["name"] = json!(format!("bad-{i}"));
        body.as_object_mut()
            .unwrap()
            .entry("prefix")
            .or_insert(json!(24));
        let reply = admin.post("/v1/ip_pools", body.clone()).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.field(), field, "{body}: {}", reply.text);
    }

    // A claim deleted right after creation leaves no address behind.
    let p = pool(
        &admin,
        json!({"name": "leak", "ranges": [{"start": "10.3.0.1", "end": "10.3.0.2"}], "prefix": 24}),
    )
    .await;
    let id = p.id.as_str();
    for round in 0..5 {
        let c = claim(&admin, id, json!({"owner": format!("o{round}")})).await;
        assert_eq!(c.status, StatusCode::CREATED, "{}", c.text);
        let d = admin
            .delete(&format!(
                "/v1/ip_pools/{id}/claims/{}",
                c.body["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(d.status, StatusCode::NO_CONTENT);
    }
    let view = admin.get(&format!("/v1/ip_pools/{id}")).await;
    assert_eq!(view.body["usage"]["allocated"], "0");
    assert_eq!(view.body["usage"]["free"], "2");

    // Shrinking a pool below its allocations is refused; shrinking around them is not.
    let a = claim(&admin, id, json!({"owner": "a"})).await;
    let b = claim(&admin, id, json!({"owner": "b"})).await;
    assert_eq!(b.body["address"], "10.3.0.2");
    let shrink = admin
        .patch(
            &format!("/v1/ip_pools/{id}"),
            json!({"ranges": [{"start": "10.3.0.1", "end": "10.3.0.1"}]}),
        )
        .await;
    assert_eq!(shrink.status, StatusCode::CONFLICT, "{}", shrink.text);
    assert_eq!(shrink.code(), "pool_in_use");
    assert!(
        shrink.message().contains("10.3.0.2 (held by `b`)"),
        "{}",
        shrink.text
    );
    let grow = admin
        .patch(
            &format!("/v1/ip_pools/{id}"),
            json!({"ranges": [{"start": "10.3.0.1", "end": "10.3.0.3"}]}),
        )
        .await;
    assert_eq!(grow.status, StatusCode::OK, "{}", grow.text);
    assert_eq!(grow.body["usage"]["free"], "1");
    assert_eq!(
        claim(&admin, id, json!({"owner": "c"})).await.body["address"],
        "10.3.0.3"
    );

    // A pool in use cannot be deleted.
    let del = admin.delete(&format!("/v1/ip_pools/{id}")).await;
    assert_eq!(del.status, StatusCode::CONFLICT);
    let _ = a;
}

#[tokio::test]
async fn two_hundred_concurrent_claims_on_a_hundred_addresses() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let p = pool(
        &admin,
        json!({"name": "race", "ranges": [{"start": "10.9.0.1", "end": "10.9.0.100"}], "prefix": 24}),
    )
    .await;
    let id = p.id.to_string();
    let round = |tag: &'static str| {
        let admin = admin.clone();
        let id = id.clone();
        async move {
            let tasks: Vec<_> = (0..200)
                .map(|i| {
                    let admin = admin.clone();
                    let id = id.clone();
                    tokio::spawn(async move {
                        claim(&admin, &id, json!({"owner": format!("{tag}-{i}")})).await
                    })
                })
                .collect();
            let mut addresses = BTreeSet::new();
            let mut claims = Vec::new();
            let mut exhausted = 0;
            for t in tasks {
                let reply = t.await.unwrap();
                match reply.status {
                    StatusCode::CREATED => {
                        assert!(
                            addresses.insert(reply.body["address"].as_str().unwrap().to_owned())
                        );
                        claims.push(reply.body["id"].as_str().unwrap().to_owned());
                    }
                    StatusCode::CONFLICT => {
                        assert_eq!(reply.code(), "pool_exhausted", "{}", reply.text);
                        exhausted += 1;
                    }
                    other => panic!("{other}: {}", reply.text),
                }
            }
            assert_eq!(addresses.len(), 100, "exactly 100 distinct addresses");
            assert_eq!(exhausted, 100);
            claims
        }
    };
    let claims = round("first").await;
    for c in claims {
        let d = admin.delete(&format!("/v1/ip_pools/{id}/claims/{c}")).await;
        assert_eq!(d.status, StatusCode::NO_CONTENT);
    }
    // Every address is handed out again.
    round("second").await;
}

#[tokio::test]
async fn an_ipv6_slash_64_is_not_enumerated_and_random_spreads() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let p = pool(
        &admin,
        json!({"name": "v6", "ranges": [{"subnet": "2001:db8:1::/64"}], "prefix": 64,
               "gateway": "2001:db8:1::1", "dns_servers": ["2001:db8::53"]}),
    )
    .await;
    assert_eq!(
        p.usage.total,
        u128::from(u64::MAX - 1),
        "2^64 - 2 addresses"
    );
    // On the wire a count is a string of digits, which JavaScript cannot round.
    let answer = admin.get(&format!("/v1/ip_pools/{}", p.id)).await;
    assert_eq!(
        answer.body["usage"]["total"],
        json!((u64::MAX - 1).to_string()),
        "{}",
        answer.text
    );
    let id = p.id.as_str();
    let first = claim(&admin, id, json!({"owner": "a"})).await;
    assert_eq!(first.body["address"], "2001:db8:1::2", "{}", first.text);
    let wanted = claim(
        &admin,
        id,
        json!({"owner": "b", "address": "2001:db8:1:0:ffff:ffff:ffff:ffff"}),
    )
    .await;
    assert_eq!(wanted.status, StatusCode::CREATED, "{}", wanted.text);

    let random = pool(
        &admin,
        json!({"name": "v6-random", "ranges": [{"subnet": "2001:db8:2::/64"}], "prefix": 64,
               "plugin": {"name": "ipam-static", "config": {"strategy": "random"}}}),
    )
    .await;
    let rid = random.id.as_str();
    let mut seen = BTreeSet::new();
    for i in 0..20 {
        let c = claim(&admin, rid, json!({"owner": format!("r{i}")})).await;
        assert_eq!(c.status, StatusCode::CREATED, "{}", c.text);
        seen.insert(c.body["address"].as_str().unwrap().to_owned());
    }
    assert_eq!(seen.len(), 20);
    // Sequential would have given ::1 to ::14; random ones land all over the /64.
    let high = seen
        .iter()
        .filter(|a| a.parse::<std::net::Ipv6Addr>().unwrap().segments()[4] != 0)
        .count();
    assert!(high >= 15, "random picks spread over the /64: {seen:?}");

    let bad = admin
        .post(
            "/v1/ip_pools",
            json!({"name": "bad-strategy", "ranges": [{"subnet": "2001:db8:3::/64"}], "prefix": 64,
                   "plugin": {"name": "ipam-static", "config": {"strategy": "best"}}}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert_eq!(bad.field(), "plugin.config");
    assert!(bad.message().contains("strategy"), "{}", bad.text);
}

#[tokio::test]
async fn owners_are_checked_and_claims_of_unknown_pools_are_404() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let p = pool(
        &admin,
        json!({"name": "o", "ranges": [{"start": "10.4.0.1", "end": "10.4.0.9"}], "prefix": 24}),
    )
    .await;
    let id = p.id.as_str();
    let bad = claim(&admin, id, json!({"owner": "has space"})).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.field(), "owner");
    let no_host = claim(&admin, id, json!({"owner": "host:nope"})).await;
    assert_eq!(no_host.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(no_host.message().contains("no host `nope`"));
    let missing = claim(&admin, "nope", json!({"owner": "a"})).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

/// The `podium` binary of this package, for tests that need a process to kill.
const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

/// Claims from `pool` for owners `{tag}-0..count` with `clients` concurrent requests; the
/// addresses of the ones answered 201, by owner. Failures (a killed server) are left out.
fn burst(
    admin: &Client,
    pool: &str,
    tag: &str,
    count: usize,
) -> Vec<tokio::task::JoinHandle<Option<(String, String, String)>>> {
    (0..count)
        .map(|i| {
            let admin = admin.clone();
            let path = format!("/v1/ip_pools/{pool}/claims");
            let owner = format!("{tag}-{i}");
            tokio::spawn(async move {
                let reply = admin.try_post(&path, json!({"owner": owner})).await?;
                (reply.status == StatusCode::CREATED).then(|| {
                    (
                        owner,
                        reply.body["id"].as_str().unwrap().to_owned(),
                        reply.body["address"].as_str().unwrap().to_owned(),
                    )
                })
            })
        })
        .collect()
}

/// Every claim of a pool, and checks that their addresses are distinct.
async fn all_claims(admin: &Client, pool: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = admin
            .get(&format!("/v1/ip_pools/{pool}/claims?limit=1000{cursor}"))
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        items.extend(page.body["items"].as_array().unwrap().iter().cloned());
        match page.body["next"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    let addresses: BTreeSet<&str> = items
        .iter()
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    assert_eq!(addresses.len(), items.len(), "no address is held twice");
    items
}

#[tokio::test]
async fn kill_9_during_a_burst_of_claims_loses_nothing_and_leaves_no_half_claim() {
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let server = podium_tests::ProcessServer::start(BIN, data.path(), url).await;
    let admin = server.admin();
    let p = pool(
        &admin,
        json!({"name": "burst", "ranges": [{"start": "10.50.0.1", "end": "10.50.1.244"}], "prefix": 23}),
    )
    .await;
    let id = p.id.to_string();
    assert_eq!(p.usage.total, 500);

    let tasks = burst(&admin, &id, "first", 400);
    // Kill as soon as a few have been answered, while the rest are in flight (a whole burst
    // can finish within 100 ms, so this looks every millisecond).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while tasks.iter().filter(|t| t.is_finished()).count() < 10 {
        assert!(
            std::time::Instant::now() < deadline,
            "no claim answered within 60 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    server.kill9().await;
    let mut answered = Vec::new();
    for t in tasks {
        if let Some(claim) = t.await.unwrap() {
            answered.push(claim);
        }
    }
    assert!(
        !answered.is_empty() && answered.len() < 400,
        "killed mid-burst: {}",
        answered.len()
    );

    let server = podium_tests::ProcessServer::start(BIN, data.path(), url).await;
    let admin = server.admin();
    let claims = all_claims(&admin, &id).await;
    // Every answered claim survived, with its address.
    for (owner, claim_id, address) in &answered {
        let found = claims.iter().find(|c| c["id"] == claim_id.as_str());
        let found = found.unwrap_or_else(|| panic!("{owner}'s claim {claim_id} was lost"));
        assert_eq!(found["address"], address.as_str());
    }
    let usage = admin.get(&format!("/v1/ip_pools/{id}")).await.body["usage"].clone();
    assert_eq!(usage["allocated"], claims.len().to_string(), "{usage}");
    // Nothing half-claimed: the rest of the pool is exactly what is left to hand out.
    let rest = 500 - claims.len();
    let mut more = 0;
    for t in burst(&admin, &id, "second", rest + 10) {
        if t.await.unwrap().is_some() {
            more += 1;
        }
    }
    assert_eq!(
        more, rest,
        "every address not held is handed out, and no more"
    );
    assert_eq!(all_claims(&admin, &id).await.len(), 500);
    server.kill9().await;
}

#[tokio::test]
async fn two_processes_on_one_database_never_hand_out_an_address_twice() {
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let one = podium_tests::ProcessServer::start(BIN, data.path(), url).await;
    let two = podium_tests::ProcessServer::start(BIN, data.path(), url).await;
    let p = pool(
        &one.admin(),
        json!({"name": "shared", "ranges": [{"start": "10.60.0.1", "end": "10.60.0.150"}], "prefix": 24}),
    )
    .await;
    let id = p.id.to_string();
    let a = burst(&one.admin(), &id, "one", 100);
    let b = burst(&two.admin(), &id, "two", 100);
    let mut won = 0;
    for t in a.into_iter().chain(b) {
        if t.await.unwrap().is_some() {
            won += 1;
        }
    }
    assert_eq!(won, 150, "the pool's 150 addresses, each to one owner");
    let claims = all_claims(&two.admin(), &id).await;
    assert_eq!(claims.len(), 150);
    // Full for both; one releases an address, and the other (whose view says full) gets it.
    for server in [&one, &two] {
        let full = claim(&server.admin(), &id, json!({"owner": "late"})).await;
        assert_eq!(full.code(), "pool_exhausted", "{}", full.text);
    }
    let freed = &claims[17];
    let released = two
        .admin()
        .delete(&format!(
            "/v1/ip_pools/{id}/claims/{}",
            freed["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(released.status, StatusCode::NO_CONTENT);
    let late = claim(&one.admin(), &id, json!({"owner": "late"})).await;
    assert_eq!(late.status, StatusCode::CREATED, "{}", late.text);
    assert_eq!(late.body["address"], freed["address"]);
    one.kill9().await;
    two.kill9().await;
}

#[tokio::test]
async fn dhcpless_configures_the_nic_the_admin_says_the_host_boots_from() {
    use podium_tests::sushy::{Sushy, SushyConfig};
    let mut config = SushyConfig::with_systems(1);
    config.systems[0].nics.push("52:54:00:bb:00:02".into());
    let bmc = Sushy::start(config).await.unwrap();
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.create_site(&bmc.url()).await;
    let host = podium_tests::eventually(
        std::time::Duration::from_secs(20),
        "host synced",
        || async {
            let hosts = admin.get(&format!("/v1/hosts?pod_manager={pm}")).await;
            hosts.body["items"].as_array()?.first().cloned()
        },
    )
    .await;
    let host_id = host["id"].as_str().unwrap();
    assert_eq!(host["boot_mac"], Value::Null);
    let first = host["nics"][0]["mac"].as_str().unwrap().to_lowercase();

    let wrong = admin
        .patch(
            &format!("/v1/hosts/{host_id}"),
            json!({"boot_mac": "52:54:00:ff:ff:ff"}),
        )
        .await;
    assert_eq!(
        wrong.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        wrong.text
    );
    assert_eq!(wrong.field(), "boot_mac");
    assert!(
        wrong.message().contains("52:54:00:bb:00:02"),
        "names the NICs: {}",
        wrong.text
    );
    let set = admin
        .patch(
            &format!("/v1/hosts/{host_id}"),
            json!({"boot_mac": "52:54:00:BB:00:02"}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(set.body["boot_mac"], "52:54:00:bb:00:02");

    let p = pool(
        &admin,
        json!({"name": "prov", "ranges": [{"start": "10.70.0.10", "end": "10.70.0.20"}], "prefix": 24,
               "gateway": "10.70.0.1", "plugin": {"name": "ipam-dhcpless"}}),
    )
    .await;
    let id = p.id.as_str();
    let c = claim(&admin, id, json!({"owner": format!("host:{host_id}")})).await;
    assert_eq!(c.status, StatusCode::CREATED, "{}", c.text);
    assert_eq!(
        c.body["network_data"]["links"][0]["ethernet_mac_address"],
        "52:54:00:bb:00:02"
    );

    // Back to the first NIC: the networkData follows (the address stays the host's).
    let reset = admin
        .patch(&format!("/v1/hosts/{host_id}"), json!({"boot_mac": null}))
        .await;
    assert_eq!(reset.body["boot_mac"], Value::Null);
    let view = admin
        .get(&format!(
            "/v1/ip_pools/{id}/claims/{}",
            c.body["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(
        view.body["network_data"]["links"][0]["ethernet_mac_address"],
        first.as_str()
    );
    assert_eq!(view.body["address"], c.body["address"]);
}
