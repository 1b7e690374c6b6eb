//! Point lookups after each step: the per-step snapshots iterate, so a defect that only
//! shows when a ref is looked up by name (an index descent on a key equal to an index key,
//! a restart binary search off by one) would pass them. Here every ref the step touched, and
//! the first and last ref of the ref blocks of each new table (the keys index records are
//! made of; a sample spread over the table) with a neighbour that does not exist, are
//! looked up by name: through our point-lookup path on both stacks (`RefDb::read_ref`,
//! `RefDb::reflog`) and through git's (`update-ref --stdin` `verify` commands, prepared and
//! aborted; of the touched names, a sample), and compared with the listing.

use std::collections::BTreeSet;
use std::path::PathBuf;

use reftable::refname::is_valid_refname;
use reftable::walk::for_each_record;
use reftable::{RefRecord, Table};

use crate::finding::divergence::Check;

use crate::cases::executor::Executor;
use crate::git::driver::TxnResult;
use crate::snapshot::{SLog, SValue, Snapshot};

/// At most this many sampled (not touched) names per step.
const SAMPLE: usize = 48;

/// At most this many of the names a step touched are verified by git on its turn (all of
/// them by our lookups): a transaction of 300 refs made git's verify of them all cost 30 to
/// 120 ms, for the same lookup paths a few dozen names take.
pub(crate) const GIT_TOUCHED: usize = 24;

/// At most `k` of `names`, spread evenly over their order (the first always among them).
pub(crate) fn spread<T: Clone + Ord>(names: &BTreeSet<T>, k: usize) -> BTreeSet<T> {
    if names.len() <= k {
        return names.clone();
    }
    let step = names.len().div_ceil(k);
    names.iter().step_by(step).cloned().collect()
}

/// The first and last ref name of every ref block of `tables`, and for each last name a
/// name just after it that sorts before the next block (`name` + `-`).
fn block_edges(tables: &[Table]) -> BTreeSet<Vec<u8>> {
    let mut out = BTreeSet::new();
    for t in tables {
        let ctx = t.codec_context();
        let mut walk = t.blocks();
        while let Some(Ok((info, data))) = walk.next_block() {
            // The ref blocks open a table; the first block of another type ends them (and
            // the walk, before it inflates the log blocks).
            if info.block_type != reftable::codec::format::BlockType::Ref {
                break;
            }
            let (mut first, mut last) = (None, Vec::new());
            for_each_record::<RefRecord>(&info, data, &ctx, |r| {
                if first.is_none() {
                    first = Some(r.key.to_vec());
                }
                last.clear();
                last.extend_from_slice(r.key);
            });
            out.extend(first);
            if !last.is_empty() {
                if last.contains(&b'/') {
                    let mut after = last.clone();
                    after.push(b'-');
                    out.insert(after);
                }
                out.insert(last);
            }
        }
    }
    out
}

/// The `update-ref --stdin` command that checks `name` as `s` has it, without following
/// symrefs (a verify through a symref and one of its target would be two updates of one ref,
/// which git refuses): `verify <name> <id>` (the null id for a missing ref), `symref-verify
/// <name> <target>` for a symref that resolves where git has the command (2.46+), else
/// nothing. `batch` holds the other names verified in the same transaction.
fn verify_line(
    s: &Snapshot,
    batch: &BTreeSet<String>,
    name: &str,
    null: &str,
    symref_commands: bool,
) -> Option<String> {
    match s.refs.get(name) {
        // git checks a verify of a missing ref for directory/file conflicts as if it created
        // it (against the refs and the transaction's other names): such names are left to
        // our lookups.
        None if df_conflict(s.refs.keys(), name) || df_conflict(batch.iter(), name) => None,
        None => Some(format!("verify {name} {null}\n")),
        Some(SValue::Oid(id, _)) => Some(format!("verify {name} {id}\n")),
        // git cannot read a symref in a loop or too deep a chain ("error reading reference").
        Some(SValue::Symref(t)) if symref_commands && resolves(s, name) => {
            Some(format!("option no-deref\nsymref-verify {name} {t}\n"))
        }
        Some(SValue::Symref(_)) => None,
    }
}

/// Whether `name`'s symref chain ends (at a ref or a missing name) within git's reads.
fn resolves(s: &Snapshot, name: &str) -> bool {
    let mut n = name;
    for _ in 0..crate::model::SYMREF_READS {
        match s.refs.get(n) {
            Some(SValue::Symref(t)) => n = t,
            _ => return true,
        }
    }
    false
}

