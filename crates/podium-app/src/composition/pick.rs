//! Which resource blocks a composed node takes: the blocks an admin named, checked against the
//! service's rules before anything is sent, or blocks Podium picks for a requirement.
//!
//! The rules are DSP0268's, as the service states them: every block free (unused, or shared
//! below its `MaxCompositions`) and not reserved; every block in one zone the service offers for
//! composition; the count of blocks of each `ResourceBlockType` within
//! `@Redfish.ResourceBlockLimits` (a block of two types counts for each).

use std::collections::BTreeSet;

use podium_runtime::{CompositionService, CompositionState, ResourceBlock};
use podium_types::requests::CompositionRequirement;

/// Why blocks cannot be composed: a message naming the block, the zone or the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// A block named is not the service's.
    #[error("the service has no resource block `{0}`")]
    Unknown(String),
    /// A block named twice.
    #[error("resource block `{0}` is named twice")]
    Twice(String),
    /// A block named is taken or reserved.
    #[error("{0}")]
    Taken(String),
    /// The blocks named share no zone offered for composition, or break a limit.
    #[error("{0}")]
    Rules(String),
    /// No zone has free blocks enough for the requirement.
    #[error("{0}")]
    NoFit(String),
}

/// What a node is composed of: the zone its blocks share and the blocks, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Picked {
    pub zone: String,
    pub blocks: Vec<String>,
}

/// Whether a block can go into one more system.
fn free(b: &ResourceBlock) -> bool {
    !b.reserved
        && match b.state {
            CompositionState::Unused => true,
            CompositionState::ComposedAndAvailable => b.compositions < b.max_compositions,
            _ => false,
        }
}

/// The first limit `blocks` break, in words; `complete` where no block will be added (a
/// minimum counts only then).
fn broken_limit(
    service: &CompositionService,
    blocks: &[&ResourceBlock],
    complete: bool,
) -> Option<String> {
    service.limits.iter().find_map(|limit| {
        let count = blocks
            .iter()
            .filter(|b| b.block_types.contains(&limit.block_type))
            .count() as u32;
        let kind = limit.block_type.as_str();
        match (limit.min, limit.max) {
            (Some(min), _) if complete && count < min => Some(format!(
                "{count} {kind} blocks: the service composes a system of at least {min}"
            )),
            (_, Some(max)) if count > max => Some(format!(
                "{count} {kind} blocks: the service composes a system of at most {max}"
            )),
            _ => None,
        }
    })
}

/// Checks the blocks an admin named against the service's rules: the zone they share (the first
/// the service offers, of those they all are in).
pub(crate) fn check(service: &CompositionService, named: &[String]) -> Result<Picked, Refused> {
    let mut seen = BTreeSet::new();
    let mut blocks = Vec::with_capacity(named.len());
    for id in named {
        if !seen.insert(id.as_str()) {
            return Err(Refused::Twice(id.clone()));
        }
        let block = service
            .blocks
            .iter()
            .find(|b| b.id == *id)
            .ok_or_else(|| Refused::Unknown(id.clone()))?;
        if !free(block) {
            return Err(Refused::Taken(taken(block)));
        }
        blocks.push(block);
    }
    let zone = service
        .offered_zones
        .iter()
        .find(|z| blocks.iter().all(|b| b.zones.contains(z)))
        .ok_or_else(|| {
            Refused::Rules(
                "the blocks share no resource zone the service offers for composition: every \
                 block of a system must be in one"
                    .into(),
            )
        })?;
    if let Some(broken) = broken_limit(service, &blocks, true) {
        return Err(Refused::Rules(broken));
    }
    Ok(Picked {
        zone: zone.clone(),
        blocks: named.to_vec(),
    })
}

/// Why a block is not free, in words.
fn taken(b: &ResourceBlock) -> String {
    if b.reserved {
        return format!("resource block `{}` is reserved", b.id);
    }
    match b.systems.first() {
        Some(system) => format!("resource block `{}` is composed into {system}", b.id),
        None => format!(
            "resource block `{}` is not free (its state is {:?})",
            b.id, b.state
        ),
    }
}

/// What blocks hold, summed, in the requirement's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Held {
    processors: u64,
    cores: u64,
    memory_mib: u64,
    drives: u64,
    drive_bytes: u64,
    nics: u64,
}

