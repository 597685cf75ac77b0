//! The `podium` command line as a client of the API: login kept in a 0600 file, tables by
//! default, the API's JSON with `-o json`, errors on stderr with a failing exit code.

use std::os::unix::fs::PermissionsExt;
use std::process::Output;

use podium_tests::{ADMIN_TOKEN, TestServer};
use podium_types::views::{TenantView, TokenCreatedView};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

struct Cli {
    config: tempfile::TempDir,
}

impl Cli {
    fn new() -> Cli {
        Cli {
            config: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> std::path::PathBuf {
        self.config.path().join("podium").join("config.json")
    }

    /// Runs `podium ARGS` with `stdin`, `PODIUM_TOKEN` unset unless given.
    async fn run(&self, args: &[&str], stdin: &str, token: Option<&str>) -> Output {
        use tokio::io::AsyncWriteExt;
        let mut command = tokio::process::Command::new(BIN);
        command
            .args(args)
            .env("PODIUM_CONFIG", self.path())
            .env_remove("PODIUM_URL")
            .env_remove("PODIUM_TOKEN")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(t) = token {
            command.env("PODIUM_TOKEN", t);
        }
        let mut child = command.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.as_bytes()).await.unwrap();
        drop(input);
        child.wait_with_output().await.unwrap()
    }

    async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, "", None).await;
        assert!(
            out.status.success(),
            "podium {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    async fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["-o", "json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all).await).unwrap()
    }
}

#[tokio::test]
async fn login_then_manage_tenants_and_pools_with_tables_and_json() {
    let server = TestServer::start().await;
    let cli = Cli::new();

    let before = cli.run(&["tenant", "list"], "", None).await;
    assert!(!before.status.success());
    assert!(String::from_utf8_lossy(&before.stderr).contains("not logged in"));

    let bad = cli
        .run(&["login", &server.url], "pdm_not-a-real-token\n", None)
        .await;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("401"));
    assert!(!cli.path().exists(), "a failed login saves nothing");

    let login = cli
        .run(&["login", &server.url], &format!("{ADMIN_TOKEN}\n"), None)
        .await;
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    let mode = std::fs::metadata(cli.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the login file is private");
    assert!(
        !String::from_utf8_lossy(&login.stdout).contains(ADMIN_TOKEN)
            && !String::from_utf8_lossy(&login.stderr).contains(ADMIN_TOKEN),
        "the token is never printed"
    );

    let table = cli.ok(&["tenant", "create", "acme"]).await;
    assert!(table.contains("name") && table.contains("acme"), "{table}");
    let tenants = cli.json(&["tenant", "list"]).await;
    assert_eq!(tenants[0]["name"], "acme");
    let listed = cli.ok(&["tenant", "list"]).await;
    assert!(
        listed.contains("NAME") && listed.contains("acme"),
        "{listed}"
    );

    let id = tenants[0]["id"].as_str().unwrap();
    let token = cli
        .json(&["tenant", "token-create", id, "--read-only"])
        .await;
    let secret = token["token"].as_str().unwrap();
    let me = cli.run(&["-o", "json", "whoami"], "", Some(secret)).await;
    let me: Value = serde_json::from_slice(&me.stdout).unwrap();
    assert_eq!(me["role"], "tenant");
    assert_eq!(me["read_only"], true);

    let pool = cli
        .json(&[
            "pool",
            "create",
            "--name",
            "lab",
            "--range",
            "10.7.0.10-10.7.0.20",
            "--prefix",
            "24",
            "--gateway",
            "10.7.0.1",
        ])
        .await;
    let pool_id = pool["id"].as_str().unwrap();
    let claim = cli
        .json(&["pool", "claim", pool_id, "--owner", "node-1"])
        .await;
    assert_eq!(claim["address"], "10.7.0.10");
    let claims = cli.ok(&["pool", "claims", pool_id]).await;
    assert!(
        claims.contains("node-1") && claims.contains("10.7.0.10"),
        "{claims}"
    );

    // Plugins: the bundled ones listed, a component uploaded, a non-component refused.
    let plugins = cli.json(&["plugin", "list"]).await;
    let names: Vec<&str> = plugins
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"redfish") && names.contains(&"ipam-dhcpless"),
        "{names:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let wasm = dir.path().join("faulty.wasm");
    std::fs::write(&wasm, podium_tests::guests::FAULTY).unwrap();
    let uploaded = cli
        .json(&["plugin", "upload", wasm.to_str().unwrap()])
        .await;
    assert_eq!(uploaded["world"], "hardware-driver", "{uploaded}");
    let junk = dir.path().join("junk.wasm");
    std::fs::write(&junk, b"not a component").unwrap();
    let refused = cli
        .run(&["plugin", "upload", junk.to_str().unwrap()], "", None)
        .await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("422"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let missing = cli.run(&["tenant", "show", "nope"], "", None).await;
    assert_eq!(missing.status.code(), Some(1));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("not found") && err.contains("404"), "{err}");
    let invalid = cli
        .run(
            &[
                "pool",
                "create",
                "--name",
                "x",
                "--range",
                "10.0.0.9-10.0.0.1",
                "--prefix",
                "24",
            ],
            "",
            None,
        )
        .await;
    let err = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        err.contains("ranges[0]: start 10.0.0.9 is after end 10.0.0.1"),
        "{err}"
    );

    assert!(cli.run(&["logout"], "", None).await.status.success());
    assert!(!cli.path().exists());
}

