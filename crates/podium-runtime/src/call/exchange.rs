//! A call to a `podium:plugin@0.2.0` or `@0.3.0` driver: an exchange of steps. The host speaks
//! 0.3.0's; a 0.2.0 driver is asked in its own terms (`exchange_0_2.rs`).
//!
//! The driver never waits on its BMC. Each step runs in a fresh instance (a slot of the pool,
//! taken for that step only) and answers either the requests it wants sent with an opaque state,
//! or the call's outcome. Between steps the host sends the requests through the call's one
//! [`HttpGrant`] (the same checks, credentials, budget and deadline as 0.1.0's `http` import),
//! at most the endpoint's `parallel_requests` at once (by default the runtime's
//! [`RuntimeConfig::parallel_requests`](crate::RuntimeConfig)), and resumes the
//! driver with the state and the answers in order. An exchange waiting on its BMC holds its
//! state and its sockets, no instance and no stack.
//!
//! The limits of a 0.1.0 call hold for the exchange as a whole: one deadline from its first
//! instance (a later step that cannot have an instance before it fails at the deadline), one
//! budget of requests (which bounds the steps too: no more than it has requests), one log
//! budget; and for each step as they hold for one call: the memory limit, the copy limit. The
//! answers of one step may not add up to more than the memory limit: the driver could not take
//! them, so the host stops reading there. A step that asks for nothing is malformed. The whole
//! call holds one of the process's `max_calls` permits.

use std::time::Instant;

use futures::StreamExt;

use super::super::bindings::{
    driver_0_2, driver_0_3, wit_exchange as wx, wit_exchange_0_2, wit_http, wit_types,
};
use super::super::http::BudgetSpent;
use super::super::imports::{LOG_BUDGET, PluginState};
use super::super::{Plugin, Pre, Runtime};
use super::{Bounds, CallContext, CallError, Prepared, exchange_0_2, explain};

/// The outcome a call finished with, and the plugin's label.
pub(super) type Finished = (String, Result<wx::Outcome, wit_types::Error>);

/// The answers to a step's requests, in their order.
type Answers = Vec<Result<wit_http::Response, wit_http::HttpError>>;

/// Runs `call` on a 0.2.0 or 0.3.0 driver to its end.
pub(super) async fn run(
    runtime: &Runtime,
    plugin: &Plugin,
    context: CallContext,
    bounds: Bounds,
    call: wx::Call,
) -> Result<Finished, CallError> {
    let started = Instant::now();
    let outcome = steps(runtime, plugin, context, bounds, &call)
        .await
        .and_then(|finished| checked(finished, &call));
    runtime.inner.ended.one();
    runtime.inner.metrics.call(
        &plugin.info().name,
        call_name(&call),
        started.elapsed(),
        outcome.as_ref().err(),
    );
    outcome
}

