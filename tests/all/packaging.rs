//! Packaging, as far as this machine can test it (it runs no container): the binary that
//! `cargo install --path host` installs serves from an empty directory with nothing but a
//! config file; on PostgreSQL two such processes, sharing one secret key, serve one claim
//! between them (a site registered on one, its hosts claimed through the other).

use std::path::{Path, PathBuf};
use std::time::Duration;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, BMC_PASSWORD, ProcessServer, eventually};
use reqwest::StatusCode;
use serde_json::json;

/// `cargo install --path host` into `root`, with this build's target directory (so only what
/// differs is built). Answers the installed binary.
async fn cargo_install(root: &Path) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    // This test binary is TARGET/debug/deps/all-HASH.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = tokio::process::Command::new(cargo)
        .args(["install", "--locked", "--debug", "--path"])
        .arg(workspace.join("host"))
        .arg("--root")
        .arg(root)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "cargo install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    root.join("bin").join("podium")
}

/// The installed `podium serve --config podium.toml`, run in `dir` (which holds that file and
/// nothing else) with no setting from this process's environment but the first admin token.
async fn serve_from(bin: &Path, dir: &Path) -> ProcessServer {
    let mut command = tokio::process::Command::new(bin);
    command
        .args(["serve", "--config", "podium.toml"])
        .current_dir(dir);
    for (key, _) in std::env::vars() {
        if key.starts_with("PODIUM_") {
            command.env_remove(key);
        }
    }
    command.env("PODIUM_ADMIN_TOKEN", ADMIN_TOKEN);
    ProcessServer::spawn(command).await
}

#[tokio::test]
async fn the_installed_binary_serves_from_a_config_file_and_two_replicas_share_a_claim() {
    let install = tempfile::tempdir().unwrap();
    let bin = cargo_install(install.path()).await;
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let key = tempfile::tempdir().unwrap();
    let key_file = key.path().join("secret.key");
    std::fs::write(&key_file, format!("{}\n", "ab".repeat(32))).unwrap();
    let config = |database: &str| {
        format!(
            "listen = \"127.0.0.1:0\"\ndata-dir = \"data\"\nlog-json = true\n\
             probe-interval = 1\nsecret-key-file = \"{}\"\n{database}",
            key_file.display()
        )
    };
    let database_line = database
        .as_ref()
        .map(|d| format!("database-url = \"{}\"\n", d.url))
        .unwrap_or_default();
    let first_dir = tempfile::tempdir().unwrap();
    std::fs::write(first_dir.path().join("podium.toml"), config(&database_line)).unwrap();
    let first = serve_from(&bin, first_dir.path()).await;
    assert!(
        first_dir.path().join("data").is_dir(),
        "its data directory, made where it runs"
    );

    // A second replica where there is a shared database; on SQLite the one process does both.
    let second_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        second_dir.path().join("podium.toml"),
        config(&database_line),
    )
    .unwrap();
    let second = match database {
        Some(_) => Some(serve_from(&bin, second_dir.path()).await),
        None => None,
    };
    let other = second.as_ref().unwrap_or(&first);

    // The site and the tenant are made on the first; the BMC's password sealed there.
    let mut bmc_config = SushyConfig::with_systems(1);
    bmc_config.basic_auth = Some(("admin".into(), BMC_PASSWORD.into()));
    let bmc = Sushy::start(bmc_config).await.unwrap();
    let admin = first.admin();
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(),
                   "auth": {"username": "admin", "password": BMC_PASSWORD},
                   // No deploy ramdisk to clean the live system's disks with.
                   "deploy": {"cleaning": "disabled"}}),
        )
        .await
        .body["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, token) = admin.granted_tenant("acme", &pm).await;
    let available = format!("/v1/hosts?pod_manager={pm}&state=available");
    eventually(Duration::from_secs(60), "the host synced", || async {
        let hosts = admin.get(&available).await.body["items"]
            .as_array()
            .cloned()?;
        (!hosts.is_empty()).then_some(())
    })
    .await;

    // The claim is made through the other replica and provisioned by either: both open the
    // BMC's credentials with the one key.
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let acme = other.client(Some(&token));
    let claim = acme
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}}),
        )
        .await
        .body;
    let id = claim["id"].as_str().unwrap().to_owned();
    // Bound at once, or (when the site's first probe has not yet found it online) pending and
    // bound by the next bind pass.
    assert!(
        claim["state"] == "bound" || claim["state"] == "pending",
        "{claim}"
    );
    let provisioned = eventually(Duration::from_secs(60), "the claim provisioned", || async {
        let c = first
            .client(Some(&token))
            .get(&format!("/v1/claims/{id}"))
            .await
            .body;
        (c["state"] == "bound" && c["host"]["provisioning_state"] == "provisioned").then_some(c)
    })
    .await;
    assert_eq!(provisioned["id"], id.as_str());
    // Released through the first: the host is free again, seen from the other.
    let released = first
        .client(Some(&token))
        .delete(&format!("/v1/claims/{id}"))
        .await;
    assert!(released.status.is_success(), "{}", released.text);
    eventually(Duration::from_secs(60), "the claim gone", || async {
        (acme.get(&format!("/v1/claims/{id}")).await.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    let hosts = other
        .admin()
        .get(&format!("/v1/hosts?pod_manager={pm}"))
        .await
        .body;
    let host = &hosts["items"][0];
    assert_eq!(host["claim"], serde_json::Value::Null, "{host}");
    assert_eq!(host["state"], "available", "{host}");
    assert_eq!(host["power_state"], "off", "deprovisioned: {host}");
}
