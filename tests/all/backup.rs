//! Backups: `podium backup FILE` copies the SQLite database of a running server while writes go
//! on, and the copy, restored into a fresh data directory beside the same secret key, holds
//! every pod manager, host, claim, pool and token; the sealed BMC credentials still open. On
//! PostgreSQL the API answers that `pg_dump` is the tool.

use std::collections::BTreeSet;
use std::time::Duration;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, BMC_PASSWORD, Client, ProcessServer, eventually};
use podium_types::views::{ClaimView, IpClaimView, OperationView};
use podium_types::{ClaimState, HostKind, OperationStatus};
use reqwest::StatusCode;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

/// Runs `podium backup FILE` against `url` with `token`.
async fn backup(url: &str, token: &str, file: &std::path::Path) -> std::process::Output {
    tokio::process::Command::new(BIN)
        .arg("backup")
        .arg(file)
        .env("PODIUM_URL", url)
        .env("PODIUM_TOKEN", token)
        .env("PODIUM_CONFIG", file.with_extension("no-login.json"))
        .output()
        .await
        .unwrap()
}

/// The ids of every item of a list.
async fn ids(client: &Client, path: &str, key: &str) -> BTreeSet<String> {
    let page = client.get(&format!("{path}?limit=1000")).await;
    assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.text);
    page.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[key].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_backup_taken_while_serving_restores_into_a_fresh_data_directory() {
    let mut config = SushyConfig::with_systems(2);
    config.basic_auth = Some(("admin".into(), BMC_PASSWORD.into()));
    let bmc = Sushy::start(config).await.unwrap();
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let data = tempfile::tempdir().unwrap();
    let server = ProcessServer::start(BIN, data.path(), None).await;
    let admin = server.admin();

    // A site with its hosts, a pool with a claimed address, a tenant with a bound claim.
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(),
                   "auth": {"username": "admin", "password": BMC_PASSWORD}}),
        )
        .await
        .body["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    admin.systems_in_state(&pm, 2, "available").await;
    let pool = admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"start": "198.51.100.10", "end": "198.51.100.20"}],
                   "prefix": 24, "gateway": "198.51.100.1"}),
        )
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let address = admin
        .created(
            &format!("/v1/ip_pools/{pool}/claims"),
            json!({"owner": "node-a"}),
        )
        .await
        .view::<IpClaimView>();
    let (_, token) = admin.granted_tenant("alice", &pm).await;
    let alice = server.client(Some(&token));
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}}),
        )
        .await
        .view::<ClaimView>();
    assert_eq!(claim.state, ClaimState::Bound, "{claim:?}");
    let before: Vec<BTreeSet<String>> = vec![
        ids(&admin, "/v1/pod_managers", "uuid").await,
        ids(&admin, "/v1/hosts", "id").await,
        ids(&admin, "/v1/claims", "id").await,
        ids(&admin, "/v1/ip_pools", "id").await,
        ids(&admin, &format!("/v1/ip_pools/{pool}/claims"), "address").await,
    ];

    // A tenant takes no backup; an admin does, a read-only token will do.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("podium-backup.db");
    let refused = backup(&server.url, &token, &file).await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("403"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!file.exists(), "a refused backup writes nothing");

    // Taken while tenants are being created: the copy is one consistent moment.
    let writer = {
        let admin = server.admin();
        tokio::spawn(async move {
            for i in 0..30 {
                admin
                    .created("/v1/tenants", json!({"name": format!("busy-{i}")}))
                    .await;
            }
        })
    };
    let reader = admin
        .post("/v1/admin/tokens", json!({"read_only": true}))
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let taken = backup(&server.url, &reader, &file).await;
    let stdout = String::from_utf8_lossy(&taken.stdout);
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
    assert!(stdout.starts_with("saved "), "{stdout}");
    writer.await.unwrap();
    let again = backup(&server.url, ADMIN_TOKEN, &file).await;
    assert!(
        !again.status.success(),
        "an existing file is never overwritten"
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    let (status, log) = server.terminate().await;
    assert!(status.success(), "{log}");
    assert!(!log.contains(BMC_PASSWORD) && !log.contains(&token));

    // Restored: the copy as podium.db, the same secret key, in a fresh data directory.
    let fresh = tempfile::tempdir().unwrap();
    std::fs::copy(&file, fresh.path().join("podium.db")).unwrap();
    std::fs::copy(
        data.path().join("secret.key"),
        fresh.path().join("secret.key"),
    )
    .unwrap();
    let restored = ProcessServer::start(BIN, fresh.path(), None).await;
    let admin = restored.admin();
    let after: Vec<BTreeSet<String>> = vec![
        ids(&admin, "/v1/pod_managers", "uuid").await,
        ids(&admin, "/v1/hosts", "id").await,
        ids(&admin, "/v1/claims", "id").await,
        ids(&admin, "/v1/ip_pools", "id").await,
        ids(&admin, &format!("/v1/ip_pools/{pool}/claims"), "address").await,
    ];
    assert_eq!(before, after);
    assert!(after[4].contains(&address.address));
    // Created one after another while the copy was taken: the copy holds the first k of them,
    // none missing between (one consistent moment, not a mix).
    let names = ids(&admin, "/v1/tenants", "name").await;
    let busy: BTreeSet<String> = names
        .into_iter()
        .filter(|n| n.starts_with("busy-"))
        .collect();
    let expected: BTreeSet<String> = (0..busy.len()).map(|i| format!("busy-{i}")).collect();
    assert_eq!(busy, expected);
    // The tenant's token still works and sees its claim, bound.
    let alice = restored.client(Some(&token));
    let mine = alice.get(&format!("/v1/claims/{}", claim.id)).await;
    assert_eq!(mine.status, StatusCode::OK, "{}", mine.text);
    assert_eq!(mine.view::<ClaimView>().state, ClaimState::Bound);
    // The sealed BMC credentials open with the key: a power operation reaches the BMC.
    let hosts = admin
        .hosts_all(&format!("&pod_manager={pm}&state=available"))
        .await;
    let free = hosts
        .iter()
        .find(|h| h.kind == HostKind::System)
        .expect("the unclaimed host is still available");
    let op = admin
        .post(
            &format!("/v1/hosts/{}/power", free.id),
            json!({"action": "on"}),
        )
        .await;
    assert_eq!(op.status, StatusCode::ACCEPTED, "{}", op.text);
    let op = op.view::<OperationView>().id;
    let done = eventually(Duration::from_secs(30), "the power operation", || async {
        let o = admin
            .get(&format!("/v1/operations/{op}"))
            .await
            .view::<OperationView>();
        matches!(
            o.status,
            OperationStatus::Succeeded | OperationStatus::Failed
        )
        .then_some(o)
    })
    .await;
    assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
    assert_eq!(
        bmc.get_json(&free.system_id).await.unwrap()["PowerState"],
        "On"
    );

    // On PostgreSQL, the answer says what to use instead.
    if let Some(database) = podium_tests::PostgresDatabase::for_this_run().await {
        let pg_data = tempfile::tempdir().unwrap();
        let pg = ProcessServer::start(BIN, pg_data.path(), Some(&database.url)).await;
        let refused = pg.admin().get("/v1/admin/backup").await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
        assert!(refused.text.contains("pg_dump"), "{}", refused.text);
    }
}