#[tokio::test]
async fn a_tenant_claims_with_wait_and_follows_its_provisioning() {
    use podium_tests::sushy::{Sushy, SushyConfig};
    use serde_json::json;
    let server = TestServer::start().await;
    let bmc = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let cli = Cli::new();
    let login = cli
        .run(&["login", &server.url], &format!("{ADMIN_TOKEN}\n"), None)
        .await;
    assert!(login.status.success());

    // The admin: a site, synced with a live status until it ends, and its template.
    let ramdisk = "http://127.0.0.1:9/ramdisk.iso";
    let pm = cli
        .json(&[
            "podm",
            "create",
            "--name",
            "site",
            "--endpoint",
            &bmc.url(),
            "--preprovisioning-image",
            ramdisk,
            // Nothing answers at the ramdisk's URL: a release could not clean.
            "--cleaning",
            "disabled",
            "--allow-md5",
            "--shutdown-timeout",
            "30",
        ])
        .await;
    assert_eq!(pm["preprovisioning_image"], ramdisk, "{pm}");
    assert_eq!(
        pm["deploy"],
        json!({"cleaning": "disabled", "allow_md5": true}),
        "{pm}"
    );
    assert_eq!(pm["power"], json!({"shutdown_timeout": 30}), "{pm}");
    let pm = pm["uuid"].as_str().unwrap().to_owned();
    let sync = cli.json(&["podm", "sync", &pm, "--wait"]).await;
    assert_eq!(sync["status"], "succeeded", "{sync}");
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.json");
    std::fs::write(
        &template,
        r#"{"links": [{"id": "boot", "type": "phy", "nic": "boot"}],
            "networks": [{"id": "n", "type": "ipv4_dhcp", "link": "boot"}]}"#,
    )
    .unwrap();
    cli.ok(&["podm", "template", "set", &pm, template.to_str().unwrap()])
        .await;
    let shown = cli.json(&["podm", "template", "show", &pm]).await;
    assert_eq!(shown["networks"][0]["type"], "ipv4_dhcp", "{shown}");

    // Its host, registered and inspected; inspected again, in and out of maintenance.
    let admin = server.admin();
    let host = podium_tests::eventually(
        std::time::Duration::from_secs(20),
        "the host inspected",
        || async {
            let hosts = admin
                .get(&format!("/v1/hosts?pod_manager={pm}&state=available"))
                .await;
            hosts.body["items"].as_array()?.first()?["id"]
                .as_str()
                .map(str::to_owned)
        },
    )
    .await;
    let inspected = cli.json(&["host", "inspect", &host, "--wait"]).await;
    assert_eq!(
        (&inspected["kind"], &inspected["status"]),
        (&json!("inspect"), &json!("succeeded")),
        "{inspected}"
    );
    let held = cli
        .json(&["host", "maintenance", &host, "--reason", "fan swap"])
        .await;
    assert_eq!(held["state"], "maintenance", "{held}");
    assert_eq!(held["maintenance"]["reason"], "fan swap", "{held}");
    let freed = cli.json(&["host", "maintenance", &host, "--off"]).await;
    assert_eq!(freed["state"], "available", "{freed}");
    let hinted = cli
        .json(&[
            "host",
            "root-device",
            &host,
            "--hint",
            "serial=S3Z1",
            "--hint",
            "size=100",
        ])
        .await;
    assert_eq!(
        hinted["root_device"],
        json!({"serial": "S3Z1", "size": 100}),
        "{hinted}"
    );
    let bad = cli
        .run(
            &["host", "root-device", &host, "--hint", "colour=red"],
            "",
            None,
        )
        .await;
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("colour"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let cleared = cli.json(&["host", "root-device", &host, "--clear"]).await;
    assert_eq!(cleared["root_device"], Value::Null, "{cleared}");

    // A tenant (made through the API), then the CLI with its token.
    let tenant = admin.post("/v1/tenants", json!({"name": "acme"})).await;
    let tenant = tenant.view::<TenantView>().id.to_string();
    admin
        .post("/v1/grants", json!({"tenant": tenant, "pod_manager": pm}))
        .await;
    let token = admin
        .post(&format!("/v1/tenants/{tenant}/tokens"), json!({}))
        .await;
    let token = token.view::<TokenCreatedView>().token;
    let image = images.url("/os.iso");
    let out = cli
        .run(
            &[
                "-o",
                "json",
                "claim",
                "create",
                "--pod-manager",
                &pm,
                "--image",
                &image,
                "--wait",
            ],
            "",
            Some(&token),
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let claim: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        claim["host"]["provisioning_state"], "provisioned",
        "--wait returns once provisioned: {claim}"
    );
    // It followed the server's events, reading the claim only to start, on a new operation and
    // to confirm the end: not again and again.
    let metrics = admin.get("/metrics").await.text;
    let count = |route: &str| -> u64 {
        metrics
            .lines()
            .filter(|l| {
                l.starts_with("podium_http_requests_total{")
                    && l.contains("method=\"GET\"")
                    && l.contains(&format!("route=\"{route}\""))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    };
    assert!(count("/v1/events") >= 1, "{metrics}");
    assert!(count("/v1/claims/{id}") <= 4, "{metrics}");
    let id = claim["id"].as_str().unwrap();
    let ops = cli
        .run(&["claim", "operations", id], "", Some(&token))
        .await;
    let ops = String::from_utf8_lossy(&ops.stdout);
    assert!(
        ops.contains("provision") && ops.contains("succeeded"),
        "{ops}"
    );
    let rendered = cli.run(&["claim", "rendered", id], "", Some(&token)).await;
    let rendered: Value = serde_json::from_slice(&rendered.stdout).unwrap();
    assert_eq!(
        rendered["network_data"]["networks"][0]["type"], "ipv4_dhcp",
        "{rendered}"
    );

    // The admin asks what succeeded, by status and kind; a status that is none is refused.
    let provisions = cli
        .json(&[
            "operation",
            "list",
            "--status",
            "succeeded",
            "--kind",
            "provision,inspect",
        ])
        .await;
    let provisions = provisions.as_array().unwrap();
    assert!(
        provisions
            .iter()
            .any(|op| op["claim"] == id && op["kind"] == "provision"),
        "{provisions:?}"
    );
    assert!(
        provisions.iter().all(|op| op["status"] == "succeeded"
            && ["provision", "inspect"].contains(&op["kind"].as_str().unwrap())),
        "{provisions:?}"
    );
    let refused = cli
        .run(&["operation", "list", "--status", "runing"], "", None)
        .await;
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("status") && err.contains("`runing` is not an operation status"),
        "{err}"
    );

    // Powered off, waiting for it; then released, waiting until the claim is gone.
    let off = cli
        .run(
            &["-o", "json", "claim", "power", id, "off", "--wait"],
            "",
            Some(&token),
        )
        .await;
    assert!(
        off.status.success(),
        "{}",
        String::from_utf8_lossy(&off.stderr)
    );
    let off: Value = serde_json::from_slice(&off.stdout).unwrap();
    assert_eq!(off["host"]["power_state"], "off", "{off}");
    let released = cli
        .run(&["claim", "delete", id, "--wait"], "", Some(&token))
        .await;
    let said = String::from_utf8_lossy(&released.stderr);
    assert!(released.status.success(), "{said}");
    assert!(said.contains("released claim"), "{said}");
    // Gone when the command ends, its host deprovisioned.
    let gone = admin.get(&format!("/v1/claims/{id}")).await;
    assert_eq!(gone.status, reqwest::StatusCode::NOT_FOUND, "{}", gone.text);
    let deprovisioned = cli
        .json(&["operation", "list", "--claim", id, "--kind", "deprovision"])
        .await;
    assert_eq!(deprovisioned[0]["status"], "succeeded", "{deprovisioned}");

    // The admin powers the released host (a system, not its chassis) on, waiting for the
    // operation's end.
    let released_host = claim["host"]["id"].as_str().unwrap();
    let powered = cli
        .json(&["host", "power", released_host, "on", "--wait"])
        .await;
    assert_eq!(
        (&powered["kind"], &powered["status"]),
        (&json!("power"), &json!("succeeded")),
        "{powered}"
    );
    // A tenant deleted with its claim released, waiting until it is gone.
    let offline = cli
        .run(
            &[
                "-o",
                "json",
                "claim",
                "create",
                "--pod-manager",
                &pm,
                "--image",
                &image,
                "--offline",
            ],
            "",
            Some(&token),
        )
        .await;
    assert!(
        offline.status.success(),
        "{}",
        String::from_utf8_lossy(&offline.stderr)
    );
    let deleted = cli
        .run(
            &["tenant", "delete", &tenant, "--release", "--wait"],
            "",
            None,
        )
        .await;
    let said = String::from_utf8_lossy(&deleted.stderr);
    assert!(deleted.status.success(), "{said}");
    assert!(said.contains("and deleted it"), "{said}");
    let gone = admin.get(&format!("/v1/tenants/{tenant}")).await;
    assert_eq!(gone.status, reqwest::StatusCode::NOT_FOUND, "{}", gone.text);
}

/// Wherever the CLI takes an id it takes the name too; a name the API does not know is passed
/// on and its `not found` shown; `serve`'s help is serve's alone; nested fields get rows.
#[tokio::test]
async fn names_stand_for_ids_and_help_is_per_command() {
    let server = TestServer::start().await;
    let cli = Cli::new();
    let login = cli
        .run(&["login", &server.url], &format!("{ADMIN_TOKEN}\n"), None)
        .await;
    assert!(login.status.success());

    let tenant = cli.json(&["tenant", "create", "acme"]).await;
    let pm = cli
        .json(&[
            "podm",
            "create",
            "--name",
            "lab1",
            "--endpoint",
            "http://127.0.0.1:9",
            "--site-limit",
            "50",
            "--request-limit",
            "64",
        ])
        .await;
    assert_eq!(
        pm["limits"],
        json!({"service": null, "site": 50, "requests": 64}),
        "{pm}"
    );
    let limited = cli
        .json(&["podm", "limits", "lab1", "--service", "4"])
        .await;
    assert_eq!(
        limited["limits"],
        json!({"service": 4, "site": null, "requests": null}),
        "{limited}"
    );
    let refused = cli
        .run(&["podm", "limits", "lab1", "--site", "0"], "", None)
        .await;
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("limits.site") && err.contains("between 1 and"),
        "{err}"
    );
    // What a release erases and how a power off treats the OS, changed after the create.
    let deploy = cli
        .json(&[
            "podm",
            "deploy",
            "lab1",
            "--cleaning",
            "full",
            "--allow-md5",
        ])
        .await;
    assert_eq!(
        deploy["deploy"],
        json!({"cleaning": "full", "allow_md5": true}),
        "{deploy}"
    );
    let power = cli
        .json(&["podm", "power", "lab1", "--shutdown-timeout", "30"])
        .await;
    assert_eq!(power["power"], json!({"shutdown_timeout": 30}), "{power}");
    let refused = cli
        .run(
            &["podm", "power", "lab1", "--shutdown-timeout", "3601"],
            "",
            None,
        )
        .await;
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("shutdown_timeout"), "{err}");
    let defaults = cli.json(&["podm", "deploy", "lab1"]).await;
    assert_eq!(
        defaults["deploy"],
        json!({"cleaning": "metadata", "allow_md5": false}),
        "{defaults}"
    );
    let grant = cli
        .json(&[
            "grant",
            "create",
            "--tenant",
            "acme",
            "--pod-manager",
            "lab1",
        ])
        .await;
    assert_eq!(grant["tenant"], tenant["id"], "{grant}");
    assert_eq!(grant["pod_manager"], pm["uuid"], "{grant}");
    // By name and by id alike.
    let by_name = cli.json(&["podm", "show", "lab1"]).await;
    let by_id = cli
        .json(&["podm", "show", pm["uuid"].as_str().unwrap()])
        .await;
    assert_eq!(by_name["uuid"], by_id["uuid"]);
    let token = cli.json(&["tenant", "token-create", "acme"]).await;
    assert_eq!(token["tenant"], tenant["id"], "{token}");

    // The tenant: its login names it, it lists the pod managers it was granted (never their
    // URL) and names them as the admin does.
    let tenant_cli = Cli::new();
    let login = tenant_cli
        .run(
            &["login", &server.url],
            &format!("{}\n", token["token"].as_str().unwrap()),
            None,
        )
        .await;
    let said = String::from_utf8_lossy(&login.stderr);
    assert!(login.status.success(), "{said}");
    assert!(said.contains("logged in as tenant acme ("), "{said}");
    let granted = tenant_cli.json(&["podm", "list"]).await;
    assert_eq!(granted.as_array().map(Vec::len), Some(1), "{granted}");
    assert_eq!(granted[0]["name"], "lab1", "{granted}");
    assert_eq!(granted[0]["grant"]["id"], grant["id"], "{granted}");
    assert!(!granted.to_string().contains("127.0.0.1:9"), "{granted}");
    let shown = tenant_cli.json(&["podm", "show", "lab1"]).await;
    assert_eq!(shown["uuid"], pm["uuid"], "{shown}");
    // The site has no host (nothing answers there): the claim fails, on the pod manager named.
    let made = tenant_cli
        .run(
            &[
                "-o",
                "json",
                "claim",
                "create",
                "--pod-manager",
                "lab1",
                "--image",
                "http://127.0.0.1:9/os.iso",
            ],
            "",
            None,
        )
        .await;
    let claim: Value = serde_json::from_slice(&made.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&made.stderr)));
    assert_eq!(claim["pod_manager"], pm["uuid"], "{claim}");

    let unknown = cli.run(&["podm", "show", "lab2"], "", None).await;
    assert_eq!(unknown.status.code(), Some(1));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(err.contains("lab2") && err.contains("404"), "{err}");

    // A pod manager's table: no cell holds JSON.
    let table = cli.ok(&["podm", "show", "lab1"]).await;
    assert!(table.contains("lab1") && !table.contains('{'), "{table}");

    let help = cli.ok(&["serve", "--help"]).await;
    assert!(
        help.contains("Usage: podium serve") && help.contains("--listen"),
        "{help}"
    );
    assert!(
        !help.contains("--url") && !help.contains("--output"),
        "{help}"
    );
    for command in ["podm", "host", "tenant", "grant", "claim", "pool", "plugin"] {
        let help = cli.ok(&[command, "--help"]).await;
        let undocumented: Vec<&str> = help
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter(|l| l.split_whitespace().count() < 2)
            .collect();
        assert!(
            undocumented.is_empty(),
            "{command}: {undocumented:?} in {help}"
        );
    }
    server.stop().await;
}