impl Held {
    fn of(b: &ResourceBlock) -> Held {
        Held {
            processors: u64::from(b.processors),
            cores: u64::from(b.cores),
            memory_mib: b.memory_mib,
            drives: u64::from(b.drives),
            drive_bytes: b.drive_bytes,
            nics: u64::from(b.nics),
        }
    }

    fn add(&mut self, other: Held) {
        self.processors += other.processors;
        self.cores += other.cores;
        self.memory_mib += other.memory_mib;
        self.drives += other.drives;
        self.drive_bytes += other.drive_bytes;
        self.nics += other.nics;
    }

    fn pairs(self, need: &CompositionRequirement) -> [(u64, u64); 6] {
        [
            (self.processors, u64::from(need.processors.unwrap_or(0))),
            (self.cores, u64::from(need.cores.unwrap_or(0))),
            (self.memory_mib, need.memory_mib.unwrap_or(0)),
            (self.drives, u64::from(need.drives.unwrap_or(0))),
            (self.drive_bytes, need.drive_bytes.unwrap_or(0)),
            (self.nics, u64::from(need.nics.unwrap_or(0))),
        ]
    }

    fn meets(self, need: &CompositionRequirement) -> bool {
        self.pairs(need).iter().all(|(have, want)| have >= want)
    }

    /// How much of what is still missing `block` would bring, each need counted up to 1.
    fn gain(self, block: Held, need: &CompositionRequirement) -> f64 {
        self.pairs(need)
            .iter()
            .zip(block.pairs(need))
            .filter(|((have, want), _)| have < want)
            .map(|((have, want), (brings, _))| (brings.min(want - have)) as f64 / *want as f64)
            .sum()
    }

    /// The blocks' whole size, to prefer small blocks among equals (nothing wasted).
    fn size(self) -> u64 {
        self.processors + self.cores + self.memory_mib / 1024 + self.drives + self.nics
    }
}

/// Picks free, unused blocks that meet `need` within one offered zone and the limits: in each
/// zone, first the smallest blocks the minimums ask for, then the block that brings most of what
/// is still missing, until nothing is; of the zones that fit, the one needing fewest blocks
/// (the first offered among equals). Shared blocks are taken only when named.
pub(crate) fn pick(
    service: &CompositionService,
    need: &CompositionRequirement,
) -> Result<Picked, Refused> {
    let mut best: Option<Picked> = None;
    for zone in &service.offered_zones {
        let mut free: Vec<&ResourceBlock> = service
            .blocks
            .iter()
            .filter(|b| {
                b.zones.contains(zone) && !b.reserved && b.state == CompositionState::Unused
            })
            .collect();
        free.sort_by(|a, b| {
            Held::of(a)
                .size()
                .cmp(&Held::of(b).size())
                .then(a.id.cmp(&b.id))
        });
        if let Some(found) = fill(service, &free, need)
            && best.as_ref().is_none_or(|b| found.len() < b.blocks.len())
        {
            best = Some(Picked {
                zone: zone.clone(),
                blocks: found.iter().map(|b| b.id.clone()).collect(),
            });
        }
    }
    best.ok_or_else(|| {
        Refused::NoFit(
            "no resource zone has free blocks enough for the requirement within the service's \
             limits"
                .into(),
        )
    })
}

/// Blocks of `free` (smallest first) that meet `need` and the limits, or none.
fn fill<'a>(
    service: &CompositionService,
    free: &[&'a ResourceBlock],
    need: &CompositionRequirement,
) -> Option<Vec<&'a ResourceBlock>> {
    let mut chosen: Vec<&ResourceBlock> = Vec::new();
    let mut held = Held::default();
    let take = |b: &'a ResourceBlock, chosen: &mut Vec<&'a ResourceBlock>, held: &mut Held| {
        chosen.push(b);
        held.add(Held::of(b));
    };
    // The minimums first: of each type, the block that brings most of the requirement (a
    // compute block of 16 cores for 12, where the limit is one compute block), the smallest
    // among equals.
    for limit in &service.limits {
        let Some(min) = limit.min else { continue };
        while (chosen
            .iter()
            .filter(|b| b.block_types.contains(&limit.block_type))
            .count() as u32)
            < min
        {
            let next = best_gain(free, &chosen, held, need, |b| {
                b.block_types.contains(&limit.block_type) && within_max(service, &chosen, b)
            })?;
            take(next, &mut chosen, &mut held);
        }
    }
    while !held.meets(need) {
        let next = best_gain(free, &chosen, held, need, |b| {
            held.gain(Held::of(b), need) > 0.0 && within_max(service, &chosen, b)
        })?;
        take(next, &mut chosen, &mut held);
    }
    broken_limit(service, &chosen, true)
        .is_none()
        .then_some(chosen)
}

