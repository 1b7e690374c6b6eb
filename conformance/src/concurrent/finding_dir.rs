//! The directory a concurrent finding is written to: the configuration, every writer's
//! outcomes, the interleaving that was seen (who committed what under which update index),
//! the findings, a serial replay of the committed operations in commit order (a gate case
//! of its own, `serial/`), a script that runs the configuration again, and the final stack.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::concurrent::config::ConcurrentConfig;
use crate::concurrent::coordinator::{case_options, RunOutput};
use crate::concurrent::evidence::journal_indexes;
use crate::concurrent::spec::{names, Outcome};
use crate::finding::dir::{fresh, rerun_script, write_script, RERUN};
use crate::setup::env::Env;

/// The interleaving: every attempt in commit order (acknowledged transactions by update
/// index; refusals and maintenance by the window they ran in).
fn interleaving(outcomes: &[Outcome], indexes: &BTreeMap<String, u64>) -> String {
    let mut rows: Vec<(u64, u64, String)> = outcomes
        .iter()
        .map(|o| {
            let at = indexes.get(&o.message).copied();
            let key = at.unwrap_or(o.after);
            let what = if o.txn.is_some() {
                let ups: Vec<String> = o
                    .updates
                    .iter()
                    .map(|u| {
                        let v = |x: &Option<crate::ops::Value>| match x {
                            Some(crate::ops::Value::Oid(h)) => h[..8.min(h.len())].to_string(),
                            Some(crate::ops::Value::Symref(t)) => format!("->{t}"),
                            None => "-".into(),
                        };
                        format!("{} {}<-{}", u.refname, v(&u.new), v(&u.old))
                    })
                    .collect();
                format!(
                    "{} {:?} ({}): {}",
                    if o.accepted { "committed" } else { "refused" },
                    o.message,
                    at.map_or(format!("window {}..{}", o.before, o.after), |i| format!(
                        "index {i}"
                    )),
                    ups.join(", ")
                )
            } else {
                format!(
                    "{} {} (window {}..{})",
                    o.what,
                    if o.accepted { "ok" } else { "failed" },
                    o.before,
                    o.after
                )
            };
            let first_line = o.error.lines().next().unwrap_or("");
            let err = if o.accepted || first_line.is_empty() {
                String::new()
            } else {
                format!(" — {first_line}")
            };
            (
                key,
                u64::from(o.writer),
                format!("{key:6} writer {} {:?}: {what}{err}", o.writer, o.kind),
            )
        })
        .collect();
    rows.sort();
    rows.into_iter().map(|(_, _, s)| s + "\n").collect()
}

/// The run as one serial gate case: every acknowledged transaction (and every compaction
/// and expiry that succeeded) in commit order, to replay deterministically with every check
/// of the sequential gate (`conformance replay DIR/serial`).
fn serial_ops(outcomes: &[Outcome], indexes: &BTreeMap<String, u64>) -> Vec<crate::ops::Op> {
    use crate::ops::{Expire, Op};
    let mut rows: Vec<(u64, u64, u32, Op)> = outcomes
        .iter()
        .filter(|o| o.accepted)
        .map(|o| {
            let at = indexes
                .get(&o.message)
                .copied()
                .or(o.index)
                .unwrap_or(o.after);
            let op = match o.what.as_str() {
                "transaction" => Op::Txn {
                    updates: o.updates.clone(),
                    message: o.message.clone(),
                    create_reflog: false,
                },
                "pack-refs" => Op::PackRefs { auto: false },
                "pack-refs --auto" => Op::PackRefs { auto: true },
                _ => Op::ReflogExpire {
                    refname: names::EXPIRY.into(),
                    expire: Expire::All,
                    update_ref: false,
                    unreachable: false,
                },
            };
            // Maintenance goes after the transactions of its window.
            (at, u64::from(o.txn.is_none()), o.writer, op)
        })
        .collect();
    rows.sort_by_key(|(at, m, w, _)| (*at, *m, *w));
    rows.into_iter().map(|(_, _, _, op)| op).collect()
}

