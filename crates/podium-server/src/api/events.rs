//! `GET /v1/events`: changes of claims, hosts and operations as server-sent events.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;

use podium_types::ErrorCode;
use serde::Serialize;

use super::error::{ApiResult, ErrorBody, ErrorDetail};
use super::extract::{AnyCaller, ApiQuery};
use podium_app::app::Podium;
use podium_app::error::Error;
use podium_app::events::{EventReader, EventStart};
use podium_types::requests::EventsQuery;
use podium_types::views::{EventView, ReadyData, ResetData};
use podium_types::{EventFilter, EventKind};

/// How long a stream waits for events before it checks its token again (a revoked or expired
/// token ends the stream).
const RECHECK: Duration = Duration::from_secs(10);

/// How often an idle stream sends a comment, so that proxies and clients keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Changes of claims, hosts and operations as server-sent events, in the order they were
/// committed: each event's `event` is its kind (`claim`, `host`, `operation`), its `id` its
/// `seq`, its `data` an `EventView` with the state the change left. An admin's token sees every
/// change, a tenant's those of its claims, of the hosts bound to them and of the operations run
/// for them.
///
/// The stream starts with the next change, or after the event `Last-Event-ID` (or `?after=`)
/// names: a client that reconnects with the last id it saw misses nothing. Its first event,
/// `ready`, carries the id it starts after, so that holds even before any change came. Events are kept for a
/// day; a client resuming from before what is kept first gets a `reset` event (list again). A
/// revoked or expired token ends the stream, as does the server's shutdown (reconnect). One
/// token holds at most `--event-streams-per-token` streams open in one process (32 by default);
/// one more is a 429 with `Retry-After`.
#[utoipa::path(get, path = "/v1/events", tag = "events",
    params(EventsQuery,
        ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this event")),
    responses((status = 200, description = "A stream of server-sent events (`text/event-stream`); each is one of `StreamEvent`'s: its `event` field says which, its `data` is a string holding the JSON its `contentSchema` describes",
        content_type = "text/event-stream", body = StreamEvent),
        (status = 404, body = ErrorBody, description = "A claim, host or operation the query names does not exist, or is not the caller's"),
        (status = 429, body = ErrorBody, description = "The token holds as many streams open in this process as it may (`--event-streams-per-token`, 32 by default): close one; `Retry-After` says when to ask again",
            headers(("Retry-After" = u32, description = "Seconds to wait before asking again")))),
    security(("bearer" = [])))]
