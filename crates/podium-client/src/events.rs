//! `podium events`: the server's event stream (`GET /v1/events`), one JSON object a line.

use clap::Args;

use super::client::Client;
use super::names::Named;

#[derive(Debug, Args)]
pub(super) struct EventsArgs {
    /// Only these kinds, comma-separated: claim, host, operation.
    #[arg(long)]
    kind: Option<String>,
    /// Only the events of this claim, of its host and of its operations.
    #[arg(long)]
    claim: Option<String>,
    /// Only the events of this host (a name or an id) and of its operations.
    #[arg(long)]
    host: Option<String>,
    /// Start after this event (its `seq`) instead of with the next change.
    #[arg(long)]
    after: Option<i64>,
}

impl EventsArgs {
    /// The host it was given, which may be a name.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        self.host
            .as_mut()
            .map(|h| (Named::Host, h))
            .into_iter()
            .collect()
    }
}

pub(super) async fn run(url: Option<&str>, args: EventsArgs) -> anyhow::Result<()> {
    let EventsArgs {
        kind,
        claim,
        host,
        after,
    } = args;
    let c = Client::from_env(url)?;
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (key, value) in [("kind", kind), ("claim", claim), ("host", host)] {
        if let Some(value) = value {
            query.append_pair(key, &value);
        }
    }
    if let Some(after) = after {
        query.append_pair("after", &after.to_string());
    }
    let mut events = c.events(&format!("/v1/events?{}", query.finish())).await?;
    loop {
        let event = events.next().await?;
        println!("{}", serde_json::to_string(&event.data)?);
    }
}
