//! The driver's side of a `podium:plugin@0.3.0` exchange (sans-IO since 0.2.0): straight-line async driver code run as
//! a state machine of steps, by replay.
//!
//! A driver method is an `async fn` whose requests are [`Request::send`]`.await`s
//! ([`http`](crate::http)). The host runs a call in steps, each in a fresh instance: a step
//! polls the method's future from the start; a request whose answer an earlier step brought
//! resolves at once, a new one is recorded and stays pending. When the future can go no
//! further, the step answers every new request at once (so `join_all` over a collection's
//! members sends them together) with a state that holds the answers so far and the requests
//! still open. The next step appends the host's answers and replays.
//!
//! Replay needs the method to be deterministic: given the same answers, it sends the same
//! requests. It is, unless it reads a clock or randomness, or keeps something between calls;
//! the native harness ([`testing`](crate::testing)) replays every step twice and fails a
//! method that is not. An answer is matched to a request by the request itself (method, URL,
//! headers, body) and the order of identical requests, not by the order futures are polled in,
//! so fan-out interleaves freely. One case it does not serve: the same request sent in two
//! branches awaited together, where a replay may hand one branch's answer to the other and ask
//! again (a GET read twice; a POST sent twice): send such a request once and share its answer.
//!
//! A log line is a side effect replay would repeat: the state keeps a digest of each line
//! logged, and a replayed line (the same level and words, as often as before) is not sent again.
//!
//! What a call keeps between steps can be the result of a piece of work instead of the answers
//! it took: [`memo`] keeps a result (as JSON) in the state and drops the answers it came from,
//! so a discovery carries its parsed systems, not their payloads, and later steps replay none of
//! that work. The SDK's `collection_members` is one; the bundled Redfish driver keeps every
//! resource it reads as the fields it parsed.
//!
//! The cost: a step re-runs the method from its start, so a call of `n` steps parses its first
//! answers `n` times, and the state carries every answer (a discovery of a thousand systems
//! carries their JSON). The bundled Redfish driver's calls take two to six steps.

/// Await several requests (or driver methods) together, and they are sent in one step:
/// `try_join_all(paths.iter().map(|p| http::get_json::<Value>(p))).await?`.
pub use futures::future::{join_all, try_join_all};
pub use futures::{join, try_join};

use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde::{Deserialize, Serialize};

use crate::http::{HttpError, Method, Request, Response};
use crate::{Error, Result};

/// What one step of a call comes to.
#[derive(Debug, PartialEq)]
pub(crate) enum Step<T> {
    /// Requests for the host to send, and the state to resume with.
    Send(Vec<Request>, Vec<u8>),
    Finished(T),
}

/// A request as the state keeps it (the bindings' types have no serde).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Key {
    method: u8,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// An answer as the state keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Answer {
    Response {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    Denied(String),
    Unreachable(String),
    Timeout(String),
    Tls(String),
    TooLarge(String),
    InvalidRequest(String),
}

/// The state between two steps: every answer so far (but those a finished [`memo`] took), the
/// requests the last step asked for, the digests of the lines logged so far, and the results of
/// the memos finished so far (JSON).
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    answered: Vec<(Key, Answer)>,
    asked: Vec<Key>,
    logged: Vec<u64>,
    memos: Vec<(String, Vec<u8>)>,
}

/// One run of the method: the answers it may take, and what it asked that none answers.
struct Run {
    /// By request: the indexes into `answers` of its answers, in the order they came.
    by_key: HashMap<Key, VecDeque<usize>>,
    answers: Vec<(Key, Answer)>,
    asked: Vec<Key>,
    /// Whether this poll took an answer or asked anything (the executor polls until neither).
    progressed: bool,
    /// Lines logged by earlier steps, by digest: how many times each may go unsent again.
    logged_before: HashMap<u64, usize>,
    /// Every line's digest, this step's and earlier ones'.
    logged: Vec<u64>,
    /// Log nothing (the native harness's second run of a step, which checks determinism).
    muted: bool,
    /// The results of the memos finished, by key: earlier steps' and this one's.
    memos: HashMap<String, Vec<u8>>,
    /// The answers taken by each memo being polled, innermost last.
    frames: Vec<Vec<usize>>,
    /// The answers taken by memos that finished: the next state leaves them out.
    taken: std::collections::HashSet<usize>,
    /// How many memos of each key this run came to.
    memo_seen: HashMap<String, usize>,
}

