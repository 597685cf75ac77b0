//! Clients of the JSON API that nobody here wrote, run on Podium's `/openapi.json`:
//! `openapi-spec-validator` (is the document valid OpenAPI 3.1?), Schemathesis (does the API
//! answer as its document says, whatever it is sent?) and `openapi-python-client` (can a
//! client be generated from it, and does that client work?), and the Prometheus project's own
//! OpenMetrics parser (`prometheus-client`) for `/metrics`. `scripts/setup-peers.sh` installs
//! them into `.peers/api-tools`.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

/// The venv of the tools.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join(".peers/api-tools")
}

/// A program of the venv.
pub fn bin(name: &str) -> Result<PathBuf> {
    let path = root().join("bin").join(name);
    ensure!(
        path.exists(),
        "{} is not installed: run scripts/setup-peers.sh",
        path.display()
    );
    Ok(path)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// One sample of a scrape, as the Prometheus project's OpenMetrics parser read it.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Sample {
    /// The metric family (`podium_plugin_calls`).
    pub family: String,
    /// `counter`, `gauge`, `histogram`, ...
    pub kind: String,
    /// The sample's own name (`podium_plugin_calls_total`, `..._bucket`).
    pub name: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub value: f64,
}

/// Parses a scrape with `prometheus_client.openmetrics.parser` (strict: a malformed line, a
/// missing `# EOF` or a counter without `_total` is an error); the samples it read.
pub async fn parse_openmetrics(scrape: &str) -> Result<Vec<Sample>> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"family": family.name, "kind": family.type, "name": s.name,
                    "labels": s.labels, "value": s.value})
print(json.dumps(out))
"#;
    let output = python_with_input(SCRIPT, scrape.as_bytes()).await?;
    ensure!(
        output.status.success(),
        "the OpenMetrics parser refused the scrape:\n{}",
        text(&output)
    );
    serde_json::from_slice(&output.stdout).context("reading the parser's samples")
}

/// Runs a Python script in the tools' venv with `input` on its standard input.
async fn python_with_input(script: &str, input: &[u8]) -> Result<Output> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(bin("python")?)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("running the tools' python")?;
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(input).await?;
    drop(stdin);
    Ok(child.wait_with_output().await?)
}

/// Runs `openapi-spec-validator` on a document; its complaint when it refuses it.
pub async fn validate_openapi(document: &Value) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(document)?)?;
    let output = tokio::process::Command::new(bin("openapi-spec-validator")?)
        .arg(&file)
        .output()
        .await
        .context("running openapi-spec-validator")?;
    ensure!(
        output.status.success(),
        "openapi-spec-validator refused the document:\n{}",
        text(&output)
    );
    Ok(())
}

