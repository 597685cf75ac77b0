//! The plugin author's kit: the newcomer's path from `podium plugin new` to a driver bound to a
//! pod manager and discovering sushy-tools' systems, the SDK's native harness against a real
//! BMC, and the harness's limits being the host's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use podium_plugin::testing::{Host, Limits};
use podium_tests::TestServer;
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use serde_json::json;

/// The workspace this test was built in.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cargo ARGS` in `dir`, as a plugin author runs it: none of the outer cargo's settings, the
/// workspace's lock file (so the versions are those already fetched; `--offline`), and one
/// target folder for every run, so the SDK's dependencies are built once.
fn cargo(dir: &Path, args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO"));
    command.args(args).arg("--offline").current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || [
                "RUSTFLAGS",
                "RUSTC_WRAPPER",
                "RUSTC_WORKSPACE_WRAPPER",
                "RUSTC",
            ]
            .contains(&key.as_str())
        {
            command.env_remove(&key);
        }
    }
    command.env("CARGO_TARGET_DIR", root().join("target").join("newcomer"));
    let out = command.output().expect("cargo runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "cargo {args:?} in {}:\n{text}",
        dir.display()
    );
    text
}

/// `podium ARGS` in `dir`: exit status, standard output, standard error.
fn podium(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_podium-under-test"))
        .args(args)
        .current_dir(dir)
        .env_remove("PODIUM_URL")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `plugin new` for `world`, then what its README says: `cargo test`, `cargo build` for
/// wasm32-wasip2, `plugin check`. Returns the component.
fn new_plugin(dir: &Path, world: &str, name: &str) -> Vec<u8> {
    let sdk = root().join("sdk").join("podium-plugin");
    let (ok, out, err) = podium(
        dir,
        &[
            "plugin",
            "new",
            "--world",
            world,
            name,
            "--sdk",
            sdk.to_str().unwrap(),
        ],
    );
    assert!(ok, "plugin new: {out}{err}");
    let krate = dir.join(name);
    for file in ["Cargo.toml", "README.md", "src/lib.rs", ".gitignore"] {
        assert!(krate.join(file).is_file(), "{file} was not written");
    }
    let readme = std::fs::read_to_string(krate.join("README.md")).unwrap();
    assert!(
        readme.contains("cargo build --target wasm32-wasip2 --release"),
        "{readme}"
    );
    // A second `new` of the same name refuses rather than overwrite.
    let (ok, _, err) = podium(dir, &["plugin", "new", "--world", world, name]);
    assert!(!ok && err.contains("already exists"), "{err}");

    std::fs::copy(root().join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    let tested = cargo(&krate, &["test"]);
    assert!(tested.contains("1 passed"), "{tested}");
    cargo(&krate, &["build", "--target", "wasm32-wasip2", "--release"]);
    let wasm = root()
        .join("target/newcomer/wasm32-wasip2/release")
        .join(format!("{}.wasm", name.replace('-', "_")));
    let (ok, out, err) = podium(dir, &["plugin", "check", wasm.to_str().unwrap()]);
    assert!(ok, "plugin check: {out}{err}");
    assert!(out.contains(&format!("name         {name}")), "{out}");
    assert!(out.contains(&format!("world        {world}")), "{out}");
    std::fs::read(&wasm).unwrap()
}

#[tokio::test]
async fn a_new_driver_goes_from_plugin_new_to_discovering_a_bmc() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_path_buf();
    let wasm = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || new_plugin(&dir, "hardware-driver", "my-driver")
    })
    .await
    .unwrap();

    let server = TestServer::start().await;
    let admin = server.admin();
    let plugin = admin.upload_plugin(&wasm).await;
    assert_eq!(plugin["name"], "my-driver", "{plugin}");
    assert_eq!(plugin["world"], "hardware-driver", "{plugin}");

    let bmc = Sushy::start(SushyConfig {
        systems: vec![FakeSystem::numbered(1), FakeSystem::numbered(2)],
        basic_auth: Some(("admin".into(), "s3cret-pass".into())),
        ..SushyConfig::default()
    })
    .await
    .unwrap();
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "newcomer", "url": bmc.url(),
                   "auth": {"username": "admin", "password": "s3cret-pass"},
                   "driver": {"name": "my-driver", "config": {"root": "/redfish/v1"}}}),
        )
        .await;
    let uuid = pm.body["uuid"].as_str().unwrap().to_owned();
    // Its probe puts the pod manager online, its discovery registers the two systems.
    podium_tests::eventually(
        Duration::from_secs(60),
        "the pod manager online",
        || async {
            let view = admin.get(&format!("/v1/pod_managers/{uuid}")).await.body;
            (view["status"] == "online").then_some(())
        },
    )
    .await;
    // Registered by its discovery, then inspected by it: available.
    let hosts = admin.systems_in_state(&uuid, 2, "available").await;
    for n in 1..=2 {
        let expected = FakeSystem::numbered(n);
        let host = hosts
            .iter()
            .find(|h| h.name == expected.name)
            .unwrap_or_else(|| panic!("{} not registered: {hosts:?}", expected.name));
        assert_eq!(
            host.uuid.as_deref(),
            Some(expected.uuid.as_str()),
            "{host:?}"
        );
    }

    // The driver's configuration is checked by the plugin itself, naming the field.
    let refused = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "typo", "url": bmc.url(),
                   "driver": {"name": "my-driver", "config": {"rot": "/redfish/v1"}}}),
        )
        .await;
    assert_eq!(refused.status.as_u16(), 422, "{}", refused.body);
    assert!(refused.body.to_string().contains("rot"), "{}", refused.body);
}