/// The directory for `run`'s finding under `base`, named for the seed and the class of its
/// first unexpected finding (or its first finding), created afresh.
fn fresh_dir(base: &Path, cfg: &ConcurrentConfig, run: &RunOutput) -> Result<PathBuf, String> {
    let class = run
        .report
        .findings
        .iter()
        .find(|f| f.expected.is_none())
        .or(run.report.findings.first())
        .map_or("finding".to_string(), |f| f.class.replace(' ', "-"));
    let dir = base.join(format!("concurrent-seed{}-{class}", cfg.seed));
    fresh(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// Replay the committed operations `ops` one at a time as a gate case and write it to
/// `dir/serial`; the line for `findings.txt` that says whether it diverged.
fn serial_replay(
    env: &Env,
    dir: &Path,
    cfg: &ConcurrentConfig,
    ops: Vec<crate::ops::Op>,
) -> Result<String, String> {
    let serial = crate::cases::case::run_concrete(env, case_options(), &ops)?;
    let line = if serial.divergences.is_empty() {
        format!(
            "\nserial replay of the {} committed operations in commit order (serial/): no divergence, so the finding needs the interleaving\n",
            ops.len()
        )
    } else {
        format!(
            "\nserial replay of the {} committed operations in commit order (serial/): {} divergences, first at step {}: {}\n",
            ops.len(),
            serial.divergences.len(),
            serial.divergences[0].step,
            serial.divergences[0].class
        )
    };
    let file = crate::cases::casedir::CaseFile {
        seed: Some(cfg.seed),
        index: None,
        options: case_options(),
        ops,
        divergences: serial.divergences.clone(),
        git_version: env.git.version().to_string(),
        git: Some(env.git.bin().display().to_string()),
    };
    crate::cases::casedir::write(
        &dir.join("serial"),
        &file,
        &serial,
        None,
        Some(env.pool(case_options().hash())),
    )
    .map_err(|e| format!("serial case: {e}"))?;
    Ok(line)
}

/// The [`RERUN`] script: runs `cfg` again (with its planted defect, if any).
fn rerun(env: &Env, cfg: &ConcurrentConfig) -> String {
    rerun_script(
        "Runs the configuration that showed the finding again (the interleaving is up to\nthe scheduler; interleaving.txt has the one that was seen, serial/ replays it in\ncommit order). A planted defect needs a test-hooks build as CONFORMANCE.",
        &cfg.plant
            .as_ref()
            .map_or(String::new(), |p| format!("REFTABLE_PLANT={p} ")),
        cfg.command_line(env.git.bin()).trim_start_matches("conformance "),
    )
}

/// Write the finding of `run` (of configuration `cfg`) to a directory under `base`; its path.
pub(crate) fn write_finding(
    env: &Env,
    base: &Path,
    cfg: &ConcurrentConfig,
    run: &RunOutput,
) -> Result<PathBuf, String> {
    let dir = fresh_dir(base, cfg, run)?;
    let w = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    w(
        "config.json",
        &serde_json::to_string_pretty(cfg).expect("json"),
    )?;
    let mut lines = String::new();
    for o in &run.outcomes {
        lines.push_str(&serde_json::to_string(o).expect("json"));
        lines.push('\n');
    }
    w("outcomes.jsonl", &lines)?;
    let indexes = journal_indexes(&run.repo.path().join(".git/reftable"));
    w("interleaving.txt", &interleaving(&run.outcomes, &indexes))?;
    let mut findings = String::new();
    for f in &run.report.findings {
        findings.push_str(&format!("{}: {}\n", f.class, f.detail));
    }
    // The same transactions one at a time, in the order they committed.
    let ops = serial_ops(&run.outcomes, &indexes);
    findings.push_str(&serial_replay(env, &dir, cfg, ops)?);
    w("findings.txt", &findings)?;
    write_script(&dir.join(RERUN), &rerun(env, cfg)).map_err(|e| format!("{RERUN}: {e}"))?;
    crate::stack_files::copy_dir(
        &run.repo.path().join(".git/reftable"),
        &dir.join("stack"),
        None,
    )?;
    Ok(dir)
}
