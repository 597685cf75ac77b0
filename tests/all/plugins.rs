//! `/v1/plugins`: the bundled plugins, uploads, and every way an upload can be wrong.

use podium_tests::{TestServer, guests};
use reqwest::StatusCode;

#[tokio::test]
async fn a_fresh_server_has_the_bundled_plugins_with_their_worlds() {
    let server = TestServer::start().await;
    let reply = server.admin().get("/v1/plugins").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let items = reply.body["items"].as_array().unwrap();
    let world_of = |name: &str| {
        items
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed in {items:?}"))["world"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(world_of("redfish"), "hardware-driver");
    assert_eq!(world_of("ipam-static"), "ipam");
    assert_eq!(world_of("ipam-dhcpless"), "ipam");
    assert_eq!(world_of("render-openstack"), "renderer");
    for p in items {
        assert_eq!(p["source"], "bundled");
        assert_eq!(p["sha256"].as_str().unwrap().len(), 64);
    }
}

#[tokio::test]
async fn upload_registers_a_component_once() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let first = admin
        .post_bytes("/v1/plugins", "application/wasm", guests::FAULTY.to_vec())
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    assert_eq!(first.body["name"], "faulty");
    assert_eq!(first.body["world"], "hardware-driver");
    assert_eq!(first.body["source"], "upload");
    let sha = first.body["sha256"].as_str().unwrap().to_owned();

    let again = admin
        .post_bytes("/v1/plugins", "application/wasm", guests::FAULTY.to_vec())
        .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body["sha256"], sha.as_str());

    let shown = admin.get(&format!("/v1/plugins/{sha}")).await;
    assert_eq!(shown.status, StatusCode::OK);
    assert_eq!(shown.body["name"], "faulty");
    let listed = admin.get("/v1/plugins").await;
    assert!(
        listed.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["sha256"] == sha.as_str())
    );
}

async fn upload_error(server: &TestServer, bytes: Vec<u8>) -> podium_tests::Reply {
    let reply = server
        .admin()
        .post_bytes("/v1/plugins", "application/wasm", bytes)
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.text
    );
    assert_eq!(reply.code(), "invalid_plugin");
    reply
}

#[tokio::test]
async fn uploads_that_are_not_plugins_say_exactly_why() {
    let server = TestServer::start().await;

    let not_wasm = upload_error(&server, b"#!/bin/sh\necho hello\n".to_vec()).await;
    assert!(
        not_wasm.message().contains("not a WebAssembly binary"),
        "{}",
        not_wasm.message()
    );

    // The smallest core module: magic and version 1.
    let core = upload_error(&server, b"\0asm\x01\0\0\0".to_vec()).await;
    assert!(
        core.message()
            .contains("core WebAssembly module, not a component"),
        "{}",
        core.message()
    );

    let mut truncated = guests::FAULTY[..guests::FAULTY.len() / 2].to_vec();
    truncated.truncate(truncated.len());
    let invalid = upload_error(&server, truncated).await;
    assert!(
        invalid.message().contains("not a valid component"),
        "{}",
        invalid.message()
    );

    let other = upload_error(&server, guests::OTHER_WORLD.to_vec()).await;
    assert!(
        other
            .message()
            .contains("implements none of Podium's worlds"),
        "{}",
        other.message()
    );
    assert!(
        other.message().contains("`greet`"),
        "names what it exports: {}",
        other.message()
    );

    let version = upload_error(&server, guests::WRONG_VERSION.to_vec()).await;
    assert!(
        version.message().contains("podium:plugin@0.9.0"),
        "{}",
        version.message()
    );
    assert!(
        version.message().contains("podium:plugin@0.1.0"),
        "{}",
        version.message()
    );

    let missing = upload_error(&server, guests::MISSING_EXPORT.to_vec()).await;
    assert!(
        missing.message().contains("hardware-driver"),
        "{}",
        missing.message()
    );
    assert!(
        missing.message().contains("eject-media"),
        "names the missing function: {}",
        missing.message()
    );

    // Nothing was registered.
    let listed = server.admin().get("/v1/plugins").await;
    assert!(
        listed.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["source"] == "bundled")
    );
}

#[tokio::test]
async fn plugin_endpoints_are_admin_only_and_unknown_plugins_are_404() {
    let server = TestServer::start().await;
    let reply = server
        .admin()
        .get(&format!("/v1/plugins/{}", "0".repeat(64)))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(reply.code(), "not_found");
    let anonymous = server
        .client(None)
        .post_bytes("/v1/plugins", "application/wasm", guests::FAULTY.to_vec())
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn plugins_in_the_plugin_directory_are_registered_at_start_and_broken_ones_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("faulty.wasm"), guests::FAULTY).unwrap();
    std::fs::write(dir.path().join("broken.wasm"), b"not wasm at all").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"ignored: not a .wasm").unwrap();
    let plugin_dir = dir.path().to_path_buf();
    let server = TestServer::start_with(|c| c.plugin_dir = Some(plugin_dir)).await;
    let listed = server.admin().get("/v1/plugins").await;
    let items = listed.body["items"].as_array().unwrap();
    let faulty = items
        .iter()
        .find(|p| p["name"] == "faulty")
        .expect("faulty registered");
    assert_eq!(faulty["source"], "directory");
    assert_eq!(
        items.len(),
        5,
        "the four bundled plugins and faulty: {items:?}"
    );
}

