//! Stored chassis: the component tree behind each pod manager (racks, enclosures, blades), and
//! where each host stands in it.

use std::collections::HashMap;

use podium_types::views::ChassisRef;
use podium_types::{
    ChassisId, ChassisState, ClaimId, ComponentHealth, HostId, HostState, Page, Paged,
    PodManagerId, PowerState, Timestamp,
};
use sqlx::Row;

use super::{Datastore, StoreError, decode, json, moment};

/// How deep a tree the store keeps: a rack group, a rack, an enclosure, a blade and a few more
/// levels fit easily; a deeper answer is a driver's mistake, refused whole.
pub const CHASSIS_DEPTH_MAX: usize = 16;

/// A chassis as its driver last reported it: what a sync writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChassisReport {
    /// The driver's id.
    pub chassis_id: String,
    pub name: String,
    /// DMTF's `ChassisType` name, or the service's own.
    pub chassis_type: String,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub location: Option<String>,
    pub power_state: Option<PowerState>,
    pub health: Option<ComponentHealth>,
    /// The driver's id of the chassis it stands in.
    pub parent: Option<String>,
    /// The driver's ids of the systems it holds.
    pub systems: Vec<String>,
}

/// A stored chassis: the driver's last report, and what Podium made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChassisRow {
    pub id: ChassisId,
    pub pod_manager: PodManagerId,
    pub report: ChassisReport,
    /// The chassis it stands in, outermost first (each sync computes it).
    pub path: Vec<ChassisRef>,
    /// The hosts whose innermost chassis it is.
    pub hosts: Vec<HostId>,
    pub state: ChassisState,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub last_seen_at: Timestamp,
}

/// A host within a chassis that a change of the chassis' power would reach while it is in use: a
/// tenant's, or one Podium is working on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostInUse {
    pub id: HostId,
    pub name: String,
    pub state: HostState,
    pub claim_id: Option<ClaimId>,
    /// Whether the tree places it (in this chassis); `false`: it stands in no chassis the tree
    /// knows, so it may stand in this one.
    pub placed: bool,
}

/// Where a stored chassis stands: its pod manager, whether it is present, and the chassis it
/// stands in, outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChassisPlace {
    pub pod_manager: PodManagerId,
    pub state: ChassisState,
    pub path: Vec<ChassisRef>,
}

/// What a chassis sync changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChassisSummary {
    pub seen: usize,
    pub added: usize,
    pub missing: usize,
    /// Hosts whose place in the tree is now known.
    pub placed: usize,
}

/// The tree is deeper than [`CHASSIS_DEPTH_MAX`], or a chassis stands in itself.
#[derive(Debug, thiserror::Error)]
#[error("chassis {chassis}: {reason}")]
pub struct BadTree {
    pub chassis: String,
    pub reason: String,
}

const COLUMNS: &str = "id, pod_manager, chassis_id, name, chassis_type, manufacturer, model, \
    serial, location, power_state, health, parent, systems, path, state, created_at, updated_at, \
    last_seen_at";

fn row(r: &sqlx::any::AnyRow) -> Result<ChassisRow, StoreError> {
    let name = |column: &str| -> Result<Option<String>, StoreError> { Ok(r.try_get(column)?) };
    Ok(ChassisRow {
        id: r.try_get::<String, _>("id")?.into(),
        pod_manager: r.try_get::<String, _>("pod_manager")?.into(),
        report: ChassisReport {
            chassis_id: r.try_get("chassis_id")?,
            name: r.try_get("name")?,
            chassis_type: r.try_get("chassis_type")?,
            manufacturer: r.try_get("manufacturer")?,
            model: r.try_get("model")?,
            serial: r.try_get("serial")?,
            location: r.try_get("location")?,
            power_state: parse(name("power_state")?, "power_state")?,
            health: parse(name("health")?, "health")?,
            parent: r.try_get("parent")?,
            systems: decode("systems", &r.try_get::<String, _>("systems")?)?,
        },
        path: decode("path", &r.try_get::<String, _>("path")?)?,
        hosts: decode("hosts", &r.try_get::<String, _>("hosts")?)?,
        state: parse(Some(r.try_get::<String, _>("state")?), "state")?
            .expect("a present value parses to one"),
        created_at: moment(r, "created_at")?,
        updated_at: moment(r, "updated_at")?,
        last_seen_at: moment(r, "last_seen_at")?,
    })
}