async fn steps(
    runtime: &Runtime,
    plugin: &Plugin,
    context: CallContext,
    bounds: Bounds,
    call: &wx::Call,
) -> Result<Finished, CallError> {
    let label = plugin.label();
    let pre = match &plugin.inner.pre {
        Pre::Exchange(pre) => Exchanger::V0_3(pre),
        Pre::Exchange0_2(pre) => match exchange_0_2::call(call) {
            Some(call) => Exchanger::V0_2(pre, call),
            None => {
                return Ok((
                    label,
                    Err(wit_types::Error::Unsupported(format!(
                        "{}: a podium:plugin@0.2.0 driver has none",
                        call_name(call)
                    ))),
                ));
            }
        },
        _ => {
            return Err(CallError::WrongWorld {
                plugin: label,
                expected: "hardware-driver (podium:plugin@0.2.0 or later)",
            });
        }
    };
    let memory_limit = runtime.inner.config.memory_limit;
    let parallel = context
        .endpoint
        .as_ref()
        .and_then(|e| e.parallel_requests)
        .unwrap_or(runtime.inner.config.parallel_requests)
        .max(1);
    let (limit, budget, copy_limit) = runtime.bounds(bounds);
    let _call = runtime.call_permit(&label).await?;
    // The first step's slot starts the deadline, as a 0.1.0 call's instance does.
    let mut slot = Some(runtime.slot(&label, None).await?);
    let deadline = Instant::now() + limit;
    let share = super::share_of(&label, context.endpoint.as_ref());
    let grant = runtime.grant(&label, context.endpoint, deadline, budget)?;
    let mut resume: Option<(Vec<u8>, Answers)> = None;
    let mut log_budget = LOG_BUDGET;
    let mut steps = 0u64;
    loop {
        steps += 1;
        if let Some(limit) = budget
            && steps > limit.requests
        {
            return Err(CallError::HttpBudget {
                plugin: label,
                spent: BudgetSpent {
                    limit,
                    requests: steps,
                    bytes: 0,
                },
            });
        }
        let slot = match slot.take() {
            Some(slot) => slot,
            // Past the first step the call has begun: waiting for an instance is its time.
            None => match runtime.slot(&label, Some(deadline)).await {
                Ok(slot) => slot,
                Err(_) => {
                    return Err(CallError::Deadline {
                        plugin: label,
                        limit,
                    });
                }
            },
        };
        let mut store = runtime.store(
            &label,
            runtime.hold(share.clone(), deadline),
            context.config.clone(),
            None,
            None,
            copy_limit,
        );
        store.data_mut().log_budget = log_budget;
        // Boxed, for the step alone: an exchange's future is what it holds while its requests
        // wait on the BMC, not the instance's (about 1.7 KiB instead of 4.5 KiB).
        let step = Box::pin(Prepared::guard(
            &label,
            limit,
            memory_limit,
            deadline,
            pre.step(&mut store, call, resume.take()),
        ))
        .await;
        if store.data().limiter.memory_exceeded {
            return Err(CallError::MemoryLimit {
                plugin: label,
                limit: memory_limit,
            });
        }
        log_budget = store.data().log_budget;
        let step = step.map_err(|e| explain(&store, copy_limit, e))?;
        // The instance and its slot go before a single request is sent.
        drop(store);
        drop(slot);
        let pending = match step {
            wx::Step::Finished(result) => return Ok((label, result)),
            wx::Step::Send(pending) => pending,
        };
        if pending.requests.is_empty() {
            return Err(CallError::Malformed {
                plugin: label,
                reason: "a step asked for no request and gave no outcome".into(),
            });
        }
        let answers = match &grant {
            Some(grant) => {
                // Counted as they are read, the answers still in flight too: a step's answers
                // never hold more than the memory limit, however many arrive at once.
                grant.begin_answers(memory_limit);
                let mut answers = Vec::with_capacity(pending.requests.len());
                let mut sent = futures::stream::iter(pending.requests)
                    .map(|request| grant.carry(&label, request))
                    .buffered(parallel);
                let mut bytes = 0usize;
                while let Some(answer) = sent.next().await {
                    bytes += answer_size(&answer);
                    if bytes > memory_limit || grant.answers_exceeded() {
                        // The rest are dropped unsent (or unread).
                        return Err(CallError::MemoryLimit {
                            plugin: label.clone(),
                            limit: memory_limit,
                        });
                    }
                    answers.push(answer);
                }
                answers
            }
            None => pending
                .requests
                .iter()
                .map(|_| {
                    Err(wit_http::HttpError::Denied(
                        "this call was given no endpoint to reach".into(),
                    ))
                })
                .collect(),
        };
        if let Some(spent) = grant.as_ref().and_then(|g| g.budget_spent()) {
            return Err(CallError::HttpBudget {
                plugin: label,
                spent,
            });
        }
        if Instant::now() >= deadline {
            return Err(CallError::Deadline {
                plugin: label,
                limit,
            });
        }
        resume = Some((pending.state, answers));
    }
}

/// A sans-IO driver's pre-instance, and the call in its contract's terms.
enum Exchanger<'a> {
    V0_3(&'a driver_0_3::HardwareDriverPre<PluginState>),
    V0_2(
        &'a driver_0_2::HardwareDriverPre<PluginState>,
        wit_exchange_0_2::Call,
    ),
}

impl Exchanger<'_> {
    /// One step, on a fresh instance in `store`: the first (`resume` is `None`) or the next.
    async fn step(
        &self,
        store: &mut wasmtime::Store<PluginState>,
        call: &wx::Call,
        resume: Option<(Vec<u8>, Answers)>,
    ) -> wasmtime::Result<wx::Step> {
        match self {
            Exchanger::V0_3(pre) => {
                let bindings = pre.instantiate_async(&mut *store).await?;
                let driver = bindings.podium_plugin_driver();
                match resume {
                    None => driver.call_start(&mut *store, call).await,
                    Some((state, answers)) => {
                        driver
                            .call_resume(&mut *store, call, &state, &answers)
                            .await
                    }
                }
            }
            Exchanger::V0_2(pre, call) => {
                let bindings = pre.instantiate_async(&mut *store).await?;
                let driver = bindings.podium_plugin_driver();
                let step = match resume {
                    None => driver.call_start(&mut *store, call).await?,
                    Some((state, answers)) => {
                        driver
                            .call_resume(&mut *store, call, &state, &answers)
                            .await?
                    }
                };
                Ok(exchange_0_2::step(step))
            }
        }
    }
}

/// What an answer takes of the driver's memory when handed to it, roughly.
fn answer_size(answer: &Result<wit_http::Response, wit_http::HttpError>) -> usize {
    match answer {
        Ok(response) => {
            response.body.len()
                + response
                    .headers
                    .iter()
                    .map(|(name, value)| name.len() + value.len() + 16)
                    .sum::<usize>()
                + 16
        }
        Err(_) => 256,
    }
}

