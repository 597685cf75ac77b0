//! `podium plugin check FILE.wasm`: the checks an upload makes (`podium_app::plugins::
//! plugin_check`), run offline with the plugin runtime of this binary; prints what the
//! component is, or every reason an upload would refuse it (exit code 1).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use podium_runtime::{Runtime, RuntimeConfig};
use sha2::{Digest, Sha256};

pub(crate) fn main(file: &Path) -> ExitCode {
    let bytes: Arc<[u8]> = match std::fs::read(file) {
        Ok(bytes) => bytes.into(),
        Err(e) => {
            eprintln!("error: reading {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    match check(file, bytes) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            ExitCode::FAILURE
        }
    }
}

fn check(file: &Path, bytes: Arc<[u8]>) -> anyhow::Result<Vec<String>> {
    // One instance is all a check needs; nothing is cached.
    let runtime = Runtime::new(RuntimeConfig {
        max_instances: 4,
        ..RuntimeConfig::default()
    })?;
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let problems = tokio.block_on(podium_app::plugins::plugin_problems(
        &runtime,
        bytes.clone(),
    ));
    if !problems.is_empty() {
        let mut report = format!(
            "an upload would refuse it ({} bytes, sha256 {}):",
            bytes.len(),
            hex::encode(Sha256::digest(&bytes))
        );
        for problem in &problems {
            report.push_str(&format!("\n  - {problem}"));
        }
        anyhow::bail!(report);
    }
    let plugin = tokio
        .block_on(podium_app::plugins::plugin_check(&runtime, bytes))
        // The upload's words, once (the error's source repeats them).
        .map_err(|e| anyhow::anyhow!("an upload would refuse it:\n  - {e}"))?;
    let info = plugin.info();
    Ok(vec![
        format!("{}: an upload would accept it", file.display()),
        format!("  name         {}", info.name),
        format!("  version      {}", info.version),
        format!("  world        {}", plugin.world().as_str()),
        format!("  contract     {}", plugin.contract()),
        format!("  description  {}", info.description),
        format!(
            "  size         {} bytes (at most {})",
            plugin.size(),
            podium_app::plugins::MAX_PLUGIN_SIZE
        ),
        format!("  sha256       {}", plugin.sha256()),
    ])
}