#[tokio::test]
async fn new_ipam_and_renderer_plugins_build_test_and_pass_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_path_buf();
    let built = tokio::task::spawn_blocking(move || {
        [("ipam", "my-ipam"), ("renderer", "my-renderer")]
            .map(|(world, name)| (name, new_plugin(&dir, world, name)))
    })
    .await
    .unwrap();
    let server = TestServer::start().await;
    for (name, wasm) in built {
        let plugin = server.admin().upload_plugin(&wasm).await;
        assert_eq!(plugin["name"], name, "{plugin}");
    }
}

#[tokio::test]
async fn the_sdk_harness_runs_the_bundled_driver_natively_against_a_real_bmc() {
    let bmc = Sushy::start(SushyConfig {
        basic_auth: Some(("admin".into(), "s3cret-pass".into())),
        ..SushyConfig::with_systems(2)
    })
    .await
    .unwrap();
    let url = bmc.url();
    let (systems, wrong) = tokio::task::spawn_blocking(move || {
        let host = Host::new()
            .endpoint(&url)
            .credentials("admin", "s3cret-pass");
        let systems = host.driver::<plugin_redfish::Redfish>().discover();
        let wrong = Host::new()
            .endpoint(&url)
            .credentials("admin", "wrong")
            .driver::<plugin_redfish::Redfish>()
            .probe();
        (systems, wrong)
    })
    .await
    .unwrap();
    let systems = systems.unwrap();
    let machines: Vec<_> = systems
        .iter()
        .filter(|s| s.kind == podium_plugin::driver::SystemKind::System)
        .collect();
    assert_eq!(machines.len(), 2, "{systems:?}");
    assert!(
        matches!(wrong, Err(podium_plugin::Error::Unauthorized(_))),
        "{wrong:?}"
    );
}

#[test]
fn the_harness_limits_are_the_hosts() {
    let host = podium_runtime::RuntimeConfig::default();
    let call = podium_runtime::HttpBudget::CALL;
    let discover = podium_runtime::HttpBudget::DISCOVERY;
    let (log_bytes, log_lines) = podium_runtime::LOG_BUDGET;
    assert_eq!(
        Limits::default(),
        Limits {
            call_timeout: host.call_timeout,
            discover_timeout: host.discover_timeout,
            requests_per_call: call.requests,
            bytes_per_call: call.bytes,
            requests_per_discover: discover.requests,
            bytes_per_discover: discover.bytes,
            max_request_body: host.max_http_request,
            max_response_body: host.max_http_response,
            log_lines,
            log_bytes,
            log_line_max: podium_runtime::LOG_LINE_MAX,
            memory_limit: host.memory_limit,
        }
    );
}