fn parse<T: std::str::FromStr<Err = podium_types::UnknownName>>(
    text: Option<String>,
    column: &str,
) -> Result<Option<T>, StoreError> {
    text.map(|t| {
        t.parse()
            .map_err(|e| StoreError::Corrupt(format!("stored {column}: {e}")))
    })
    .transpose()
}

impl Datastore {
    /// Makes the stored chassis of `pod_manager` match what its driver reported, in one
    /// transaction, then places the hosts: new chassis are added, known ones updated (a `missing` one is present
    /// again), those not reported are marked `missing`, never deleted. Every host of the pod
    /// manager is placed in the innermost reported chassis that names its system (none where no
    /// chassis does), with its path. A chassis keeps its id while its driver's id stays. A tree deeper than [`CHASSIS_DEPTH_MAX`], or with a chassis in itself,
    /// is refused whole and nothing changes.
    pub async fn chassis_sync(
        &self,
        pod_manager: &PodManagerId,
        reported: &[ChassisReport],
        now: Timestamp,
    ) -> Result<Result<ChassisSummary, BadTree>, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        // One chassis sync of a pod manager at a time (its row locked until the commit): two
        // at once would each take the chassis for new and give them ids of their own, and the
        // later one's paths would name the ids the earlier one did not keep.
        let locked = sqlx::query("UPDATE pod_managers SET uuid = uuid WHERE uuid = $1")
            .bind(pod_manager.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if locked == 0 {
            // The pod manager is gone, and its chassis with it.
            return Ok(Ok(ChassisSummary::default()));
        }
        let known: HashMap<String, String> =
            sqlx::query("SELECT chassis_id, id FROM chassis WHERE pod_manager = $1")
                .bind(pod_manager.as_str())
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| Ok((r.try_get("chassis_id")?, r.try_get("id")?)))
                .collect::<Result<_, sqlx::Error>>()?;
        let ids: Vec<ChassisId> = reported
            .iter()
            .map(|c| match known.get(&c.chassis_id) {
                Some(id) => ChassisId::from(id.clone()),
                None => ChassisId::generate(),
            })
            .collect();
        let paths = match paths(reported, &ids) {
            Ok(paths) => paths,
            Err(bad) => return Ok(Err(bad)),
        };
        let mut added = 0;
        for ((c, id), path) in reported.iter().zip(&ids).zip(&paths) {
            if !known.contains_key(&c.chassis_id) {
                added += 1;
            }
            sqlx::query(&format!(
                "INSERT INTO chassis ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'present', $15, $15, $15) \
                 ON CONFLICT (pod_manager, chassis_id) DO UPDATE SET name = excluded.name, \
                 chassis_type = excluded.chassis_type, manufacturer = excluded.manufacturer, \
                 model = excluded.model, serial = excluded.serial, location = excluded.location, \
                 power_state = excluded.power_state, health = excluded.health, \
                 parent = excluded.parent, systems = excluded.systems, path = excluded.path, \
                 state = 'present', updated_at = excluded.updated_at, \
                 last_seen_at = excluded.last_seen_at"
            ))
            .bind(id.as_str())
            .bind(pod_manager.as_str())
            .bind(&c.chassis_id)
            .bind(&c.name)
            .bind(&c.chassis_type)
            .bind(&c.manufacturer)
            .bind(&c.model)
            .bind(&c.serial)
            .bind(&c.location)
            .bind(c.power_state.map(PowerState::as_str))
            .bind(c.health.map(ComponentHealth::as_str))
            .bind(&c.parent)
            .bind(json(&c.systems))
            .bind(json(path))
            .bind(now.to_string())
            .execute(&mut *tx)
            .await?;
        }
        let missing = sqlx::query(
            "UPDATE chassis SET state = 'missing', updated_at = $2 \
             WHERE pod_manager = $1 AND last_seen_at < $2 AND state <> 'missing'",
        )
        .bind(pod_manager.as_str())
        .bind(now.to_string())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        drop(writer);
        // Each host's place: written where it changed, one host a statement, outside the
        // transaction above. A sync of the pod manager's systems running at the same time
        // writes its hosts in batches; were these writes one transaction too, the two could
        // each hold hosts the other waits for (PostgreSQL would end one of them for it). A
        // reader may see some hosts placed anew before others, for a moment.
        let wanted: HashMap<String, (ChassisId, Vec<ChassisRef>)> =
            placements(reported, &ids, &paths).into_iter().collect();
        let stored = sqlx::query(
            "SELECT system_id, chassis, chassis_path, rack FROM hosts WHERE pod_manager = $1",
        )
        .bind(pod_manager.as_str())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let mut placed = 0;
        for r in &stored {
            let system: String = r.try_get("system_id")?;
            let now: (Option<String>, Option<String>, Option<String>) = (
                r.try_get("chassis")?,
                r.try_get("chassis_path")?,
                r.try_get("rack")?,
            );
            let want = match wanted.get(&system) {
                Some((id, path)) => {
                    placed += 1;
                    (
                        Some(id.to_string()),
                        Some(json(path)),
                        Some(rack_of(path).to_string()),
                    )
                }
                None => (None, None, None),
            };
            if now == want {
                continue;
            }
            sqlx::query(
                "UPDATE hosts SET chassis = $3, chassis_path = $4, rack = $5 \
                 WHERE pod_manager = $1 AND system_id = $2",
            )
            .bind(pod_manager.as_str())
            .bind(&system)
            .bind(want.0)
            .bind(want.1)
            .bind(want.2)
            .execute(&mut *self.writer().await?)
            .await?;
        }
        Ok(Ok(ChassisSummary {
            seen: reported.len(),
            added,
            missing: missing as usize,
            placed,
        }))
    }

    /// The chassis of a pod manager, in the order they were first seen; only `within` and the
    /// chassis within it where given, only those present where `present_only`.
    pub async fn chassis_list(
        &self,
        pod_manager: &PodManagerId,
        within: Option<&ChassisId>,
        present_only: bool,
        page: &Page,
    ) -> Result<Paged<ChassisRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS}, {} AS hosts FROM chassis WHERE pod_manager = $1 AND id > $2 \
             AND ($4 = '' OR id IN ({})) AND ($5 = 0 OR state = 'present') ORDER BY id LIMIT $3",
            self.chassis_hosts(),
            within_sql(4)
        ))
        .bind(pod_manager.as_str())
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .bind(within.map_or("", ChassisId::as_str))
        .bind(i64::from(present_only))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |c| c.id.to_string()))
    }

    pub async fn chassis_get(&self, id: &ChassisId) -> Result<Option<ChassisRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS}, {} AS hosts FROM chassis WHERE id = $1",
            self.chassis_hosts()
        ))
        .bind(id.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// Where a chassis stands, without its hosts: what validating a chassis a grant or a claim
    /// names needs.
    pub async fn chassis_place(&self, id: &ChassisId) -> Result<Option<ChassisPlace>, StoreError> {
        let r = sqlx::query("SELECT pod_manager, state, path FROM chassis WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.map(|r| {
            Ok(ChassisPlace {
                pod_manager: r.try_get::<String, _>("pod_manager")?.into(),
                state: parse(Some(r.try_get::<String, _>("state")?), "state")?
                    .expect("a present value parses to one"),
                path: decode("path", &r.try_get::<String, _>("path")?)?,
            })
        })
        .transpose()
    }

    /// The hosts in use that chassis `id` may hold, at most `limit` of them by id: in use, a
    /// host a claim holds, one in a state Podium is working in (registering, inspecting,
    /// provisioning, provisioned, deprovisioning) or one with an operation queued or running (an
    /// admin's firmware update of an available host, say); may hold, a host placed in the chassis
    /// or in a chassis within it, and every host of the chassis' pod manager that the tree
    /// places nowhere (`placed` false: a system the service links to no chassis, a composed
    /// node), since it may stand in this one. Available hosts, failed ones and missing ones
    /// with nothing under way are not in use, maintenance or not.
    pub async fn chassis_hosts_in_use(
        &self,
        id: &ChassisId,
        limit: u32,
    ) -> Result<Vec<HostInUse>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT id, name, state, claim_id, \
             CAST(CASE WHEN chassis IS NULL THEN 0 ELSE 1 END AS BIGINT) AS placed FROM hosts \
             WHERE (chassis IN ({}) OR (chassis IS NULL AND pod_manager = \
                    (SELECT pod_manager FROM chassis WHERE id = $1))) \
             AND (claim_id IS NOT NULL OR state NOT IN ('available', 'error', 'missing') \
                  OR EXISTS (SELECT 1 FROM operations o WHERE o.host_id = hosts.id \
                             AND o.status IN ('queued', 'running'))) \
             ORDER BY id LIMIT $2",
            within_sql(1)
        ))
        .bind(id.as_str())
        .bind(i64::from(limit))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(HostInUse {
                    id: r.try_get::<String, _>("id")?.into(),
                    name: r.try_get("name")?,
                    state: parse(Some(r.try_get::<String, _>("state")?), "state")?
                        .expect("a present value parses to one"),
                    claim_id: r.try_get::<Option<String>, _>("claim_id")?.map(Into::into),
                    placed: r.try_get::<i64, _>("placed")? != 0,
                })
            })
            .collect()
    }

    /// Records a chassis' power state as its driver read it just now.
    pub async fn chassis_power_read(
        &self,
        id: &ChassisId,
        power: PowerState,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE chassis SET power_state = $2, updated_at = $3 WHERE id = $1")
            .bind(id.as_str())
            .bind(power.as_str())
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// The ids of the hosts a chassis holds itself, as a JSON array (text).
    fn chassis_hosts(&self) -> &'static str {
        match self.backend {
            super::Backend::Sqlite => {
                "(SELECT COALESCE(json_group_array(h.id), '[]') FROM \
                 (SELECT id FROM hosts WHERE hosts.chassis = chassis.id ORDER BY id) h)"
            }
            super::Backend::Postgres => {
                "(SELECT COALESCE(json_agg(h.id ORDER BY h.id), '[]')::text FROM hosts h \
                 WHERE h.chassis = chassis.id)"
            }
        }
    }
}