/// `podium claim watch` follows a claim through the server's events and carries on across a
/// restart of the server (it reconnects after the last event it saw), and `podium events`
/// prints each change as a JSON line.
#[tokio::test]
async fn claim_watch_follows_a_claim_across_a_server_restart() {
    use podium_tests::ProcessServer;
    use podium_tests::sushy::{Sushy, SushyConfig};
    use serde_json::json;
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let start = || {
        let mut command = tokio::process::Command::new(BIN);
        command
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--data-dir",
            ])
            .arg(data.path())
            .arg("--compiled-dir")
            .arg(std::path::Path::new(env!("OUT_DIR")).join("compiled-plugins"))
            .args(["--log-json", "--probe-interval", "1"])
            .env("PODIUM_ADMIN_TOKEN", ADMIN_TOKEN)
            .env_remove("PODIUM_DATABASE_URL");
        ProcessServer::spawn(command)
    };
    let server = start().await;
    let bmc = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let admin = server.admin();
    let pm = admin.create_site(&bmc.url()).await;
    podium_tests::eventually(std::time::Duration::from_secs(30), "the host", || async {
        let hosts = admin.get("/v1/hosts?state=available").await.body["items"]
            .as_array()
            .cloned()?;
        hosts.iter().any(|h| h["kind"] == "system").then_some(())
    })
    .await;
    let (_, alice) = admin.granted_tenant("alice", &pm).await;
    let (_, bob) = admin.granted_tenant("bob", &pm).await;
    let body = json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}});
    let mut held = body.clone();
    held["online"] = json!(false);
    let a = server
        .client(Some(&alice))
        .created("/v1/claims", held)
        .await
        .body;
    let b = server
        .client(Some(&bob))
        .created("/v1/claims", body)
        .await
        .body;
    assert_eq!(b["state"], "pending", "{b}");
    let b_id = b["id"].as_str().unwrap().to_owned();

    let cli = Cli::new();
    let spawn = |args: &[&str]| {
        tokio::process::Command::new(BIN)
            .args(args)
            .env("PODIUM_CONFIG", cli.path())
            .env("PODIUM_URL", &server.url)
            .env("PODIUM_TOKEN", &bob)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    };
    let watch = spawn(&["-o", "json", "claim", "watch", &b_id]);
    let mut events = spawn(&["events", "--claim", &b_id]);
    // Both are following once the server has answered their streams.
    podium_tests::eventually(
        std::time::Duration::from_secs(30),
        "both streams open",
        || async {
            let metrics = admin.get("/metrics").await.text;
            metrics
                .lines()
                .any(|l| l.contains("route=\"/v1/events\"") && l.ends_with(" 2"))
                .then_some(())
        },
    )
    .await;

    // The server restarts; then the held claim is released and bob's binds and provisions.
    let (status, log) = server.terminate().await;
    assert!(status.success(), "{log}");
    let server = start().await;
    let released = server
        .client(Some(&alice))
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/claims/{}", a["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(
        released.status,
        reqwest::StatusCode::ACCEPTED,
        "{}",
        released.text
    );

    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        watch.wait_with_output(),
    )
    .await
    .expect("claim watch did not end")
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let claim: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(claim["id"], b_id.as_str());
    assert_eq!(
        claim["host"]["provisioning_state"], "provisioned",
        "{claim}"
    );

    // `podium events` printed bob's claim's changes, one JSON object a line, across the restart.
    use tokio::io::AsyncBufReadExt;
    let stdout = events.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &Value| {
        e["operation"]["kind"] == "provision" && e["operation"]["status"] == "succeeded"
    }) {
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("podium events printed nothing more")
            .unwrap()
            .expect("podium events ended");
        seen.push(serde_json::from_str(&line).unwrap());
    }
    assert!(
        seen.iter().any(|e| e["claim"]["state"] == "bound"),
        "{seen:#?}"
    );
    let numbers: Vec<i64> = seen.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    drop(events);
    let _ = server.terminate().await;
}