/// Of the blocks of `free` (smallest first) not chosen yet that `fits` takes, the first of
/// those that bring most of what `held` still lacks.
fn best_gain<'a>(
    free: &[&'a ResourceBlock],
    chosen: &[&ResourceBlock],
    held: Held,
    need: &CompositionRequirement,
    fits: impl Fn(&ResourceBlock) -> bool,
) -> Option<&'a ResourceBlock> {
    free.iter()
        .filter(|b| !chosen.iter().any(|c| c.id == b.id) && fits(b))
        .map(|b| (held.gain(Held::of(b), need), *b))
        .fold(
            None::<(f64, &ResourceBlock)>,
            |best, (gain, b)| match best {
                Some((g, _)) if g >= gain => best,
                _ => Some((gain, b)),
            },
        )
        .map(|(_, b)| b)
}

/// Whether `chosen` and `block` keep within every maximum.
fn within_max(
    service: &CompositionService,
    chosen: &[&ResourceBlock],
    block: &ResourceBlock,
) -> bool {
    let mut with: Vec<&ResourceBlock> = chosen.to_vec();
    with.push(block);
    broken_limit(service, &with, false).is_none()
}

/// Each system the service's blocks are composed into, with its blocks (in the service's order)
/// and their zone: the first offered zone they all are in, else the first they all are in, else
/// none (empty).
pub(crate) fn composed_systems(service: &CompositionService) -> Vec<crate::data::Composed> {
    let mut systems: Vec<crate::data::Composed> = Vec::new();
    let mut blocks_of: Vec<Vec<&ResourceBlock>> = Vec::new();
    for block in &service.blocks {
        for system in &block.systems {
            match systems.iter().position(|s| s.system_id == *system) {
                Some(i) => {
                    systems[i].blocks.push(block.id.clone());
                    blocks_of[i].push(block);
                }
                None => {
                    systems.push(crate::data::Composed {
                        system_id: system.clone(),
                        zone: String::new(),
                        blocks: vec![block.id.clone()],
                    });
                    blocks_of.push(vec![block]);
                }
            }
        }
    }
    for (system, blocks) in systems.iter_mut().zip(&blocks_of) {
        let shared = |z: &&String| blocks.iter().all(|b| b.zones.contains(z));
        system.zone = service
            .offered_zones
            .iter()
            .find(shared)
            .or_else(|| blocks[0].zones.iter().find(shared))
            .cloned()
            .unwrap_or_default();
    }
    systems
}

#[cfg(test)]
mod tests {
    use super::*;
    use podium_runtime::BlockType;
    use podium_runtime::{BlockLimit, ResourceZone};

    fn block(id: &str, types: &[BlockType], zones: &[&str], held: Held) -> ResourceBlock {
        ResourceBlock {
            id: id.into(),
            name: id.into(),
            block_types: types.to_vec(),
            state: CompositionState::Unused,
            reserved: false,
            max_compositions: 1,
            compositions: 0,
            zones: zones.iter().map(|z| (*z).to_owned()).collect(),
            processors: held.processors as u32,
            cores: held.cores as u32,
            memory_mib: held.memory_mib,
            drives: held.drives as u32,
            drive_bytes: held.drive_bytes,
            nics: held.nics as u32,
            systems: Vec::new(),
        }
    }

    fn compute(cores: u64, memory_mib: u64) -> Held {
        Held {
            processors: 1,
            cores,
            memory_mib,
            ..Held::default()
        }
    }

    fn drives(n: u64) -> Held {
        Held {
            drives: n,
            drive_bytes: n << 40,
            ..Held::default()
        }
    }

    /// The mockup's shape: two zones, compute blocks in each, a storage block in one; one
    /// compute block a system, up to eight storage blocks.
    fn service() -> CompositionService {
        CompositionService {
            blocks: vec![
                block("c1", &[BlockType::Compute], &["z1"], compute(8, 32768)),
                block("c2", &[BlockType::Compute], &["z2"], compute(16, 65536)),
                block("d1", &[BlockType::Storage], &["z1"], drives(1)),
                block("d2", &[BlockType::Storage], &["z1"], drives(2)),
                block("d3", &[BlockType::Storage], &["z2"], drives(1)),
                block(
                    "n1",
                    &[BlockType::Network],
                    &["z1"],
                    Held {
                        nics: 2,
                        ..Held::default()
                    },
                ),
            ],
            zones: ["z1", "z2"]
                .map(|z| ResourceZone {
                    id: z.into(),
                    name: z.into(),
                })
                .to_vec(),
            offered_zones: vec!["z1".into(), "z2".into()],
            limits: vec![
                BlockLimit {
                    block_type: BlockType::Compute,
                    min: Some(1),
                    max: Some(1),
                },
                BlockLimit {
                    block_type: BlockType::Storage,
                    min: None,
                    max: Some(8),
                },
            ],
        }
    }