thread_local! {
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
}

/// Runs one step of `method`: the first (`state` none) or the next, with the answers to the
/// requests the last step asked for.
pub(crate) fn step<T>(
    state: Option<&[u8]>,
    answers: Vec<std::result::Result<Response, HttpError>>,
    method: impl Future<Output = Result<T>>,
) -> Step<Result<T>> {
    step_with(state, answers, method, false)
}

/// [`step`], logging nothing when `muted`.
pub(crate) fn step_with<T>(
    state: Option<&[u8]>,
    answers: Vec<std::result::Result<Response, HttpError>>,
    method: impl Future<Output = Result<T>>,
    muted: bool,
) -> Step<Result<T>> {
    let state = match state.map(postcard::from_bytes::<State>).transpose() {
        Ok(state) => state.unwrap_or_default(),
        Err(e) => {
            return Step::Finished(Err(Error::Internal(format!(
                "the host resumed this call with a state it cannot read: {e}"
            ))));
        }
    };
    if state.asked.len() != answers.len() {
        return Step::Finished(Err(Error::Internal(format!(
            "the host answered {} requests where this call asked {}",
            answers.len(),
            state.asked.len()
        ))));
    }
    let mut answered = state.answered;
    answered.extend(
        state
            .asked
            .into_iter()
            .zip(answers.into_iter().map(Answer::from)),
    );
    let mut by_key: HashMap<Key, VecDeque<usize>> = HashMap::new();
    for (i, (key, _)) in answered.iter().enumerate() {
        by_key.entry(key.clone()).or_default().push_back(i);
    }
    let mut logged_before: HashMap<u64, usize> = HashMap::new();
    for digest in &state.logged {
        *logged_before.entry(*digest).or_default() += 1;
    }
    let previous = RUN.with(|r| {
        r.borrow_mut().replace(Run {
            by_key,
            answers: answered,
            asked: Vec::new(),
            progressed: false,
            logged_before,
            logged: state.logged,
            muted,
            memos: state.memos.into_iter().collect(),
            frames: Vec::new(),
            taken: std::collections::HashSet::new(),
            memo_seen: HashMap::new(),
        })
    });
    assert!(previous.is_none(), "a step runs inside another step");
    /// Takes the run down whatever becomes of the step (a driver's panic, caught by a test,
    /// leaves no run behind).
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            let _ = RUN.try_with(|r| r.borrow_mut().take());
        }
    }
    let clear = Clear;
    let outcome = poll_to_rest(method);
    let run = RUN
        .with(|r| r.borrow_mut().take())
        .expect("the run is in place");
    drop(clear);
    match outcome {
        Some(result) => Step::Finished(result),
        None if run.asked.is_empty() => Step::Finished(Err(Error::Internal(
            "the driver waits on something other than a request to its endpoint (a future the \
             SDK does not drive)"
                .into(),
        ))),
        None => {
            let requests = run.asked.iter().map(Key::request).collect();
            let taken = run.taken;
            let answered = run
                .answers
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !taken.contains(i))
                .map(|(_, answer)| answer)
                .collect();
            let mut memos: Vec<(String, Vec<u8>)> = run.memos.into_iter().collect();
            // The same state for the same step, whatever the map's order.
            memos.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            let state = State {
                answered,
                asked: run.asked,
                logged: run.logged,
                memos,
            };
            let bytes = postcard::to_allocvec(&state).expect("the state serializes");
            Step::Send(requests, bytes)
        }
    }
}

/// Polls `method` until it is done or makes no more progress: nothing wakes it (every answer
/// it can have is already here), so it is polled again only while a poll moved it on.
fn poll_to_rest<T>(method: impl Future<Output = T>) -> Option<T> {
    let mut method = pin!(method);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        RUN.with(|r| r.borrow_mut().as_mut().expect("in a run").progressed = false);
        if let Poll::Ready(value) = method.as_mut().poll(&mut cx) {
            return Some(value);
        }
        if !RUN.with(|r| r.borrow().as_ref().expect("in a run").progressed) {
            return None;
        }
    }
}

