//! `podium serve --config FILE`: a TOML file of settings under the flags and the environment,
//! refused with the key named when it is wrong, shown by `--print-config` without secrets; and
//! the real binary serving from an empty directory with nothing but that file.

use std::process::Output;

use podium_tests::{ADMIN_TOKEN, ProcessServer};
use reqwest::StatusCode;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

/// Runs `podium serve ARGS` in `dir` with `env`, and no setting from this process's environment.
async fn serve(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("serve").args(args).current_dir(dir);
    for (key, _) in std::env::vars() {
        if key.starts_with("PODIUM_") {
            command.env_remove(key);
        }
    }
    command.envs(env.iter().copied());
    command.output().await.expect("podium runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn a_config_file_sets_serve_under_its_flags_and_environment_and_hides_secrets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("podium.toml"),
        r#"
listen = "127.0.0.1:0"
plugin-timeout = 5
probe-interval = 90
log-json = true
database-url = "postgres://podium:s3cret@db.example/podium"
public-url = "http://podium.example:8080"
"#,
    )
    .unwrap();
    let shown = serve(
        dir.path(),
        &[
            "--config",
            "podium.toml",
            "--probe-interval",
            "30",
            "--print-config",
        ],
        &[("PODIUM_PLUGIN_TIMEOUT", "7")],
    )
    .await;
    let text = stdout(&shown);
    assert!(shown.status.success(), "{}{text}", stderr(&shown));
    for line in [
        "listen = \"127.0.0.1:0\"",
        // The environment over the file, the command line over both.
        "plugin-timeout = 7.0",
        "probe-interval = 30",
        "log-json = true",
        "public-url = \"http://podium.example:8080/\"",
        // Defaults for what neither says.
        "sync-interval = 600",
        "database-url = \"postgres://podium:***@db.example/podium\"",
    ] {
        assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
    }
    assert!(!text.contains("s3cret"), "{text}");

    // Mistakes name the file and the key.
    for (file, says) in [
        (
            "plugin-timout = 3",
            "podium.toml: `plugin-timout` is not a setting of podium serve",
        ),
        (
            "plugin-timeout = \"soon\"",
            "podium.toml: `plugin-timeout`: invalid value 'soon'",
        ),
        ("log-json = 3", "podium.toml: `log-json` is true or false"),
        ("listen = [1", "podium.toml: not TOML at line 1, column 12"),
        (
            // The line is not echoed: it may hold a password.
            "database-url = postgres://podium:s3cret@db/podium",
            "podium.toml: not TOML at line 1",
        ),
    ] {
        std::fs::write(dir.path().join("podium.toml"), file).unwrap();
        let refused = serve(dir.path(), &["--config", "podium.toml"], &[]).await;
        assert_eq!(
            refused.status.code(),
            Some(1),
            "{file}: {}",
            stderr(&refused)
        );
        assert!(
            stderr(&refused).contains(says),
            "{file}: {}",
            stderr(&refused)
        );
        assert!(!stderr(&refused).contains("s3cret"), "{}", stderr(&refused));
    }
}

#[tokio::test]
async fn podium_serves_from_an_empty_directory_with_only_a_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = std::path::Path::new(env!("OUT_DIR")).join("compiled-plugins");
    std::fs::write(
        dir.path().join("podium.toml"),
        format!(
            "listen = \"127.0.0.1:0\"\ndata-dir = \"data\"\nlog-json = true\ncompiled-dir = {:?}\n",
            compiled.display().to_string()
        ),
    )
    .unwrap();
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["serve", "--config", "podium.toml"])
        .current_dir(dir.path());
    for (key, _) in std::env::vars() {
        if key.starts_with("PODIUM_") {
            command.env_remove(key);
        }
    }
    command.env("PODIUM_ADMIN_TOKEN", ADMIN_TOKEN);
    let server = ProcessServer::spawn(command).await;
    let plugins = server.admin().get("/v1/plugins").await;
    assert_eq!(plugins.status, StatusCode::OK, "{}", plugins.text);
    assert_eq!(
        plugins.body["items"].as_array().map(Vec::len),
        Some(4),
        "the bundled plugins: {}",
        plugins.text
    );
    assert!(
        dir.path().join("data").join("podium.db").exists(),
        "the database is in the data-dir the file named"
    );
}

/// The soft and hard limits of open files of process `pid`, from `/proc/PID/limits`.
fn open_files_limits(pid: &str) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("a limit of open files");
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[3].to_owned(), fields[4].to_owned())
}

/// Started with a soft limit of open files below the hard one (the usual soft limit is 1,024),
/// `podium serve` raises it to the hard limit: each host's BMC and each API client is a file
/// descriptor.
#[tokio::test]
async fn serve_raises_its_open_files_limit_to_the_hard_limit() {
    let (_, hard) = open_files_limits("self");
    // Half the hard limit (1,024 here, where the hard limit is 20,000): below it wherever the
    // test runs.
    let soft = hard.parse::<u64>().expect("a finite hard limit") / 2;
    let dir = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new("prlimit");
    command
        .arg(format!("--nofile={soft}:{hard}"))
        .arg("--")
        .arg(BIN)
        .args([
            "serve",
            "--log-json",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir.path())
        .arg("--compiled-dir")
        .arg(std::path::Path::new(env!("OUT_DIR")).join("compiled-plugins"));
    for (key, _) in std::env::vars() {
        if key.starts_with("PODIUM_") {
            command.env_remove(key);
        }
    }
    command.env("PODIUM_ADMIN_TOKEN", ADMIN_TOKEN);
    let server = ProcessServer::spawn(command).await;
    let pid = server.pid().expect("running").to_string();
    assert_eq!(open_files_limits(&pid), (hard.clone(), hard));
}
