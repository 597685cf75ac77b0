//! The schema's migrations, embedded in the binary from `migrations/` (sqlx's `migrate!` macro
//! would do the same at the price of compiling sqlx a second time, with its macro features).
//!
//! Each migration keeps the version, description and SQL text sqlx's directory reader gives it,
//! so the checksums recorded in `_sqlx_migrations` by earlier releases still match.
//!
//! Most migrations are one file both databases accept. One that cannot be (triggers are written
//! differently in SQLite and PostgreSQL) has a file of the same name in `migrations/sqlite/` and
//! in `migrations/postgres/`; a database only ever runs its own, so each one's checksum is stable.

use std::borrow::Cow;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use crate::Backend;

/// A migration: its file's name, and its SQL on each database.
struct File {
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

macro_rules! migration {
    ($file:literal) => {
        File {
            name: $file,
            sqlite: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/", $file)),
            postgres: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/", $file)),
        }
    };
    ($file:literal, per_database) => {
        File {
            name: $file,
            sqlite: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/sqlite/",
                $file
            )),
            postgres: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/postgres/",
                $file
            )),
        }
    };
}

/// Every migration, in order. A new migration is a new file and a new line here; the test below
/// fails when the two disagree.
const FILES: &[File] = &[
    migration!("0001_foundation.sql"),
    migration!("0002_pod_managers.sql"),
    migration!("0003_host_bmc.sql"),
    migration!("0004_tls_pin.sql"),
    migration!("0005_tenants.sql"),
    migration!("0006_grants.sql"),
    migration!("0007_claims.sql"),
    migration!("0008_ipam.sql"),
    migration!("0009_tenant_deletion.sql"),
    migration!("0010_host_boot_mac.sql"),
    migration!("0011_rendering.sql"),
    migration!("0012_durable_operations.sql"),
    migration!("0013_host_lifecycle.sql"),
    migration!("0014_fair_leasing.sql"),
    migration!("0015_audit.sql"),
    migration!("0016_events.sql", per_database),
    migration!("0017_host_refresh.sql"),
    migration!("0018_operation_limits.sql"),
    migration!("0019_redfish_sessions.sql"),
    migration!("0020_preprovisioning_image.sql"),
    migration!("0021_host_nics.sql", per_database),
    migration!("0022_agents.sql"),
    migration!("0023_deploy_settings.sql"),
    migration!("0024_request_limit.sql"),
    migration!("0025_leasing_indexes.sql"),
    migration!("0026_chassis.sql"),
    migration!("0027_chassis_grants_and_claims.sql"),
    migration!("0028_spread.sql"),
    migration!("0029_composed_nodes.sql"),
    migration!("0030_claims_that_compose.sql"),
    migration!("0031_operation_progress.sql"),
    migration!("0032_tenant_firmware.sql"),
    migration!("0033_event_subscriptions.sql"),
    migration!("0034_firmware_profile.sql"),
    migration!("0035_host_firmware_versions.sql"),
    migration!("0036_host_last_cleaning.sql"),
    migration!("0037_pod_manager_power.sql"),
    migration!("0038_chassis_are_not_hosts.sql"),
];

/// The migrator of Podium's schema on `backend`.
pub(crate) async fn migrator(backend: Backend) -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Embedded(backend)).await
}

#[derive(Debug)]
struct Embedded(Backend);

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> futures::future::BoxFuture<'static, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async move {
            FILES
                .iter()
                .map(|f| {
                    let sql = match self.0 {
                        Backend::Sqlite => f.sqlite,
                        Backend::Postgres => f.postgres,
                    };
                    parse(f.name, sql)
                })
                .collect()
        })
    }
}

/// A migration as sqlx's directory reader makes it of `<version>_<description>.sql`.
fn parse(file: &str, sql: &'static str) -> Result<Migration, BoxDynError> {
    let (version, rest) = file
        .split_once('_')
        .ok_or_else(|| format!("migration `{file}` is not named <version>_<description>.sql"))?;
    let version: i64 = version
        .parse()
        .map_err(|_| format!("migration `{file}` does not start with a version number"))?;
    let kind = MigrationType::from_filename(rest);
    let description = rest.trim_end_matches(kind.suffix()).replace('_', " ");
    Ok(Migration::new(
        version,
        Cow::Owned(description),
        kind,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_directory_is_embedded_in_order() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let names = |dir: &str| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".sql"))
                .collect();
            names.sort();
            names
        };
        let per_database = names(&format!("{dir}/sqlite"));
        assert_eq!(per_database, names(&format!("{dir}/postgres")));
        let mut on_disk = names(dir);
        on_disk.extend(per_database);
        on_disk.sort();
        let embedded: Vec<&str> = FILES.iter().map(|f| f.name).collect();
        assert_eq!(embedded, on_disk);
    }

    #[test]
    fn migrations_read_as_sqlx_reads_the_directory() {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"));
        let mut from_dir = sqlx::migrate::resolve_blocking(dir).unwrap();
        from_dir.sort_by_key(|(m, _)| m.version);
        // The migrations both databases share (sqlx's reader skips the per-database folders).
        let embedded: Vec<Migration> = FILES
            .iter()
            .filter(|f| dir.join(f.name).exists())
            .map(|f| parse(f.name, f.sqlite).unwrap())
            .collect();
        assert_eq!(embedded.len(), from_dir.len());
        for (ours, (theirs, _)) in embedded.iter().zip(&from_dir) {
            assert_eq!(ours.version, theirs.version);
            assert_eq!(ours.description, theirs.description);
            assert_eq!(ours.checksum, theirs.checksum, "{}", ours.description);
            assert_eq!(ours.no_tx, theirs.no_tx);
        }
    }
}