/// Runs `work` once for the whole call, its result kept in the call's state (as JSON) in place
/// of the answers it took: later steps take the result and replay none of it. What a driver
/// keeps of a large discovery is then what it parsed (a system's few fields), not the JSON it
/// came from, and later steps do not parse it again.
///
/// `key` names the work within the call (`"system:/redfish/v1/Systems/1"`): the n-th memo of a
/// key in the call is the n-th result kept under it, so two different pieces of work must not
/// share one, and the same work done again (a resource read again to see it change) is done
/// again. An error is not kept (the
/// work runs again at the next step, on the answers it took, which are kept then).
pub async fn memo<T, F>(key: impl Into<String>, work: F) -> Result<T>
where
    T: Serialize + serde::de::DeserializeOwned,
    F: Future<Output = Result<T>>,
{
    // The n-th memo of a key in the call is the n-th piece of work: reading a resource again
    // (to see it change) is not answered by the first reading.
    let key = key.into();
    let (key, kept) = RUN.with(|r| {
        let mut run = r.borrow_mut();
        let Some(run) = run.as_mut() else {
            return (key, None);
        };
        let seen = run.memo_seen.entry(key.clone()).or_default();
        *seen += 1;
        let key = format!("{key}#{seen}");
        let kept = run.memos.get(&key).cloned();
        (key, kept)
    });
    if let Some(bytes) = kept {
        return serde_json::from_slice(&bytes).map_err(|e| {
            Error::Internal(format!("memo {key}: the result kept cannot be read: {e}"))
        });
    }
    let mut taken = Vec::new();
    let result = Framed {
        work: std::pin::pin!(work),
        taken: &mut taken,
    }
    .await;
    if let Ok(value) = &result {
        let bytes = serde_json::to_vec(value)
            .map_err(|e| Error::Internal(format!("memo {key}: the result cannot be kept: {e}")))?;
        RUN.with(|r| {
            if let Some(run) = r.borrow_mut().as_mut() {
                run.taken.extend(taken);
                run.memos.insert(key, bytes);
            }
        });
    }
    result
}

/// A memo's work, polled within a frame that records the answers it takes.
struct Framed<'a, F> {
    work: std::pin::Pin<&'a mut F>,
    taken: &'a mut Vec<usize>,
}

impl<F: Future> Future for Framed<'_, F> {
    type Output = F::Output;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let in_run = RUN.with(|r| {
            r.borrow_mut()
                .as_mut()
                .map(|run| run.frames.push(Vec::new()))
                .is_some()
        });
        let poll = self.work.as_mut().poll(cx);
        if in_run {
            let frame = RUN.with(|r| r.borrow_mut().as_mut().and_then(|run| run.frames.pop()));
            self.taken.extend(frame.into_iter().flatten());
        }
        poll
    }
}

/// Whether a line is to be logged: outside a driver's call always; in one, unless an earlier
/// step of it logged the same line (as often).
pub(crate) fn first_time(level: crate::log::Level, message: &str) -> bool {
    RUN.with(|r| {
        let mut run = r.borrow_mut();
        let Some(run) = run.as_mut() else {
            return true;
        };
        let digest = {
            use std::hash::{Hash, Hasher};
            // Fixed keys: the same digest in every step of the call.
            let mut hasher = std::hash::DefaultHasher::new();
            (level as u8).hash(&mut hasher);
            message.hash(&mut hasher);
            hasher.finish()
        };
        match run.logged_before.get_mut(&digest) {
            Some(left) if *left > 0 => {
                *left -= 1;
                false
            }
            _ => {
                run.logged.push(digest);
                !run.muted
            }
        }
    })
}

/// A request's answer, from this run's answers or, if none, the next step.
#[derive(Debug)]
pub(crate) struct Send {
    /// Until first polled.
    key: Option<Key>,
}

impl Send {
    pub(crate) fn new(request: &Request) -> Send {
        Send {
            key: Some(Key::of(request)),
        }
    }
}

impl Future for Send {
    type Output = std::result::Result<Response, HttpError>;

    fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(key) = self.key.take() else {
            // Asked already: its answer comes with the next step.
            return Poll::Pending;
        };
        RUN.with(|r| {
            let mut run = r.borrow_mut();
            let run = run.as_mut().unwrap_or_else(|| {
                panic!(
                    "podium_plugin: a request was sent outside a driver call (run the driver \
                     through its export, or testing::Host)"
                )
            });
            run.progressed = true;
            match run.by_key.get_mut(&key).and_then(VecDeque::pop_front) {
                Some(i) => {
                    for frame in &mut run.frames {
                        frame.push(i);
                    }
                    Poll::Ready(run.answers[i].1.clone().into())
                }
                None => {
                    run.asked.push(key);
                    Poll::Pending
                }
            }
        })
    }
}