/// A pod manager named `name` in front of `url`, synced, and the CLI logged in as the admin:
/// its uuid and the CLI.
async fn named_site(server: &TestServer, name: &str, url: &str) -> (String, Cli) {
    let admin = server.admin();
    let pm = admin
        .created("/v1/pod_managers", json!({"name": name, "url": url}))
        .await
        .body["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    admin.sync_all(std::slice::from_ref(&pm)).await;
    let cli = Cli::new();
    let login = cli
        .run(&["login", &server.url], &format!("{ADMIN_TOKEN}\n"), None)
        .await;
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    (pm, cli)
}

/// `podium chassis tree lab1` draws the pod manager's tree (named by its name), as the API has
/// it: DMTF's blade enclosure with its four blades under it.
#[tokio::test]
async fn chassis_tree_draws_a_pod_managers_enclosure_and_blades() {
    let bmc = podium_tests::sushy::SushyStatic::start(&podium_tests::composition::mockup(
        "public-bladed",
    ))
    .await
    .expect("sushy-static starts");
    let server = TestServer::start().await;
    let (pm, cli) = named_site(&server, "lab1", &bmc.url()).await;
    let drawn = cli.ok(&["chassis", "tree", "lab1"]).await;
    let lines: Vec<&str> = drawn.lines().collect();
    assert_eq!(lines.len(), 5, "{drawn}");
    assert!(
        lines[0].starts_with("Quad Blade Enclosure (Enclosure) at \"row North, rack WEB43, U12\""),
        "{drawn}"
    );
    for (n, line) in lines[1..].iter().enumerate() {
        let guide = if n == 3 { "└─ " } else { "├─ " };
        assert!(
            line.starts_with(&format!(
                "{guide}Blade (Blade) at \"Blade {}\", 1 host",
                n + 1
            )),
            "{drawn}"
        );
    }
    let listed = cli.json(&["chassis", "tree", &pm]).await;
    assert_eq!(listed.as_array().unwrap().len(), 5);
    let blade = listed[1]["id"].as_str().unwrap();
    let mut shown = cli.json(&["chassis", "show", blade]).await;
    // A sync of the site may have seen it again in between: all else is the same.
    let mut expected = listed[1].clone();
    for seen in [&mut shown, &mut expected] {
        let seen = seen.as_object_mut().unwrap();
        seen.remove("last_seen_at");
        seen.remove("updated_at");
    }
    assert_eq!(shown, expected);
}

/// `podium composed`: the blocks of a pod manager named by its name, a node composed of blocks
/// named and of a requirement (refused while nothing fits, with the API's words), listed, shown
/// and decomposed.
#[tokio::test]
async fn composed_nodes_are_composed_listed_and_decomposed_from_the_cli() {
    let folder = podium_tests::composition::composable();
    let service = podium_tests::composition::Composition::start(folder.path())
        .await
        .expect("the service starts");
    let server = TestServer::start().await;
    let (pm, cli) = named_site(&server, "rsd", service.url()).await;
    let blocks = cli.json(&["composed", "blocks", "rsd"]).await;
    assert_eq!(blocks["blocks"].as_array().unwrap().len(), 12, "{blocks}");
    let table = cli.ok(&["composed", "blocks", "rsd"]).await;
    assert!(table.contains("ComputeBlock1"), "{table}");

    // Every compute block is composed: nothing fits, and the CLI says why.
    let refused = cli
        .run(
            &["composed", "create", "rsd", "web-1", "--drives", "1"],
            "",
            None,
        )
        .await;
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("no resource zone has free blocks"), "{err}");

    let nodes = cli.json(&["composed", "list", "rsd"]).await;
    let mockups = nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["system_id"] == "/redfish/v1/Systems/ComposedSystem")
        .unwrap_or_else(|| panic!("{nodes}"))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let gone = cli.run(&["composed", "delete", &mockups], "", None).await;
    let err = String::from_utf8_lossy(&gone.stderr);
    assert!(gone.status.success() && err.contains("decomposed"), "{err}");

    let made = cli
        .json(&[
            "composed",
            "create",
            "rsd",
            "web-1",
            "--block",
            "/redfish/v1/CompositionService/ResourceBlocks/ComputeBlock1",
            "--block",
            "/redfish/v1/CompositionService/ResourceBlocks/DriveBlock5",
        ])
        .await;
    assert_eq!(made["name"], "web-1");
    let id = made["id"].as_str().unwrap();
    let shown = cli.json(&["composed", "show", id]).await;
    assert_eq!(shown["blocks"], made["blocks"]);
    let listed = cli.ok(&["composed", "list", &pm]).await;
    assert!(listed.contains("web-1"), "{listed}");
    let gone = cli.run(&["composed", "delete", id], "", None).await;
    assert!(
        gone.status.success(),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
}