/// The SQL subquery of the ids of the chassis `$param` names and of every chassis within it, for
/// `chassis IN (...)`: a rack's hosts, an enclosure's.
pub(crate) fn within_sql(param: usize) -> String {
    format!(
        "WITH RECURSIVE within (id, pod_manager, chassis_id) AS \
         (SELECT id, pod_manager, chassis_id FROM chassis WHERE id = ${param} \
          UNION ALL SELECT c.id, c.pod_manager, c.chassis_id FROM chassis c \
          JOIN within w ON c.pod_manager = w.pod_manager AND c.parent = w.chassis_id) \
         SELECT id FROM within"
    )
}

/// Each reported chassis's path (the chassis it stands in, outermost first), by walking up its
/// parents; `ids` are their Podium ids, in the same order. A parent the answer does not hold
/// ends the walk (the runtime's check already refuses one).
fn paths(reported: &[ChassisReport], ids: &[ChassisId]) -> Result<Vec<Vec<ChassisRef>>, BadTree> {
    let index: HashMap<&str, usize> = reported
        .iter()
        .enumerate()
        .map(|(i, c)| (c.chassis_id.as_str(), i))
        .collect();
    let reference = |i: usize| ChassisRef {
        id: ids[i].clone(),
        name: reported[i].name.clone(),
        chassis_type: reported[i].chassis_type.clone(),
    };
    reported
        .iter()
        .map(|c| {
            let mut path = Vec::new();
            let mut at = c.parent.as_deref().and_then(|p| index.get(p).copied());
            while let Some(i) = at {
                if reported[i].chassis_id == c.chassis_id {
                    return Err(BadTree {
                        chassis: c.chassis_id.clone(),
                        reason: "it stands in itself".into(),
                    });
                }
                if path.len() == CHASSIS_DEPTH_MAX {
                    return Err(BadTree {
                        chassis: c.chassis_id.clone(),
                        reason: format!(
                            "it stands more than {CHASSIS_DEPTH_MAX} chassis deep; Podium keeps \
                             trees up to that depth"
                        ),
                    });
                }
                path.push(reference(i));
                at = reported[i]
                    .parent
                    .as_deref()
                    .and_then(|p| index.get(p).copied());
            }
            path.reverse();
            Ok(path)
        })
        .collect()
}