impl Key {
    fn of(request: &Request) -> Key {
        Key {
            method: match request.method {
                Method::Get => 0,
                Method::Head => 1,
                Method::Post => 2,
                Method::Put => 3,
                Method::Patch => 4,
                Method::Delete => 5,
            },
            url: request.url.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
        }
    }

    fn request(&self) -> Request {
        Request {
            method: match self.method {
                0 => Method::Get,
                1 => Method::Head,
                2 => Method::Post,
                3 => Method::Put,
                4 => Method::Patch,
                _ => Method::Delete,
            },
            url: self.url.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
        }
    }
}

impl From<std::result::Result<Response, HttpError>> for Answer {
    fn from(answer: std::result::Result<Response, HttpError>) -> Answer {
        match answer {
            Ok(r) => Answer::Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
            },
            Err(HttpError::Denied(m)) => Answer::Denied(m),
            Err(HttpError::Unreachable(m)) => Answer::Unreachable(m),
            Err(HttpError::Timeout(m)) => Answer::Timeout(m),
            Err(HttpError::Tls(m)) => Answer::Tls(m),
            Err(HttpError::TooLarge(m)) => Answer::TooLarge(m),
            Err(HttpError::InvalidRequest(m)) => Answer::InvalidRequest(m),
        }
    }
}