pub(super) async fn events(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let after = match headers.get("last-event-id") {
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .ok_or_else(|| Error::invalid("Last-Event-ID", "must be an event's seq"))?,
        ),
        None => q.after,
    };
    let kinds = match q.kind.as_deref() {
        None => Vec::new(),
        Some(list) => list
            .split(',')
            .map(|k| {
                k.trim().parse::<EventKind>().map_err(|_| {
                    Error::invalid(
                        "kind",
                        "must be `claim`, `host` or `operation`, comma-separated",
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let filter = EventFilter {
        tenant: None,
        claim: q.claim,
        host: q.host,
        operation: q.operation,
        kinds,
    };
    let (reader, start) = podium.events_watch(&caller, filter, after).await?;
    let authorization = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let stream = Watch {
        podium,
        reader,
        authorization,
        pending: StreamEvent::reset(&start)
            .into_iter()
            .chain([StreamEvent::ready(&start)])
            .map(StreamEvent::sent)
            .collect(),
        ended: false,
    };
    Ok(Sse::new(futures::stream::unfold(stream, Watch::next))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// A watcher's stream: events read and not yet sent, and how to read more.
struct Watch {
    podium: Podium,
    reader: EventReader,
    authorization: Option<String>,
    pending: VecDeque<Event>,
    ended: bool,
}

impl Watch {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Watch)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            if self.ended {
                return None;
            }
            if let Err(e) = self
                .podium
                .authenticate(self.authorization.as_deref())
                .await
            {
                self.ended = true;
                self.pending.push_back(
                    StreamEvent::error(ErrorCode::Unauthenticated, &e.to_string()).sent(),
                );
                continue;
            }
            match self.podium.events_next(&mut self.reader, RECHECK).await {
                Ok(Some(events)) => self
                    .pending
                    .extend(events.into_iter().map(|e| StreamEvent::change(e).sent())),
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!(error = %e, "an event stream ends: cannot read events");
                    self.ended = true;
                    self.pending.push_back(
                        StreamEvent::error(ErrorCode::Internal, "cannot read events; reconnect")
                            .sent(),
                    );
                }
            }
        }
    }
}

/// One server-sent event of `GET /v1/events`, as a client reads it: `event` says which kind,
/// `id` is what a client resumes after (`Last-Event-ID`), `data` is a string of JSON (on the
/// wire a field's value is text: the document says so, [`document_stream_event`]). The
/// stream is `reset` (only where it resumed from before what is kept), then `ready`, then
/// changes (`claim`, `host`, `operation`), and `error` where it ends for a reason.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(tag = "event", rename_all = "lowercase")]
pub(super) enum StreamEvent {
    /// Where the stream starts: after the event `data.after` (also its `id`).
    Ready { id: String, data: ReadyData },
    /// The stream resumed from before what is kept: the events up to `data.forgotten_through`
    /// are gone, so list what you follow again.
    Reset { id: String, data: ResetData },
    /// A change of a claim; `id` is its `data.seq`.
    Claim { id: String, data: EventView },
    /// A change of a host; `id` is its `data.seq`.
    Host { id: String, data: EventView },
    /// A change of an operation; `id` is its `data.seq`.
    Operation { id: String, data: EventView },
    /// Why the stream ends (a revoked or expired token, `unauthenticated`; events that cannot
    /// be read, `internal`): the API's error body. Nothing follows it.
    Error { data: ErrorBody },
}

impl StreamEvent {
    fn change(data: EventView) -> StreamEvent {
        let id = data.seq.to_string();
        match data.kind {
            EventKind::Claim => StreamEvent::Claim { id, data },
            EventKind::Host => StreamEvent::Host { id, data },
            EventKind::Operation => StreamEvent::Operation { id, data },
        }
    }

    /// The `ready` event that starts every stream: its `id` is where the stream starts, so that
    /// a client that loses the connection before any change came resumes from there, not from
    /// the next change after it reconnects.
    fn ready(start: &EventStart) -> StreamEvent {
        StreamEvent::Ready {
            id: start.after.to_string(),
            data: ReadyData { after: start.after },
        }
    }

    /// The `reset` event that starts a stream resumed from before what is kept.
    fn reset(start: &EventStart) -> Option<StreamEvent> {
        let through = start.forgotten_through?;
        Some(StreamEvent::Reset {
            id: through.to_string(),
            data: ResetData {
                forgotten_through: through,
                message: format!(
                    "the events up to {through} are forgotten (they are kept for a while, a \
                     day by default): read the claims, hosts and operations again, then follow \
                     this stream"
                ),
            },
        })
    }

    /// The `error` event that ends a stream, with an error body as the API's.
    fn error(code: ErrorCode, message: &str) -> StreamEvent {
        StreamEvent::Error {
            data: ErrorBody {
                error: ErrorDetail {
                    code,
                    message: message.to_owned(),
                    field: None,
                },
            },
        }
    }

    /// The event as sent.
    fn sent(self) -> Event {
        fn json(data: &impl Serialize) -> String {
            serde_json::to_string(data).unwrap_or_else(|_| "{}".into())
        }
        let (name, id, data) = match self {
            StreamEvent::Ready { id, data } => ("ready", Some(id), json(&data)),
            StreamEvent::Reset { id, data } => ("reset", Some(id), json(&data)),
            StreamEvent::Claim { id, data } => ("claim", Some(id), json(&data)),
            StreamEvent::Host { id, data } => ("host", Some(id), json(&data)),
            StreamEvent::Operation { id, data } => ("operation", Some(id), json(&data)),
            StreamEvent::Error { data } => ("error", None, json(&data)),
        };
        let event = Event::default().event(name).data(data);
        match id {
            Some(id) => event.id(id),
            None => event,
        }
    }
}

/// Describes each event's `data` as what the wire carries: a string whose content is JSON
/// (`contentMediaType`), of the schema the type has (`contentSchema`). The derived schema
/// would say `data` is an object, which no client reading the stream receives.
pub(super) fn document_stream_event(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{Object, Schema, Type};
    use utoipa::openapi::{RefOr, extensions::Extensions};

    let Some(RefOr::T(Schema::OneOf(one_of))) = openapi
        .components
        .as_mut()
        .and_then(|c| c.schemas.get_mut("StreamEvent"))
    else {
        return;
    };
    for variant in &mut one_of.items {
        let RefOr::T(Schema::Object(object)) = variant else {
            continue;
        };
        let Some(data) = object.properties.get_mut("data") else {
            continue;
        };
        let content_schema = serde_json::to_value(&*data).expect("a schema serializes");
        let mut text = Object::with_type(Type::String);
        text.content_media_type = "application/json".to_owned();
        text.extensions = Some(Extensions::from_iter([("contentSchema", content_schema)]));
        *data = RefOr::T(Schema::Object(text));
    }
}