/// The rack of a host whose path is `path` (outermost first, not empty): the outermost chassis
/// of type `Rack`, else the outermost chassis.
fn rack_of(path: &[ChassisRef]) -> ChassisId {
    path.iter()
        .find(|c| c.chassis_type == "Rack")
        .unwrap_or(&path[0])
        .id
        .clone()
}

/// Where each system stands: the innermost chassis that names it (the one with the longest
/// path; the first reported among equals), with the path to it, that chassis last.
fn placements(
    reported: &[ChassisReport],
    ids: &[ChassisId],
    paths: &[Vec<ChassisRef>],
) -> Vec<(String, (ChassisId, Vec<ChassisRef>))> {
    let mut best: HashMap<&str, usize> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, c) in reported.iter().enumerate() {
        for system in &c.systems {
            match best.get(system.as_str()) {
                Some(&j) if paths[j].len() >= paths[i].len() => {}
                Some(_) => {
                    best.insert(system, i);
                }
                None => {
                    best.insert(system, i);
                    order.push(system);
                }
            }
        }
    }
    order
        .into_iter()
        .map(|system| {
            let i = best[system];
            let mut path = paths[i].clone();
            path.push(ChassisRef {
                id: ids[i].clone(),
                name: reported[i].name.clone(),
                chassis_type: reported[i].chassis_type.clone(),
            });
            (system.to_owned(), (ids[i].clone(), path))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chassis(id: &str, parent: Option<&str>, systems: &[&str]) -> ChassisReport {
        ChassisReport {
            chassis_id: id.into(),
            name: id.trim_start_matches('/').into(),
            chassis_type: "Blade".into(),
            manufacturer: None,
            model: None,
            serial: None,
            location: None,
            power_state: None,
            health: None,
            parent: parent.map(str::to_owned),
            systems: systems.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn names(path: &[ChassisRef]) -> Vec<&str> {
        path.iter().map(|c| c.name.as_str()).collect()
    }

    /// A blade's path is its rack then its enclosure, and a system the enclosure and its blade
    /// both name stands in the blade, whichever is reported first.
    #[test]
    fn a_system_stands_in_the_innermost_chassis_that_names_it() {
        let reported = [
            chassis("/blade", Some("/enclosure"), &["/s1"]),
            chassis("/enclosure", Some("/rack"), &["/s1", "/s2"]),
            chassis("/rack", None, &[]),
        ];
        let ids: Vec<ChassisId> = reported.iter().map(|_| ChassisId::generate()).collect();
        let paths = paths(&reported, &ids).unwrap();
        assert_eq!(names(&paths[0]), ["rack", "enclosure"]);
        assert_eq!(names(&paths[2]), Vec::<&str>::new());
        let placed: HashMap<_, _> = placements(&reported, &ids, &paths).into_iter().collect();
        assert_eq!(placed["/s1"].0, ids[0]);
        assert_eq!(names(&placed["/s1"].1), ["rack", "enclosure", "blade"]);
        assert_eq!(placed["/s2"].0, ids[1]);
        assert_eq!(names(&placed["/s2"].1), ["rack", "enclosure"]);
        // The rack is the outermost chassis of type Rack, else the outermost.
        let mut path = placed["/s1"].1.clone();
        assert_eq!(rack_of(&path), path[0].id);
        path[1].chassis_type = "Rack".into();
        assert_eq!(rack_of(&path), path[1].id);
    }

    /// A loop, and a chain deeper than the store keeps, are refused naming a chassis.
    #[test]
    fn a_loop_or_a_tree_too_deep_is_refused() {
        let reported = [
            chassis("/a", Some("/b"), &[]),
            chassis("/b", Some("/a"), &[]),
        ];
        let ids: Vec<ChassisId> = reported.iter().map(|_| ChassisId::generate()).collect();
        let bad = paths(&reported, &ids).unwrap_err();
        assert_eq!(bad.chassis, "/a");
        assert!(bad.reason.contains("itself"), "{}", bad.reason);

        let deep: Vec<ChassisReport> = (0..=CHASSIS_DEPTH_MAX + 1)
            .map(|i| {
                let parent = (i > 0).then(|| format!("/c{}", i - 1));
                chassis(&format!("/c{i}"), parent.as_deref(), &[])
            })
            .collect();
        let ids: Vec<ChassisId> = deep.iter().map(|_| ChassisId::generate()).collect();
        let bad = paths(&deep, &ids).unwrap_err();
        assert_eq!(bad.chassis, format!("/c{}", CHASSIS_DEPTH_MAX + 1));
        assert!(bad.reason.contains("16 chassis deep"), "{}", bad.reason);
        // Exactly as deep as allowed passes.
        assert!(paths(&deep[..=CHASSIS_DEPTH_MAX], &ids[..=CHASSIS_DEPTH_MAX]).is_ok());
    }
}