/// `podium host bios`: a host's BIOS as a table of attributes (named by the host's name), a
/// change with `--set` followed to its end and seen at the BMC, a value the registry refuses
/// with the API's words, and a reset; `podium host secure-boot`: shown, then turned on;
/// `podium host firmware`: the components as a table, an update followed to its end, an image
/// URL refused with the API's words.
#[tokio::test]
async fn a_hosts_bios_secure_boot_and_firmware_from_the_cli() {
    let bmc = crate::bios::libvirt_bmc().await;
    let server = TestServer::start().await;
    let (pm, cli) = named_site(&server, "lab1", &bmc.url()).await;
    let host = server
        .admin()
        .systems_in_state(&pm, 1, "available")
        .await
        .remove(0);
    let table = cli.ok(&["host", "bios", &host.name]).await;
    let turbo = table
        .lines()
        .find(|l| l.contains("ProcTurboMode"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        turbo.contains("Enabled") && turbo.contains("enumeration"),
        "{table}"
    );
    let rows = cli.json(&["host", "bios", &host.name]).await;
    let cores = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "NumCores")
        .unwrap_or_else(|| panic!("{rows}"));
    assert_eq!(cores["value"], 10);
    assert_eq!(cores["read_only"], true);

    let op = cli
        .json(&[
            "host",
            "bios",
            &host.name,
            "--set",
            "ProcTurboMode=Disabled",
            "--set",
            "QuietBoot=false",
            "--wait",
        ])
        .await;
    assert_eq!(op["status"], "succeeded", "{op}");
    let seen = crate::bios::bmc_attributes(&bmc).await;
    assert_eq!(seen["ProcTurboMode"], "Disabled", "{seen}");
    assert_eq!(seen["QuietBoot"], "False", "{seen}");

    let refused = cli
        .run(
            &["host", "bios", &host.name, "--set", "NumCores=12"],
            "",
            None,
        )
        .await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("NumCores") && stderr.contains("read-only"),
        "{stderr}"
    );

    let op = cli
        .json(&["host", "bios", &host.name, "--reset", "--wait"])
        .await;
    assert_eq!(op["status"], "succeeded", "{op}");
    let seen = crate::bios::bmc_attributes(&bmc).await;
    assert_eq!(seen["ProcTurboMode"], "Enabled", "{seen}");

    let shown = cli.json(&["host", "secure-boot", &host.name]).await;
    assert_eq!(shown["enabled"], false, "{shown}");
    let op = cli
        .json(&["host", "secure-boot", &host.name, "--on", "--wait"])
        .await;
    assert_eq!(op["status"], "succeeded", "{op}");
    assert_eq!(op["result"]["enabled"], true, "{op}");
    let shown = cli.json(&["host", "secure-boot", &host.name]).await;
    assert_eq!(shown["enabled"], true, "{shown}");

    let table = cli.ok(&["host", "firmware", &host.name]).await;
    let bios = table
        .lines()
        .find(|l| l.contains(" bios "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(bios.contains("1.0.0") && bios.contains("true"), "{table}");
    let system = format!("/redfish/v1/Systems/{}", crate::bios::TEST_DOMAIN);
    let op = cli
        .json(&[
            "host",
            "firmware",
            &host.name,
            "--update",
            "http://127.0.0.1:9/bios.bin",
            "--target",
            &system,
            "--wait",
        ])
        .await;
    assert_eq!(op["status"], "succeeded", "{op}");
    assert_eq!(op["result"]["components"][0]["version"], "1.1.0", "{op}");
    let refused = cli
        .run(
            &[
                "host",
                "firmware",
                &host.name,
                "--update",
                "ftp://x/b.bin",
                "--target",
                &system,
            ],
            "",
            None,
        )
        .await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("image_url") && stderr.contains("http or https"),
        "{stderr}"
    );
}