/// A restart loses no uploaded plugin: the bytes come back from the database (this process has
/// never seen them), and the compiled artefact from the data directory's cache.
#[tokio::test]
async fn uploaded_plugins_survive_a_restart_and_are_not_recompiled() {
    let server = TestServer::start_with(|c| c.compiled_dir = None).await;
    let uploaded = server
        .admin()
        .post_bytes("/v1/plugins", "application/wasm", guests::FAULTY.to_vec())
        .await;
    assert_eq!(uploaded.status, StatusCode::CREATED, "{}", uploaded.text);
    let sha = uploaded.body["sha256"].as_str().unwrap().to_owned();
    let compiled = server.data_dir.path().join("compiled");
    let cached = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().starts_with(sha.as_str()))
                    .count()
            })
            .unwrap_or(0)
    };
    assert_eq!(
        cached(&compiled),
        1,
        "compiled once, into the data directory"
    );

    let server = server.restart().await;
    let listed = server.admin().get(&format!("/v1/plugins/{sha}")).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    assert_eq!(listed.body["name"], "faulty");
    // Used as a driver, it is loaded from the stored bytes.
    let pm = server
        .admin()
        .post(
            "/v1/pod_managers",
            serde_json::json!({"name": "after-restart", "url": "http://127.0.0.1:9",
                "driver": {"name": "faulty", "config": {"fault": "ok"}}}),
        )
        .await;
    assert_eq!(pm.status, StatusCode::CREATED, "{}", pm.text);
    assert_eq!(pm.body["driver"]["sha256"], sha.as_str());
    assert_eq!(
        cached(&server.data_dir.path().join("compiled")),
        1,
        "the cache was reused"
    );
}

/// `podium plugin check FILE`: its exit status, standard output and standard error.
fn plugin_check(bytes: &[u8]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plugin.wasm");
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_podium-under-test"))
        .args(["plugin", "check"])
        .arg(&file)
        .env_remove("PODIUM_URL")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn plugin_check_offline_accepts_what_an_upload_accepts_and_names_what_it_refuses() {
    // A bundled plugin: what it is, as the upload would register it.
    let redfish = podium::bundled::PLUGINS
        .iter()
        .find(|(name, _)| *name == "plugin-redfish")
        .unwrap()
        .1;
    let (ok, out, err) = plugin_check(redfish);
    assert!(ok, "{out}{err}");
    assert!(out.contains("an upload would accept it"), "{out}");
    assert!(out.contains("name         redfish"), "{out}");
    assert!(out.contains("world        hardware-driver"), "{out}");
    assert!(out.contains("contract     podium:plugin@0.3.0"), "{out}");

    // Each misbehaving guest: refused, with the very reason the upload gives.
    let server = TestServer::start().await;
    let not_wasm = b"#!/bin/sh\necho not a plugin\n".to_vec();
    for (what, bytes) in [
        ("another WIT version", guests::WRONG_VERSION.to_vec()),
        ("a missing export", guests::MISSING_EXPORT.to_vec()),
        ("no Podium world", guests::OTHER_WORLD.to_vec()),
        ("not WebAssembly", not_wasm),
    ] {
        let upload = upload_error(&server, bytes.clone()).await;
        let (ok, out, err) = plugin_check(&bytes);
        assert!(!ok, "{what}: accepted offline: {out}");
        assert!(
            err.contains(upload.message()),
            "{what}: the check says {err:?}, the upload {:?}",
            upload.message()
        );
    }
    // Every problem at once: a component that lacks an export and is larger than an upload
    // may be (padded with a custom section), each named on its own line.
    let mut large = guests::MISSING_EXPORT.to_vec();
    let name = b"padding";
    let payload = podium_app::plugins::MAX_PLUGIN_SIZE;
    let mut section = leb128(name.len());
    section.extend_from_slice(name);
    section.resize(section.len() + payload, 0);
    large.push(0); // a custom section
    large.extend(leb128(section.len()));
    large.extend(section);
    let (ok, _, err) = plugin_check(&large);
    assert!(!ok, "{err}");
    let problems: Vec<&str> = err.lines().filter(|l| l.starts_with("  - ")).collect();
    assert_eq!(problems.len(), 2, "{err}");
    assert!(problems[0].contains("too large"), "{err}");
    let missing = upload_error(&server, guests::MISSING_EXPORT.to_vec()).await;
    assert!(problems[1].contains(missing.message()), "{err}");
}

/// `n` as an unsigned LEB128, as the WebAssembly binary format writes sizes.
fn leb128(mut n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}
