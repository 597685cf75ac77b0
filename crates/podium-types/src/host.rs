//! Hosts: the machines behind a pod manager, and the states they go through
//! (`docs/host-lifecycle.md`).

use crate::names::names;

names! {
    /// What a host is: a computer system, composed or not. `chassis` is what earlier releases
    /// made of the chassis a discovery found; chassis are the component tree now (migration
    /// 0038 removed those hosts), and no host is made of this kind.
    #[derive(Default)]
    pub enum HostKind ("a host kind") {
        #[default]
        System => "system",
        Chassis => "chassis",
        /// A system Podium composed of resource blocks (or found composed by its service).
        Composed => "composed",
    }
}

impl HostKind {
    /// Whether hosts of this kind are machines that boot (a system, composed or not), not a
    /// chassis.
    pub fn is_machine(self) -> bool {
        matches!(self, HostKind::System | HostKind::Composed)
    }
}

names! {
    /// What failed for good on a host and put it in `error`.
    pub enum HostErrorKind ("a host error type") {
        Registration => "registration",
        Inspection => "inspection",
        Provisioning => "provisioning",
        Deprovisioning => "deprovisioning",
        /// Its BMC refused a power action; a power action it obeys ends the error.
        PowerManagement => "power_management",
    }
}

names! {
    /// Where a host is in its life. Maintenance is not a state: it lies over one.
    pub enum HostState ("a host state") {
        Registering => "registering",
        Inspecting => "inspecting",
        Available => "available",
        Provisioning => "provisioning",
        Provisioned => "provisioned",
        Deprovisioning => "deprovisioning",
        Error => "error",
        Missing => "missing",
    }
}

/// A new host's state: it is registered first.
impl Default for HostState {
    fn default() -> HostState {
        HostState::Registering
    }
}

/// The state a host shows: `maintenance` while the admin's maintenance lasts, else its stored
/// state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShownState {
    In(HostState),
    Maintenance,
}

impl ShownState {
    pub fn as_str(self) -> &'static str {
        match self {
            ShownState::In(state) => state.as_str(),
            ShownState::Maintenance => "maintenance",
        }
    }
}

impl std::fmt::Display for ShownState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ShownState {
    type Err = crate::UnknownName;
    fn from_str(s: &str) -> Result<ShownState, crate::UnknownName> {
        if s == "maintenance" {
            return Ok(ShownState::Maintenance);
        }
        s.parse()
            .map(ShownState::In)
            .map_err(|_| crate::UnknownName {
                what: "a host state",
                name: s.to_owned(),
                names: &[
                    "registering",
                    "inspecting",
                    "available",
                    "provisioning",
                    "provisioned",
                    "deprovisioning",
                    "error",
                    "missing",
                    "maintenance",
                ],
            })
    }
}

impl serde::Serialize for ShownState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ShownState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ShownState, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl utoipa::PartialSchema for ShownState {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let names = HostState::ALL
            .iter()
            .map(|s| s.as_str())
            .chain(["maintenance"]);
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(names))
            .into()
    }
}

impl utoipa::ToSchema for ShownState {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_state_reads_back_what_it_writes() {
        let all = HostState::ALL
            .iter()
            .map(|s| ShownState::In(*s))
            .chain([ShownState::Maintenance]);
        for shown in all {
            let json = serde_json::to_string(&shown).unwrap();
            assert_eq!(serde_json::from_str::<ShownState>(&json).unwrap(), shown);
        }
        let e = "sleeping".parse::<ShownState>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`sleeping` is not a host state (one of registering, inspecting, available, \
             provisioning, provisioned, deprovisioning, error, missing, maintenance)"
        );
        // Every state it lists reads back.
        for name in e.names {
            assert!(name.parse::<ShownState>().is_ok(), "{name}");
        }
    }
}
