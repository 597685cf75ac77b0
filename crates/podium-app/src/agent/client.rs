//! Podium's calls to a deploy agent's API (IPA's `/v1/commands/`): only at the address Podium
//! gave the host's ramdisk, over TLS with exactly the certificate the agent announced, with the
//! agent's token.

use std::time::Duration;

use serde_json::Value;

use crate::error::Error;
use podium_types::Secret;

/// How long one call to an agent may take (a command started, or its status read).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Where Podium calls the agent: `https://{address}:{port}`, the port the agent announced in
/// `callback_url` and the address Podium gave the host. A `callback_url` naming any other
/// address, or not `https`, is refused, naming the field.
pub(crate) fn agent_url(address: &str, callback_url: &str) -> Result<url::Url, Error> {
    let invalid = |message: String| Error::Invalid {
        field: Some("callback_url".into()),
        message,
    };
    let announced = url::Url::parse(callback_url)
        .map_err(|e| invalid(format!("`callback_url` is not a URL: {e}")))?;
    if announced.scheme() != "https" {
        return Err(invalid(
            "the agent must serve its API over TLS (`https`), as it does at API version 1.68"
                .into(),
        ));
    }
    let given: std::net::IpAddr = address
        .parse()
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored agent address {address}: {e}")))?;
    let same = match announced.host() {
        Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip) == given,
        Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip) == given,
        _ => false,
    };
    if !same {
        return Err(invalid(format!(
            "the agent announced `{}`, not the address Podium gave this host's ramdisk; Podium \
             calls agents at that address only",
            announced.host_str().unwrap_or("")
        )));
    }
    let port = announced.port().unwrap_or(443);
    let host = match given {
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    url::Url::parse(&format!("https://{host}:{port}/"))
        .map_err(|e| Error::Internal(anyhow::anyhow!("agent URL: {e}")))
}

/// A connection to one agent.
pub(crate) struct AgentClient {
    base: url::Url,
    token: Secret,
    http: reqwest::Client,
}

/// A command the agent runs or ran, as IPA reports it.
#[derive(Clone, Debug, serde::Deserialize)]
pub(crate) struct Command {
    pub id: String,
    pub command_name: String,
    /// `RUNNING`, `SUCCEEDED` or `FAILED`.
    pub command_status: String,
    #[serde(default)]
    pub command_error: Option<Value>,
    #[serde(default)]
    pub command_result: Option<Value>,
}

impl Command {
    pub(crate) fn running(&self) -> bool {
        self.command_status == "RUNNING"
    }

    pub(crate) fn succeeded(&self) -> bool {
        self.command_status == "SUCCEEDED"
    }

    /// What a failed command said: its error's message (IPA's `details`, else `message`).
    pub(crate) fn error_message(&self) -> String {
        let error = self.command_error.as_ref();
        error
            .and_then(|e| e.get("details").or_else(|| e.get("message")))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| error.map(Value::to_string))
            .unwrap_or_else(|| format!("{} ended {}", self.command_name, self.command_status))
    }
}

/// Why a call to an agent failed, in words for an operation's error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AgentError {
    #[error("the agent could not be reached: {0}")]
    Unreachable(String),
    #[error("the agent answered {status}: {message}")]
    Refused { status: u16, message: String },
    #[error("the agent's answer is not what IPA sends: {0}")]
    Malformed(String),
}

impl AgentClient {
    /// A client of the agent at `base` that trusts only `certificate` (PEM).
    pub(crate) fn new(base: &url::Url, certificate: &str, token: Secret) -> Result<Self, Error> {
        let invalid = |message: String| Error::Invalid {
            field: Some("agent_verify_ca".into()),
            message,
        };
        let pin = podium_runtime::certificate_sha256(certificate).map_err(invalid)?;
        let http = podium_runtime::pinned_client(&pin, CALL_TIMEOUT)
            .map_err(|e| invalid(format!("the certificate cannot be used: {e}")))?;
        Ok(AgentClient {
            base: base.clone(),
            token,
            http,
        })
    }

    /// The commands the agent ran and runs (`GET /v1/commands/`): a call that needs the token
    /// and changes nothing, so it proves the address, the certificate and the token.
    pub(crate) async fn commands(&self) -> Result<Vec<Value>, AgentError> {
        let answer = self
            .call(reqwest::Method::GET, "v1/commands/", None)
            .await?;
        answer
            .get("commands")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| AgentError::Malformed("no `commands` list".into()))
    }

    /// Starts a command (`POST /v1/commands/`): the agent answers at once, the command
    /// `RUNNING` for one that takes time (a deploy or clean step).
    pub(crate) async fn start(&self, name: &str, params: Value) -> Result<Command, AgentError> {
        let body = serde_json::json!({"name": name, "params": params});
        let answer = self
            .call(reqwest::Method::POST, "v1/commands/", Some(&body))
            .await?;
        serde_json::from_value(answer).map_err(|e| AgentError::Malformed(e.to_string()))
    }

    /// A command's status (`GET /v1/commands/{id}`).
    pub(crate) async fn command(&self, id: &str) -> Result<Command, AgentError> {
        let answer = self
            .call(reqwest::Method::GET, &format!("v1/commands/{id}"), None)
            .await?;
        serde_json::from_value(answer).map_err(|e| AgentError::Malformed(e.to_string()))
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, AgentError> {
        let mut url = self
            .base
            .join(path)
            .map_err(|e| AgentError::Malformed(e.to_string()))?;
        url.query_pairs_mut()
            .append_pair("agent_token", self.token.expose());
        let mut request = self.http.request(method, url);
        if let Some(body) = body {
            request = request.json(body);
        }
        // The URL carries the token: no error below may show it.
        let response = request
            .send()
            .await
            .map_err(|e| AgentError::Unreachable(describe(&e.without_url())))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| AgentError::Unreachable(describe(&e.without_url())))?;
        if !status.is_success() {
            return Err(AgentError::Refused {
                status: status.as_u16(),
                message: text.chars().take(300).collect(),
            });
        }
        serde_json::from_str(&text).map_err(|e| AgentError::Malformed(e.to_string()))
    }
}

/// An error and its causes, one line (reqwest's own message stops at "error sending request").
fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_called_at_the_address_podium_gave_it_only() {
        assert_eq!(
            agent_url("198.51.100.10", "https://198.51.100.10:9999")
                .unwrap()
                .as_str(),
            "https://198.51.100.10:9999/"
        );
        for (announced, why) in [
            ("https://198.51.100.11:9999", "not the address"),
            ("https://example.org:9999", "not the address"),
            ("http://198.51.100.10:9999", "TLS"),
            ("198.51.100.10:9999", "not a URL"),
            ("nonsense", "not a URL"),
        ] {
            let Err(Error::Invalid { field, message }) = agent_url("198.51.100.10", announced)
            else {
                panic!("{announced} accepted");
            };
            assert_eq!(field.as_deref(), Some("callback_url"));
            assert!(message.contains(why), "{announced}: {message}");
        }
    }
}