/// Checks `instances` against the schema a document gives the `200` answer of `GET path` in
/// `media_type`, with the `jsonschema` library (JSON Schema 2020-12, which OpenAPI 3.1's schemas
/// are), the document's components resolving its references. A string the schema says holds
/// JSON (`contentMediaType`) is decoded and checked against its `contentSchema`, as a client
/// generated from the document reads it (the library takes both as annotations only). Answers,
/// for each instance, its first violation (`None`: it conforms).
pub async fn conforms(
    document: &Value,
    path: &str,
    media_type: &str,
    instances: &[Value],
) -> Result<Vec<Option<String>>> {
    const SCRIPT: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
given = json.load(sys.stdin)
doc = given["document"]
schema = doc["paths"][given["path"]]["get"]["responses"]["200"]["content"][given["media_type"]]["schema"]
def check(schema, instance):
    validator = Draft202012Validator({**schema, "components": doc["components"]})
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        return f"{errors[0].message} (at {list(errors[0].absolute_path)})"
    return content(schema, instance)
def content(schema, instance):
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
        if Draft202012Validator({**branch, "components": doc["components"]}).is_valid(instance):
            return content(branch, instance)
    if isinstance(instance, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in instance:
                found = content(sub, instance[key])
                if found:
                    return f"{key}: {found}"
    if isinstance(instance, str) and schema.get("contentMediaType") == "application/json":
        try:
            decoded = json.loads(instance)
        except ValueError as e:
            return f"not JSON: {e}"
        return check(schema.get("contentSchema", {}), decoded)
    return None
print(json.dumps([check(schema, i) for i in given["instances"]]))
"#;
    let given = serde_json::json!({
        "document": document, "path": path, "media_type": media_type, "instances": instances,
    });
    let output = python_with_input(SCRIPT, &serde_json::to_vec(&given)?).await?;
    ensure!(
        output.status.success(),
        "jsonschema could not check the instances:\n{}",
        text(&output)
    );
    serde_json::from_slice(&output.stdout).context("reading jsonschema's verdicts")
}

/// What a Schemathesis run found.
#[derive(Debug)]
pub struct Fuzzed {
    pub passed: bool,
    /// Its report, for the assertion message.
    pub output: String,
}

/// Schemathesis' hooks: plugin uploads (`application/wasm`) sent as the raw bytes it generates.
const HOOKS: &str = "import schemathesis\n\
    schemathesis.serializer.alias(\"application/wasm\", \"application/octet-stream\")\n";

/// Runs Schemathesis against `base` (`http://127.0.0.1:PORT`) from the document it serves, with
/// `token`, on every operation, for at most `max_time`. `checks` are Schemathesis' names of what
/// each answer must satisfy.
pub async fn schemathesis(
    base: &str,
    token: &str,
    checks: &[&str],
    max_examples: u32,
    max_time: Duration,
) -> Result<Fuzzed> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("podium_hooks.py"), HOOKS)?;
    let mut command = tokio::process::Command::new(bin("schemathesis")?);
    command
        .current_dir(dir.path())
        .env("PYTHONPATH", dir.path())
        .env("SCHEMATHESIS_HOOKS", "podium_hooks")
        .env("NO_COLOR", "1")
        .arg("run")
        .arg(format!("{base}/openapi.json"))
        .args(["--url", base])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", &checks.join(",")])
        .args(["--max-examples", &max_examples.to_string()])
        .args(["--max-time", &max_time.as_secs().max(1).to_string()])
        // One worker: Python 3.11's `ast.parse` is not safe across threads (Hypothesis calls it).
        .args(["--workers", "1", "--seed", "1", "--request-timeout", "30"])
        .args(["--phases", "examples,coverage,fuzzing"])
        // An event stream never ends, and Schemathesis reads each answer whole: the stream's
        // answers are checked by tests/all/events.rs instead.
        .args(["--exclude-path", "/v1/events"])
        .args(["--suppress-health-check", "all", "--warnings", "off"]);
    let output = tokio::time::timeout(max_time * 3 + Duration::from_secs(120), command.output())
        .await
        .context("Schemathesis ran far past its time budget")?
        .context("running schemathesis")?;
    Ok(Fuzzed {
        passed: output.status.success(),
        output: text(&output),
    })
}

/// Generates a Python client package from a document into `dir`; answers the package's
/// directory (to put on `PYTHONPATH`) and its module name.
pub async fn generate_python_client(document: &Value, dir: &Path) -> Result<(PathBuf, String)> {
    let file = dir.join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(document)?)?;
    let output = tokio::process::Command::new(bin("openapi-python-client")?)
        .current_dir(dir)
        .args(["generate", "--meta", "none", "--overwrite", "--path"])
        .arg(&file)
        .output()
        .await
        .context("running openapi-python-client")?;
    ensure!(
        output.status.success(),
        "openapi-python-client could not generate a client:\n{}",
        text(&output)
    );
    let module = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .find(|e| e.path().join("client.py").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .context("the generator wrote no package with a client.py")?;
    Ok((dir.to_path_buf(), module))
}

/// Runs a Python script with the tools' venv and `pythonpath`; its output when it succeeds.
pub async fn python(script: &str, pythonpath: &Path, env: &[(&str, &str)]) -> Result<String> {
    let mut command = tokio::process::Command::new(bin("python")?);
    command.env("PYTHONPATH", pythonpath).arg("-c").arg(script);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().await.context("running python")?;
    ensure!(
        output.status.success(),
        "the script failed:\n{}",
        text(&output)
    );
    Ok(text(&output))
}