/// Whether one of `names` is a directory prefix of `name`, or `name` one of theirs.
fn df_conflict<'a>(names: impl Iterator<Item = &'a String>, name: &str) -> bool {
    let dir = format!("{name}/");
    names.into_iter().any(|k| {
        k.starts_with(&dir)
            || (name.starts_with(k.as_str()) && name.as_bytes().get(k.len()) == Some(&b'/'))
    })
}

/// Whether git's `update-ref` takes `name`: names with a directory, and one-level names in
/// root-ref syntax (upper case and `_`), except `FETCH_HEAD` and `MERGE_HEAD`, which git
/// reads from files in `.git`, never from the stack.
fn git_takes(name: &str) -> bool {
    if !is_valid_refname(name.as_bytes(), true) {
        return false;
    }
    name.contains('/')
        || (name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
            && !matches!(name, "FETCH_HEAD" | "MERGE_HEAD"))
}

/// The valid block-edge names (at most [`SAMPLE`], spread over the key space) of those
/// `tables` not in `seen`, which then holds the tables given (and no others): a table's
/// edges are sampled once, when it is new, since an unchanged table answers the same keys
/// the same way.
fn fresh_edges(tables: &[Table], seen: &mut BTreeSet<PathBuf>) -> BTreeSet<String> {
    let fresh: Vec<Table> = tables
        .iter()
        .filter(|t| !seen.contains(t.name()))
        .cloned()
        .collect();
    *seen = tables.iter().map(|t| t.name().to_path_buf()).collect();
    let valid: BTreeSet<String> = block_edges(&fresh)
        .iter()
        .filter(|n| is_valid_refname(n, true))
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    spread(&valid, SAMPLE)
}

