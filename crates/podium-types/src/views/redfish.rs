//! The Redfish face (`/redfish/v1`): what it shows of a host and of a session. The server
//! writes them as Redfish resources; nothing here names the real BMC, its address or the
//! driver's system id.

use serde::{Deserialize, Serialize};

use crate::hardware::{BootSettings, MediaSlot, Nic, PowerState};
use crate::{ClaimId, HostId, SessionId, ShownState, TokenId};

/// A host as a Redfish `ComputerSystem`: its hardware, the power state its BMC last reported,
/// its boot override and virtual media.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemView {
    pub id: HostId,
    pub name: String,
    pub uuid: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub cpu_count: i64,
    pub memory_mib: i64,
    pub nics: Vec<Nic>,
    pub media_slots: Vec<MediaSlot>,
    pub boot: Option<BootSettings>,
    pub power_state: PowerState,
    /// Its provisioning state, as the JSON API shows it.
    pub state: ShownState,
    /// The claim through which the caller holds it (a tenant's); `None` for an admin.
    pub claim: Option<ClaimId>,
    /// The BIOS's and the BMC's firmware versions as Podium last read them (an inspection, a
    /// firmware update, a read of the host's firmware).
    pub bios_version: Option<String>,
    pub bmc_version: Option<String>,
    /// When the host last changed (its ETag is made from the whole view).
    pub updated_at: crate::Timestamp,
}

/// A Redfish session: who opened it and when. Its token is answered once, when it is made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    pub id: SessionId,
    /// The `UserName` it was opened with (Podium checks only the password, a token).
    pub user_name: String,
    pub created_at: crate::Timestamp,
}

/// A Redfish event subscription as its owner reads it: never its HTTP headers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionView {
    pub id: crate::SubscriptionId,
    pub destination: String,
    pub context: String,
    pub event_types: Vec<String>,
    /// Whether headers are sent with each event (they are never shown).
    pub has_headers: bool,
    /// The last event handled for it (delivered, or given up on after its tries).
    pub delivered_through: i64,
    /// Why the last try failed, if one did.
    pub last_error: Option<String>,
    pub created_at: crate::Timestamp,
}

/// What a Redfish client asks to subscribe to (`POST /redfish/v1/EventService/Subscriptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionCreate {
    pub destination: String,
    pub context: String,
    /// Empty: every type.
    pub event_types: Vec<String>,
    /// Sent with each event; sealed at rest, never shown.
    pub headers: Vec<(String, crate::Secret)>,
}

crate::names::names! {
    /// A Redfish standard role, the one a token has in the Redfish face (`AccountService`).
    pub enum RedfishRole ("a Redfish role") {
        /// An admin's token that may write.
        Administrator => "Administrator",
        /// A tenant's token that may write: it acts on the hosts it claimed.
        Operator => "Operator",
        /// A read-only token, an admin's or a tenant's.
        ReadOnly => "ReadOnly",
    }
}

/// The Redfish account a token is: a caller sees its own alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedfishAccountView {
    /// The token's id.
    pub id: TokenId,
    /// Its tenant's name; `admin` for an admin's token.
    pub user_name: String,
    pub role: RedfishRole,
}
