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

fn netplan_root() -> PathBuf {
    root().join("root")
}

/// Runs netplan's generator (the stricter second reader: it rejects malformed addresses,
/// gateways and nameservers) on netplan YAML, as `/etc/netplan/50-cloud-init.yaml` of an empty
/// root. Answers the names of the systemd-networkd files it wrote.
pub async fn netplan_generate(yaml: &str) -> Result<Vec<String>> {
    let generate = netplan_root().join("usr/libexec/netplan/generate");
    ensure!(
        generate.exists(),
        "netplan is not set up in {}: run scripts/setup-peers.sh",
        root().display()
    );
    let dir = tempfile::tempdir()?;
    let etc = dir.path().join("etc/netplan");
    std::fs::create_dir_all(&etc)?;
    let file = etc.join("50-cloud-init.yaml");
    std::fs::write(&file, yaml)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
    }
    let output = tokio::process::Command::new(&generate)
        .env(
            "LD_LIBRARY_PATH",
            netplan_root().join("usr/lib/x86_64-linux-gnu"),
        )
        .arg("--root-dir")
        .arg(dir.path())
        .output()
        .await
        .context("running netplan generate")?;
    ensure!(
        output.status.success(),
        "netplan generate refused the configuration: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let network = dir.path().join("run/systemd/network");
    let mut files: Vec<String> = std::fs::read_dir(&network)
        .with_context(|| format!("netplan wrote no {}", network.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    Ok(files)
}

/// Reads a config drive's directory tree (`openstack/latest/...`) the way cloud-init's
/// ConfigDrive data source does (`read_config_drive`). Answers `{"metadata", "networkdata",
/// "userdata_base64"}` as it understood them.
pub async fn read_config_drive(dir: &std::path::Path) -> Result<Value> {
    let root = root();
    const SCRIPT: &str = r#"
import base64, json, sys
from cloudinit.sources.DataSourceConfigDrive import read_config_drive
r = read_config_drive(sys.argv[1])
ud = r.get("userdata")
if isinstance(ud, str):
    ud = ud.encode()
print(json.dumps({
    "metadata": r.get("metadata"),
    "networkdata": r.get("networkdata"),
    "userdata_base64": base64.b64encode(ud).decode() if ud is not None else None,
}, default=str))
"#;
    let output = tokio::process::Command::new(root.join("venv/bin/python"))
        .env(
            "PYTHONPATH",
            root.join("root/usr/lib/python3/dist-packages"),
        )
        .arg("-c")
        .arg(SCRIPT)
        .arg(dir)
        .output()
        .await
        .context("running cloud-init's config drive reader")?;
    ensure!(
        output.status.success(),
        "cloud-init could not read the config drive: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(serde_json::from_slice(&output.stdout)?)
}
