//! A 0.2.0 driver spoken to in 0.3.0's terms: the host's exchange is 0.3.0's, and 0.2.0's
//! `call` and `outcome` are 0.3.0's without the cases 0.3.0 added (the records they carry are
//! the same Rust types: `bindings.rs`). A call 0.2.0 has not is never sent to such a driver.

use super::super::bindings::{wit_exchange as wx, wit_exchange_0_2 as w2};

/// The call as 0.2.0 asks it; `None` for a call new in 0.3.0.
pub(super) fn call(call: &wx::Call) -> Option<w2::Call> {
    Some(match call.clone() {
        wx::Call::Probe => w2::Call::Probe,
        wx::Call::Discover => w2::Call::Discover,
        wx::Call::Inspect(id) => w2::Call::Inspect(id),
        wx::Call::GetPower(id) => w2::Call::GetPower(id),
        wx::Call::SetPower(args) => w2::Call::SetPower(args),
        wx::Call::SetBootOverride(args) => w2::Call::SetBootOverride(args),
        wx::Call::InsertMedia(args) => w2::Call::InsertMedia(args),
        wx::Call::EjectMedia(args) => w2::Call::EjectMedia(args),
        wx::Call::DiscoverChassis => w2::Call::DiscoverChassis,
        wx::Call::ReadComposition => w2::Call::ReadComposition,
        wx::Call::Compose(request) => w2::Call::Compose(request),
        wx::Call::Decompose(id) => w2::Call::Decompose(id),
        wx::Call::ReadBios(id) => w2::Call::ReadBios(id),
        wx::Call::SetBios(args) => w2::Call::SetBios(args),
        wx::Call::ResetBios(id) => w2::Call::ResetBios(id),
        wx::Call::ReadSecureBoot(id) => w2::Call::ReadSecureBoot(id),
        wx::Call::SetSecureBoot(args) => w2::Call::SetSecureBoot(args),
        wx::Call::ReadHardware(id) => w2::Call::ReadHardware(id),
        wx::Call::ReadFirmware(id) => w2::Call::ReadFirmware(id),
        wx::Call::UpdateFirmware(args) => w2::Call::UpdateFirmware(args),
        wx::Call::ReadTask(args) => w2::Call::ReadTask(args),
        wx::Call::GetChassisPower(_) | wx::Call::SetChassisPower(_) => return None,
    })
}

/// A 0.2.0 step as 0.3.0's.
pub(super) fn step(step: w2::Step) -> wx::Step {
    match step {
        w2::Step::Send(w2::Pending { requests, state }) => {
            wx::Step::Send(wx::Pending { requests, state })
        }
        w2::Step::Finished(result) => wx::Step::Finished(result.map(outcome)),
    }
}

fn outcome(outcome: w2::Outcome) -> wx::Outcome {
    match outcome {
        w2::Outcome::ServiceInfo(info) => wx::Outcome::ServiceInfo(info),
        w2::Outcome::Systems(systems) => wx::Outcome::Systems(systems),
        w2::Outcome::System(system) => wx::Outcome::System(system),
        w2::Outcome::Power(power) => wx::Outcome::Power(power),
        w2::Outcome::Done => wx::Outcome::Done,
        w2::Outcome::Chassis(chassis) => wx::Outcome::Chassis(chassis),
        w2::Outcome::Composition(service) => wx::Outcome::Composition(service),
        w2::Outcome::Composed(id) => wx::Outcome::Composed(id),
        w2::Outcome::Bios(bios) => wx::Outcome::Bios(bios),
        w2::Outcome::SecureBoot(secure_boot) => wx::Outcome::SecureBoot(secure_boot),
        w2::Outcome::Hardware(hardware) => wx::Outcome::Hardware(hardware),
        w2::Outcome::Firmware(firmware) => wx::Outcome::Firmware(firmware),
        w2::Outcome::TaskStarted(task) => wx::Outcome::TaskStarted(task),
        w2::Outcome::Task(task) => wx::Outcome::Task(task),
    }
}
