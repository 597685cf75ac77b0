//! The web console at `/ui/` (its own test binary, run once: on SQLite).
//!
//! - Its code is type-checked by TypeScript against types generated (by `openapi-typescript`)
//!   from the `/openapi.json` of the server that serves it: an API change the console does not
//!   follow fails here.
//! - A real Chromium (Debian's), driven by Playwright (`flows.mjs`), signs in as the admin and
//!   as tenants against a real server and sushy-tools, with axe-core scanning each page; it
//!   saves screenshots of the main pages into `docs/console/`.
//!
//! The Node tools come from `tests/console/package-lock.json`, installed by
//! `scripts/setup-peers.sh`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, ImageServer, TestServer};
use reqwest::StatusCode;

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("console")
}

/// Runs a Node tool (`node`, or one of `tests/console/node_modules/.bin`): whether it succeeded
/// and what it printed, its output then its errors.
async fn node(program: &str, args: &[&str], envs: &[(&str, &str)], cwd: &Path) -> (bool, String) {
    let out = tokio::process::Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("{program}: {e} (did scripts/setup-peers.sh run?)"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// [`node`], which must succeed; what it printed.
async fn node_ok(program: &str, args: &[&str], envs: &[(&str, &str)], cwd: &Path) -> String {
    let (ok, text) = node(program, args, envs, cwd).await;
    assert!(ok, "{program} {args:?} failed:\n{text}");
    text
}

#[tokio::test]
async fn the_console_is_served_embedded_with_a_policy_that_keeps_it_to_itself() {
    let server = TestServer::start().await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let index = http
        .get(format!("{}/ui/", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(index.status(), StatusCode::OK);
    let csp = index.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert!(
        index.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(
        index
            .text()
            .await
            .unwrap()
            .contains("<title>Podium</title>")
    );
    let js = http
        .get(format!("{}/ui/app.js", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(js.status(), StatusCode::OK);
    assert!(
        js.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    let bare = http.get(format!("{}/ui", server.url)).send().await.unwrap();
    assert_eq!(bare.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(bare.headers()["location"], "/ui/");
    let missing = http
        .get(format!("{}/ui/nothing.js", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found", "{body}");
}

#[tokio::test]
async fn the_console_type_checks_against_the_openapi_document_of_the_server_that_serves_it() {
    let server = TestServer::start().await;
    let openapi = reqwest::get(format!("{}/openapi.json", server.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("openapi.json"), openapi).unwrap();
    let console = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/podium-server/console");
    for entry in std::fs::read_dir(&console).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "js") {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(
        here().join("tsconfig.json"),
        dir.path().join("tsconfig.json"),
    )
    .unwrap();
    let bin = here().join("node_modules/.bin");
    node_ok(
        bin.join("openapi-typescript").to_str().unwrap(),
        &["openapi.json", "--output", "api-types.d.ts"],
        &[],
        dir.path(),
    )
    .await;
    let tsc = bin.join("tsc");
    let tsc = tsc.to_str().unwrap();
    node_ok(tsc, &["-p", "tsconfig.json"], &[], dir.path()).await;

    // And the check bites: a field the API does not have is an error.
    let app = std::fs::read_to_string(dir.path().join("app.js")).unwrap();
    std::fs::write(
        dir.path().join("app.js"),
        app.replacen("now.status_message", "now.status_mesage", 1),
    )
    .unwrap();
    let (ok, out) = node(tsc, &["-p", "tsconfig.json"], &[], dir.path()).await;
    assert!(!ok, "tsc passed a field the API does not have:\n{out}");
    assert!(out.contains("status_mesage"), "{out}");
}

#[tokio::test]
async fn an_admin_and_tenants_work_through_the_console_in_chromium() {
    let server = TestServer::start_with(|c| {
        c.probe_interval = std::time::Duration::from_millis(300);
    })
    .await;
    let bmc = Sushy::start(SushyConfig::with_systems(2)).await.unwrap();
    let images = ImageServer::start(vec![0x42; 4096]).await;
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/console");
    let out = node_ok(
        "node",
        &["flows.mjs"],
        &[
            ("PODIUM_URL", &server.url),
            ("ADMIN_TOKEN", ADMIN_TOKEN),
            ("BMC_URL", &bmc.url()),
            ("IMAGE_URL", &images.url("/live.iso")),
            ("SCREENSHOTS", screenshots.to_str().unwrap()),
        ],
        &here(),
    )
    .await;
    eprintln!("{out}");
    assert!(out.contains("done"), "{out}");
}