/// A finished call whose outcome is the case its call returns, or `Malformed`.
fn checked((label, result): Finished, call: &wx::Call) -> Result<Finished, CallError> {
    let expected = match call {
        wx::Call::Probe => "service-info",
        wx::Call::Discover => "systems",
        wx::Call::Inspect(_) => "system",
        wx::Call::GetPower(_) | wx::Call::GetChassisPower(_) => "power",
        wx::Call::SetPower(_)
        | wx::Call::SetBootOverride(_)
        | wx::Call::InsertMedia(_)
        | wx::Call::EjectMedia(_) => "done",
        wx::Call::DiscoverChassis => "chassis",
        wx::Call::ReadComposition => "composition",
        wx::Call::Compose(_) => "composed",
        wx::Call::Decompose(_)
        | wx::Call::SetBios(_)
        | wx::Call::ResetBios(_)
        | wx::Call::SetSecureBoot(_)
        | wx::Call::SetChassisPower(_) => "done",
        wx::Call::ReadBios(_) => "bios",
        wx::Call::ReadSecureBoot(_) => "secure-boot",
        wx::Call::ReadHardware(_) => "hardware",
        wx::Call::ReadFirmware(_) => "firmware",
        wx::Call::UpdateFirmware(_) => "task-started",
        wx::Call::ReadTask(_) => "task",
    };
    match &result {
        Ok(outcome) if outcome_name(outcome) != expected => Err(CallError::Malformed {
            reason: format!(
                "the call finished with {}, where {expected} was due",
                outcome_name(outcome)
            ),
            plugin: label,
        }),
        _ => Ok((label, result)),
    }
}

/// The call's name as the metrics and the 0.1.0 export call it.
fn call_name(call: &wx::Call) -> &'static str {
    match call {
        wx::Call::Probe => "probe",
        wx::Call::Discover => "discover",
        wx::Call::Inspect(_) => "inspect",
        wx::Call::GetPower(_) => "get_power",
        wx::Call::SetPower(_) => "set_power",
        wx::Call::SetBootOverride(_) => "set_boot_override",
        wx::Call::InsertMedia(_) => "insert_media",
        wx::Call::EjectMedia(_) => "eject_media",
        wx::Call::DiscoverChassis => "discover_chassis",
        wx::Call::ReadComposition => "read_composition",
        wx::Call::Compose(_) => "compose",
        wx::Call::Decompose(_) => "decompose",
        wx::Call::ReadBios(_) => "read_bios",
        wx::Call::SetBios(_) => "set_bios",
        wx::Call::ResetBios(_) => "reset_bios",
        wx::Call::ReadSecureBoot(_) => "read_secure_boot",
        wx::Call::SetSecureBoot(_) => "set_secure_boot",
        wx::Call::ReadHardware(_) => "read_hardware",
        wx::Call::ReadFirmware(_) => "read_firmware",
        wx::Call::UpdateFirmware(_) => "update_firmware",
        wx::Call::ReadTask(_) => "read_task",
        wx::Call::GetChassisPower(_) => "get_chassis_power",
        wx::Call::SetChassisPower(_) => "set_chassis_power",
    }
}

/// The outcome of a call that must finish with `expected`: `take` picks it, any other is
/// malformed.
pub(super) fn expect<T>(
    (label, result): Finished,
    expected: &str,
    take: impl FnOnce(wx::Outcome) -> Option<T>,
) -> Result<(String, Result<T, wit_types::Error>), CallError> {
    match result {
        Err(e) => Ok((label, Err(e))),
        Ok(outcome) => {
            let found = outcome_name(&outcome);
            match take(outcome) {
                Some(value) => Ok((label, Ok(value))),
                None => Err(CallError::Malformed {
                    reason: format!("the call finished with {found}, where {expected} was due"),
                    plugin: label,
                }),
            }
        }
    }
}

fn outcome_name(outcome: &wx::Outcome) -> &'static str {
    match outcome {
        wx::Outcome::ServiceInfo(_) => "service-info",
        wx::Outcome::Systems(_) => "systems",
        wx::Outcome::System(_) => "system",
        wx::Outcome::Power(_) => "power",
        wx::Outcome::Done => "done",
        wx::Outcome::Chassis(_) => "chassis",
        wx::Outcome::Composition(_) => "composition",
        wx::Outcome::Composed(_) => "composed",
        wx::Outcome::Bios(_) => "bios",
        wx::Outcome::SecureBoot(_) => "secure-boot",
        wx::Outcome::Hardware(_) => "hardware",
        wx::Outcome::Firmware(_) => "firmware",
        wx::Outcome::TaskStarted(_) => "task-started",
        wx::Outcome::Task(_) => "task",
    }
}