impl From<Answer> for std::result::Result<Response, HttpError> {
    fn from(answer: Answer) -> Self {
        match answer {
            Answer::Response {
                status,
                headers,
                body,
            } => Ok(Response {
                status,
                headers,
                body,
            }),
            Answer::Denied(m) => Err(HttpError::Denied(m)),
            Answer::Unreachable(m) => Err(HttpError::Unreachable(m)),
            Answer::Timeout(m) => Err(HttpError::Timeout(m)),
            Answer::Tls(m) => Err(HttpError::Tls(m)),
            Answer::TooLarge(m) => Err(HttpError::TooLarge(m)),
            Answer::InvalidRequest(m) => Err(HttpError::InvalidRequest(m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Request;
    use crate::testing::Host;

    /// Answers every request with a 200 whose body is its URL.
    fn echo(requests: &[Request]) -> Vec<std::result::Result<Response, HttpError>> {
        requests
            .iter()
            .map(|r| {
                Ok(Response {
                    status: 200,
                    headers: Vec::new(),
                    body: r.url.clone().into_bytes(),
                })
            })
            .collect()
    }

    /// Runs `method` step by step with `answer`, and answers the outcome and the requests of
    /// each step.
    fn drive<T, F: Future<Output = Result<T>>>(
        method: impl Fn() -> F,
        answer: impl Fn(&[Request]) -> Vec<std::result::Result<Response, HttpError>>,
    ) -> (Result<T>, Vec<Vec<String>>) {
        let mut asked = Vec::new();
        let (mut state, mut answers) = (None::<Vec<u8>>, Vec::new());
        loop {
            match step(state.as_deref(), answers, method()) {
                Step::Finished(result) => return (result, asked),
                Step::Send(requests, next) => {
                    asked.push(requests.iter().map(|r| r.url.clone()).collect());
                    answers = answer(&requests);
                    state = Some(next);
                }
            }
        }
    }

    fn body(response: Response) -> String {
        String::from_utf8(response.body).unwrap()
    }

    async fn chain(name: &str) -> Result<String> {
        let first = Request::get(format!("/{name}/1")).send().await.unwrap();
        let second = Request::get(format!("{}/2", body(first)))
            .send()
            .await
            .unwrap();
        Ok(body(second))
    }

    #[test]
    fn branches_awaited_together_send_together_whatever_order_they_resume_in() {
        let (result, asked) = drive(
            || async {
                let (x, y) = try_join!(chain("x"), chain("y"))?;
                Ok(format!("{x} {y}"))
            },
            echo,
        );
        assert_eq!(result.unwrap(), "/x/1/2 /y/1/2");
        assert_eq!(
            asked,
            [vec!["/x/1", "/y/1"], vec!["/x/1/2", "/y/1/2"]],
            "two steps of two requests each"
        );
    }

    #[test]
    fn the_same_request_twice_takes_its_answers_in_turn() {
        let answers = std::cell::Cell::new(0);
        let (result, asked) = drive(
            || async {
                let a = Request::get("/same").send().await.unwrap();
                let b = Request::get("/same").send().await.unwrap();
                Ok((body(a), body(b)))
            },
            |requests| {
                answers.set(answers.get() + 1);
                requests
                    .iter()
                    .map(|_| {
                        Ok(Response {
                            status: 200,
                            headers: Vec::new(),
                            body: format!("answer {}", answers.get()).into_bytes(),
                        })
                    })
                    .collect()
            },
        );
        assert_eq!(result.unwrap(), ("answer 1".into(), "answer 2".into()));
        assert_eq!(asked, [vec!["/same"], vec!["/same"]]);
    }

    #[test]
    fn a_line_logged_before_a_request_is_logged_once_however_often_replayed() {
        let host = Host::new();
        host.run(|| {
            let (result, asked) = drive(
                || async {
                    crate::log::info("before");
                    chain("x").await?;
                    crate::log::info("after");
                    Ok(())
                },
                echo,
            );
            result.unwrap();
            assert_eq!(asked.len(), 2, "three runs of the method");
        });
        let lines: Vec<String> = host.logs().into_iter().map(|(_, line)| line).collect();
        assert_eq!(lines, ["before", "after"]);
    }

    #[test]
    fn waiting_on_anything_but_a_request_is_an_internal_error() {
        let (result, asked) = drive(
            || async {
                std::future::pending::<()>().await;
                Ok(())
            },
            echo,
        );
        assert!(
            matches!(&result, Err(Error::Internal(m)) if m.contains("other than a request")),
            "{result:?}"
        );
        assert!(asked.is_empty());
    }

    #[test]
    fn answers_that_do_not_match_the_requests_are_an_internal_error() {
        let Step::Send(requests, state) = step(None, Vec::new(), chain("x")) else {
            panic!("the first step asks");
        };
        let mut answers = echo(&requests);
        answers.extend(echo(&requests));
        let Step::Finished(Err(Error::Internal(message))) = step(Some(&state), answers, chain("x"))
        else {
            panic!("two answers to one request accepted");
        };
        assert!(
            message.contains("answered 2 requests where this call asked 1"),
            "{message}"
        );
    }

    #[test]
    fn a_memo_keeps_its_result_in_place_of_its_answers_and_is_not_replayed() {
        let runs = std::cell::Cell::new(0);
        let work = || async {
            runs.set(runs.get() + 1);
            chain("x").await
        };
        let mut states = Vec::new();
        let (mut state, mut answers) = (None::<Vec<u8>>, Vec::new());
        let result = loop {
            let method = async {
                let kept = memo("chain:x", work()).await?;
                let after = Request::get("/after").send().await.unwrap();
                Ok(format!("{kept} {}", body(after)))
            };
            match step(state.as_deref(), answers, method) {
                Step::Finished(result) => break result,
                Step::Send(requests, next) => {
                    states.push(postcard::from_bytes::<State>(&next).unwrap());
                    answers = echo(&requests);
                    state = Some(next);
                }
            }
        };
        assert_eq!(result.unwrap(), "/x/1/2 /after");
        // Asked /x/1, asked /x/1/2, finished: three runs; the fourth step (after /after) took the
        // kept result (without the memo the work would have run four times).
        assert_eq!(runs.get(), 3, "the work was not replayed once it finished");
        let last = states.last().unwrap();
        assert!(
            last.answered.is_empty(),
            "the memo's two answers left the state: {:?}",
            last.answered
        );
        assert_eq!(last.memos.len(), 1);
        assert_eq!(last.memos[0].1, br#""/x/1/2""#);
    }

    #[test]
    fn the_same_memo_key_twice_is_two_pieces_of_work() {
        let (result, asked) = drive(
            || async {
                let read = || async {
                    let r = Request::get("/state").send().await.unwrap();
                    Ok(body(r))
                };
                let first = memo("state", read()).await?;
                let second = memo("state", read()).await?;
                Ok((first, second))
            },
            {
                let n = std::cell::Cell::new(0);
                move |requests: &[Request]| {
                    n.set(n.get() + 1);
                    requests
                        .iter()
                        .map(|_| {
                            Ok(Response {
                                status: 200,
                                headers: Vec::new(),
                                body: format!("reading {}", n.get()).into_bytes(),
                            })
                        })
                        .collect()
                }
            },
        );
        assert_eq!(
            result.unwrap(),
            ("reading 1".to_owned(), "reading 2".to_owned())
        );
        assert_eq!(asked, [vec!["/state"], vec!["/state"]]);
    }
}
