//! The API's error codes: the `code` of every error body (`{"error": {"code", "message",
//! "field"}}`), stable and machine-readable, one name each. The API document lists them all (the
//! schema of `ErrorDetail.code`); a new code is a new variant here.

crate::names::names! {
    /// A stable, machine-readable error code.
    pub enum ErrorCode ("an error code") {
        // The caller and the request.
        Unauthenticated => "unauthenticated",
        Forbidden => "forbidden",
        NotFound => "not_found",
        BadRequest => "bad_request",
        InvalidInput => "invalid_input",
        TooLarge => "too_large",
        TooManyRequests => "too_many_requests",
        MethodNotAllowed => "method_not_allowed",
        TlsRequired => "tls_required",
        InsecureTransport => "insecure_transport",
        // What exists: names, addresses, pools.
        Conflict => "conflict",
        NameTaken => "name_taken",
        UrlTaken => "url_taken",
        HostExists => "host_exists",
        GrantExists => "grant_exists",
        PluginVersionExists => "plugin_version_exists",
        AddressTaken => "address_taken",
        AddressesNotHeld => "addresses_not_held",
        OwnerHoldsAddress => "owner_holds_address",
        OwnerPreAllocated => "owner_pre_allocated",
        MacInUse => "mac_in_use",
        PoolBusy => "pool_busy",
        PoolExhausted => "pool_exhausted",
        PoolInUse => "pool_in_use",
        PodManagerInUse => "pod_manager_in_use",
        SubscriptionsFull => "subscriptions_full",
        TenantDeleting => "tenant_deleting",
        TenantHasClaims => "tenant_has_claims",
        NetworkConfigOwnedBySite => "network_config_owned_by_site",
        AgentAmbiguous => "agent_ambiguous",
        BackupUnavailable => "backup_unavailable",
        // Hosts and claims.
        HostBusy => "host_busy",
        HostClaimed => "host_claimed",
        HostNotClaimed => "host_not_claimed",
        ClaimChanged => "claim_changed",
        ClaimNotBound => "claim_not_bound",
        ClaimReleasing => "claim_releasing",
        OperationAbandoned => "operation_abandoned",
        DeployFailed => "deploy_failed",
        RenderFailed => "render_failed",
        // What the hardware has or did.
        Unsupported => "unsupported",
        BiosUnsupported => "bios_unsupported",
        SecureBootUnsupported => "secure_boot_unsupported",
        HardwareUnsupported => "hardware_unsupported",
        FirmwareUnsupported => "firmware_unsupported",
        CompositionUnsupported => "composition_unsupported",
        ChassisPowerUnsupported => "chassis_power_unsupported",
        BiosNotApplied => "bios_not_applied",
        SecureBootNotApplied => "secure_boot_not_applied",
        FirmwareProfileNotApplied => "firmware_profile_not_applied",
        FirmwareUpdateFailed => "firmware_update_failed",
        FirmwareUpdateInterrupted => "firmware_update_interrupted",
        FirmwareUpdatePending => "firmware_update_pending",
        FirmwareUpdateTimeout => "firmware_update_timeout",
        BlockTaken => "block_taken",
        NoBlocksFit => "no_blocks_fit",
        ChassisInUse => "chassis_in_use",
        ChassisMissing => "chassis_missing",
        // Plugins and their endpoints.
        InvalidPlugin => "invalid_plugin",
        InvalidPluginConfig => "invalid_plugin_config",
        EndpointNotFound => "endpoint_not_found",
        EndpointConflict => "endpoint_conflict",
        EndpointUnauthorized => "endpoint_unauthorized",
        EndpointUnreachable => "endpoint_unreachable",
        PluginDeadline => "plugin_deadline",
        PluginsBusy => "plugins_busy",
        PluginMemoryLimit => "plugin_memory_limit",
        PluginRequestLimit => "plugin_request_limit",
        PluginTrapped => "plugin_trapped",
        PluginMalformedOutput => "plugin_malformed_output",
        PluginFailed => "plugin_failed",
        // The server.
        Unavailable => "unavailable",
        Internal => "internal",
    }
}

impl ErrorCode {
    /// Whether it says a host's hardware has no such thing (`*_unsupported`, not a plugin's
    /// bare `unsupported`): what the Redfish face answers as a resource it does not have.
    pub fn is_unsupported(self) -> bool {
        matches!(
            self,
            ErrorCode::BiosUnsupported
                | ErrorCode::SecureBootUnsupported
                | ErrorCode::HardwareUnsupported
                | ErrorCode::FirmwareUnsupported
                | ErrorCode::CompositionUnsupported
                | ErrorCode::ChassisPowerUnsupported
        )
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn the_unsupported_codes_are_those_named_so() {
        for code in ErrorCode::ALL {
            assert_eq!(
                code.is_unsupported(),
                code.as_str().ends_with("_unsupported"),
                "{code}"
            );
        }
    }
}