impl Executor<'_> {
    /// Look up the names `op` touched and the edges of the tables new since the last
    /// lookups, by name: ours on every step (and the reflogs of `log_names`), git's when
    /// `git_too`.
    pub(crate) fn check_lookups(
        &mut self,
        ours: &Snapshot,
        op_names: &[String],
        git_too: bool,
        log_names: &[String],
    ) {
        let touched: BTreeSet<String> = op_names
            .iter()
            .filter(|n| is_valid_refname(n.as_bytes(), true))
            .cloned()
            .collect();
        let tables = self.db.stack().tables();
        let mut names = touched.clone();
        names.extend(fresh_edges(tables, &mut self.edges_ours));
        self.count(Check::Lookups);
        if let Some((class, detail)) = self.our_lookups(ours, &names, log_names) {
            self.diverge(Check::Lookups, class, detail);
            return;
        }
        if !git_too {
            return;
        }
        let mut names = spread(&touched, GIT_TOUCHED);
        names.extend(fresh_edges(self.db.stack().tables(), &mut self.edges_git));
        let null = self.null.to_string();
        let symref_commands = self.env.profile.features.symref_commands;
        // git counts an update of HEAD's referent as one of HEAD too (for HEAD's reflog), so
        // HEAD is verified in a transaction of its own.
        let batch: BTreeSet<String> = names.iter().filter(|n| git_takes(n)).cloned().collect();
        let line = |n: &String| verify_line(ours, &batch, n, &null, symref_commands);
        // gits before 2.51.1 also check the old target of a symref-verify of HEAD's referent
        // against HEAD ("cannot lock ref 'HEAD': reference already exists"; fixed by
        // 046c67325c): HEAD's referent is left to our lookups when it is a symref.
        let head_referent = match ours.refs.get("HEAD") {
            Some(SValue::Symref(t)) if matches!(ours.refs.get(t), Some(SValue::Symref(_))) => {
                Some(t.as_str())
            }
            _ => None,
        };
        let usable = || {
            names
                .iter()
                .filter(|n| git_takes(n) && Some(n.as_str()) != head_referent)
        };
        let head: String = usable().filter(|n| *n == "HEAD").filter_map(line).collect();
        let rest: String = usable().filter(|n| *n != "HEAD").filter_map(line).collect();
        for lines in [head, rest] {
            if lines.is_empty() {
                continue;
            }
            if let TxnResult::Failed(exit, err) = self.git_verify(&lines) {
                let detail = format!(
                    "git update-ref verify ({exit:?}): {}; verified:\n{lines}",
                    err.trim()
                );
                self.diverge(Check::Lookups, "git lookup mismatch", detail);
                return;
            }
        }
    }

    /// Our point lookups (on our stack and on git's) of `names`, and reflog seeks of those
    /// of `log_names`, against the listing `ours`: the first disagreement.
    fn our_lookups(
        &self,
        ours: &Snapshot,
        names: &BTreeSet<String>,
        log_names: &[String],
    ) -> Option<(&'static str, String)> {
        for name in names {
            let want = ours.refs.get(name);
            for (which, db) in [
                ("ours", &self.db),
                ("our reader on git's stack", &self.git_db),
            ] {
                let got = match db.read_ref(name.as_bytes()) {
                    Ok(r) => r.and_then(|r| SValue::of(&r.value)),
                    Err(e) => {
                        return Some(("lookup error", format!("{which}: read_ref({name}): {e:#}")));
                    }
                };
                if got.as_ref() != want {
                    let detail =
                        format!("{which}: read_ref({name}) = {got:?}, the listing has {want:?}");
                    return Some(("lookup mismatch", detail));
                }
            }
            if log_names.contains(name) {
                let want = ours.logs.get(name).cloned().unwrap_or_default();
                let got: Result<Vec<SLog>, _> = self.db.reflog(name.as_bytes()).and_then(|it| {
                    it.filter_map(|l| match l {
                        Ok(l) => match &l.value {
                            reftable::LogValue::Update(u) => Some(Ok(SLog::of(u))),
                            reftable::LogValue::Deletion => None,
                        },
                        Err(e) => Some(Err(e)),
                    })
                    .collect()
                });
                match got {
                    Ok(got) if got == want => {}
                    Ok(got) => {
                        let detail = format!(
                            "reflog({name}): {} entries by seek, {} in the listing",
                            got.len(),
                            want.len()
                        );
                        return Some(("reflog lookup mismatch", detail));
                    }
                    Err(e) => {
                        return Some(("lookup error", format!("reflog({name}): {e:#}")));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_sample_keeps_the_first_and_reaches_the_end() {
        let names: BTreeSet<u32> = (0..300).collect();
        let sample = spread(&names, GIT_TOUCHED);
        assert!(sample.len() <= GIT_TOUCHED && sample.len() >= GIT_TOUCHED - 2);
        assert!(
            sample.contains(&0) && sample.iter().any(|&n| n >= 280),
            "{sample:?}"
        );
        let few: BTreeSet<u32> = (0..5).collect();
        assert_eq!(spread(&few, GIT_TOUCHED), few);
    }

    #[test]
    fn verify_lines_check_each_ref_itself() {
        let mut s = Snapshot::default();
        let oid = |c: char| c.to_string().repeat(40);
        s.refs
            .insert("refs/heads/a".into(), SValue::Oid(oid('a'), None));
        s.refs
            .insert("HEAD".into(), SValue::Symref("refs/heads/a".into()));
        let null = oid('0');
        let batch = BTreeSet::new();
        let line = |n: &str, symrefs: bool| verify_line(&s, &batch, n, &null, symrefs);
        assert_eq!(
            line("refs/heads/a", true).unwrap(),
            format!("verify refs/heads/a {}\n", oid('a'))
        );
        assert_eq!(
            line("refs/nothing", false).unwrap(),
            format!("verify refs/nothing {null}\n")
        );
        assert_eq!(
            line("HEAD", true).unwrap(),
            "option no-deref\nsymref-verify HEAD refs/heads/a\n"
        );
        assert_eq!(line("HEAD", false), None);
        assert_eq!(
            line("refs/heads", true),
            None,
            "a directory of refs/heads/a"
        );
        assert_eq!(line("refs/heads/a/b", true), None, "under refs/heads/a");
        let batch: BTreeSet<String> = ["refs/x/y".to_string()].into();
        assert_eq!(
            verify_line(&s, &batch, "refs/x", &null, true),
            None,
            "beside refs/x/y"
        );
        s.refs
            .insert("refs/loop".into(), SValue::Symref("refs/loop".into()));
        assert_eq!(
            verify_line(&s, &batch, "refs/loop", &null, true),
            None,
            "a loop"
        );
        assert!(git_takes("HEAD") && git_takes("ORIG_HEAD") && git_takes("refs/heads/a-"));
        assert!(!git_takes("HEAD-") && !git_takes("FETCH_HEAD") && !git_takes("lower"));
    }
}
