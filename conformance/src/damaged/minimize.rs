//! Minimizing a finding's damage: fewer edits while the finding remains, then a
//! `tables.list` that names only the damaged tables.

use std::path::Path;

use crate::setup::env::Env;

use super::base::Base;
use super::config::DamageConfig;
use super::damage::{Damage, Edit};
use super::observe::observe;
use super::signature::{signature, Key};
use super::trial::Trial;

/// Does `damage` on `base` still show the finding `key` (same side, class, command,
/// signature)?
fn reproduces(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    damage: &Damage,
    dir: &Path,
    key: &Key,
) -> bool {
    let Ok(t) = Trial::prepare(base, damage, dir) else {
        return false;
    };
    let (obs, _) = observe(env, cfg, base, &t);
    obs.iter()
        .any(|o| key.covers(o) && signature(env, cfg, base, &t, o) == key.signature)
}

/// Fewer edits, then fewer tables: drop each edit while the finding remains; then try
/// `tables.list` naming only the damaged tables.
pub(crate) fn minimize(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    mut damage: Damage,
    dir: &Path,
    key: &Key,
) -> Damage {
    let mut i = 0;
    while damage.edits.len() > 1 && i < damage.edits.len() {
        let mut d = damage.clone();
        d.edits.remove(i);
        if reproduces(env, cfg, base, &d, dir, key) {
            damage = d;
        } else {
            i += 1;
        }
    }
    if damage.edits.iter().all(|e| e.file != "tables.list") {
        let keep: Vec<&str> = damage.edits.iter().map(|e| e.file.as_str()).collect();
        let list = std::fs::read_to_string(base.repo.join(".git/reftable/tables.list"))
            .unwrap_or_default();
        let lines: Vec<&str> = list.lines().filter(|l| keep.contains(l)).collect();
        if lines.len() < list.lines().count() {
            let new: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let mut d = damage.clone();
            d.edits.insert(
                0,
                Edit {
                    file: "tables.list".into(),
                    kind: "list-only-damaged-tables".into(),
                    at: 0,
                    remove: usize::MAX,
                    insert: new.into_bytes(),
                    fix_crc: false,
                },
            );
            if reproduces(env, cfg, base, &d, dir, key) {
                damage = d;
            }
        }
    }
    damage
}