    fn need(f: impl FnOnce(&mut CompositionRequirement)) -> CompositionRequirement {
        let mut need = CompositionRequirement::default();
        f(&mut need);
        need
    }

    #[test]
    fn a_requirement_takes_the_fewest_blocks_of_one_zone() {
        let s = service();
        let picked = pick(&s, &need(|n| n.drives = Some(2))).unwrap();
        assert_eq!(picked.zone, "z1");
        assert_eq!(
            picked.blocks,
            ["c1", "d2"],
            "the compute block the minimum asks, one block of two drives"
        );
        let picked = pick(&s, &need(|n| n.cores = Some(12))).unwrap();
        assert_eq!(
            (picked.zone.as_str(), picked.blocks.as_slice()),
            ("z2", &["c2".to_owned()][..])
        );
        let picked = pick(
            &s,
            &need(|n| {
                n.drives = Some(3);
                n.nics = Some(1);
            }),
        )
        .unwrap();
        assert_eq!(
            picked.blocks,
            ["c1", "n1", "d2", "d1"],
            "the NIC brings all it lacks, then the most drives"
        );
    }

    /// With one compute block a system, the one that has the cores asked for is taken, not the
    /// smallest.
    #[test]
    fn a_minimum_is_met_with_the_block_the_requirement_needs() {
        let mut s = service();
        s.blocks.push(block(
            "c3",
            &[BlockType::Compute],
            &["z1"],
            compute(16, 65536),
        ));
        let picked = pick(
            &s,
            &need(|n| {
                n.cores = Some(12);
                n.drives = Some(1);
            }),
        )
        .unwrap();
        assert_eq!(picked.zone, "z1");
        assert_eq!(picked.blocks, ["c3", "d1"]);
        // Asking for no cores, the smallest compute block.
        let picked = pick(&s, &need(|n| n.drives = Some(1))).unwrap();
        assert_eq!(picked.blocks, ["c1", "d1"]);
    }

    #[test]
    fn what_no_zone_holds_or_the_limits_forbid_does_not_fit() {
        let s = service();
        // Sixteen cores and three drives: z2 has the cores, z1 the drives.
        let refused = pick(
            &s,
            &need(|n| {
                n.cores = Some(16);
                n.drives = Some(3);
            }),
        );
        assert!(matches!(refused, Err(Refused::NoFit(_))), "{refused:?}");
        // Two compute blocks' cores: the limit is one compute block.
        let refused = pick(&s, &need(|n| n.cores = Some(20)));
        assert!(matches!(refused, Err(Refused::NoFit(_))), "{refused:?}");
        // A taken block is not picked.
        let mut s = service();
        s.blocks[1].state = CompositionState::Composed;
        assert!(pick(&s, &need(|n| n.cores = Some(12))).is_err());
    }

    #[test]
    fn named_blocks_are_checked_against_the_rules() {
        let mut s = service();
        assert_eq!(check(&s, &["c1".into(), "d1".into()]).unwrap().zone, "z1");
        assert_eq!(
            check(&s, &["c9".into()]),
            Err(Refused::Unknown("c9".into()))
        );
        assert_eq!(
            check(&s, &["c1".into(), "c1".into()]),
            Err(Refused::Twice("c1".into()))
        );
        let rules = check(&s, &["c1".into(), "d3".into()]).unwrap_err();
        assert!(rules.to_string().contains("zone"), "{rules}");
        let rules = check(&s, &["d1".into()]).unwrap_err();
        assert!(rules.to_string().contains("0 Compute blocks"), "{rules}");
        s.blocks[0].state = CompositionState::Composed;
        s.blocks[0].systems = vec!["/redfish/v1/Systems/x".into()];
        let taken = check(&s, &["c1".into(), "d1".into()]).unwrap_err();
        assert_eq!(
            taken.to_string(),
            "resource block `c1` is composed into /redfish/v1/Systems/x"
        );
    }
}
