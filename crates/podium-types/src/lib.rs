//! Podium's model, shared by the server and its client: identifiers, the secret type, what Podium asks of a
//! machine (power, boot, media), host and claim states, operations by kind with their requests,
//! the API's request bodies (`requests`) and its answers (`views`).
//!
//! **Architecture Invariant:** a leaf crate. It depends on nothing of Podium's and on no crate
//! that does I/O (no sqlx, wasmtime, axum, reqwest, tokio), so the client links it freely.
//! Nothing here knows how it is stored or sent: the store keeps its own format of each type,
//! the runtime converts at the WIT edge, the API says how each appears in its documents.

mod bios;
mod claim;
mod documents;
mod errors;
mod events;
mod filters;
mod firmware;
mod hardware;
mod host;
mod ids;
mod image;
mod inventory;
mod names;
mod operations;
mod outcomes;
mod owner;
mod pages;
mod plugins;
mod pod_manager;
pub mod requests;
mod secret;
pub mod text;
mod timestamp;
mod tokens;
pub mod views;

pub use bios::{
    ApplyTime, Bios, BiosAction, BiosAttributeEntry, BiosAttributeType, BiosChange, BiosValue,
    FirmwareProfile, SecureBoot, SecureBootChange, TenantFirmware, is_attribute_name,
    is_password_name,
};
pub use claim::ClaimState;
pub use documents::Phase;
pub use errors::ErrorCode;
pub use events::{EventAction, EventFilter, EventKind};
pub use filters::{AuditFilter, HostFilter, OperationFilter, PodManagerFilter};
pub use firmware::{
    Firmware, FirmwareComponent, FirmwareKind, FirmwareUpdate, TaskState, TaskStatus,
};
pub use hardware::{
    BlockType, BootMode, BootPersistence, BootSettings, BootTarget, ChassisState, ComponentHealth,
    CompositionState, MediaAction, MediaRequest, MediaSlot, MediaType, Nic, PowerAction,
    PowerSettings, PowerState,
};
pub use host::{HostErrorKind, HostKind, HostState, ShownState};
pub use ids::{
    ChassisId, ClaimId, ConfigDriveId, GrantId, HostId, Id, IpClaimId, IpPoolId, MalformedId,
    OperationId, PluginId, PodManagerId, SessionId, SubscriptionId, TenantId, TenantScope, TokenId,
};
pub use image::{
    ChecksumType, Cleaning, CleaningInEffect, CleaningRecord, DeploySettings, ImageFormat,
};
pub use inventory::{
    Drive, HardwareInventory, LinkState, MemoryModule, NicLink, Processor, StorageController,
};
pub use names::{Named, UnknownName};
pub use operations::{OperationKind, OperationRequest, OperationStatus};
pub use outcomes::{
    AgentAnswer, BiosApplied, ComponentUpdated, ConfigDriveRef, Deprovisioned, DisksCleaned,
    FirmwareUpdateProgress, FirmwareUpdated, Inspected, Installed, InventoryRead, Observed,
    OperationProgress, OperationResult, PowerSent, Preprovisioning, PreprovisioningAddress,
    ProfileApplied, ProfileBios, ProfileSecureBoot, Provisioned, ProvisionedBy, SecureBootSet,
    SyncSummary, UpdateTaskState,
};
pub use owner::{BadOwner, OWNER_MAX, Owner};
pub use pages::{Page, Paged};
pub use plugins::{PluginBinding, PluginSource};
pub use pod_manager::PodManagerStatus;
pub use secret::Secret;
pub use timestamp::{BadTimestamp, Timestamp};
pub use tokens::Role;
