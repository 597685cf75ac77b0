//! cloud-init, the program that reads `network_data.json` on a booted host, run on what Podium
//! renders: `cloud-init devel net-convert` from Debian's package, unpacked by
//! `scripts/setup-peers.sh` into `.peers/cloud-init`.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join(".peers/cloud-init")
}

/// Converts an OpenStack `network_data.json` document to netplan YAML, as cloud-init does on an
/// Ubuntu host whose physical NICs are `nics` (`(name, mac)`). Answers the YAML.
pub async fn netplan(network_data: &Value, nics: &[(&str, &str)]) -> Result<String> {
    let root = root();
    ensure!(
        root.join("venv/bin/python").exists(),
        "cloud-init is not set up in {}: run scripts/setup-peers.sh",
        root.display()
    );
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("network_data.json");
    std::fs::write(&input, serde_json::to_vec(network_data)?)?;
    let out = dir.path().join("out");
    let mut command = tokio::process::Command::new(root.join("venv/bin/python"));
    command
        .env(
            "PYTHONPATH",
            root.join("root/usr/lib/python3/dist-packages"),
        )
        .args([
            "-c",
            "import sys; from cloudinit.cmd.main import main; sys.exit(main())",
            "devel",
            "net-convert",
            "-k",
            "network_data.json",
            "-D",
            "ubuntu",
            "-O",
            "netplan",
        ])
        .arg("-p")
        .arg(&input)
        .arg("-d")
        .arg(&out);
    for (name, mac) in nics {
        command.arg("-m").arg(format!("{name},{mac}"));
    }
    let output = command.output().await.context("running cloud-init")?;
    ensure!(
        output.status.success(),
        "cloud-init net-convert failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let yaml = out.join("etc/netplan/50-cloud-init.yaml");
    std::fs::read_to_string(&yaml).with_context(|| format!("reading {}", yaml.display()))
}
