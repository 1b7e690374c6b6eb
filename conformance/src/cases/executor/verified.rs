//! Our verify (`reftable::fsck`, what `reftable verify` runs) on git's stack on git's turns
//! (`git_turns.rs`: one change in three, and a case's last state): a stack git wrote is sound, so any finding is a false report of ours (or
//! a git defect to register). Each stack checked is labelled with its update-index layout
//! (one table or several, a table spanning several update indexes, a gap between tables), so
//! that the variant table shows which layouts reached the check.

use reftable::fsck;

use crate::finding::divergence::Check;

use crate::cases::executor::Executor;
use crate::stack_files::Tables;

/// The update-index range `(min, max)` a table's name gives (`0x<min>-0x<max>-<random>`).
fn range_of(name: &str) -> Option<(u64, u64)> {
    let mut parts = name.split('-');
    let mut field = || u64::from_str_radix(parts.next()?.strip_prefix("0x")?, 16).ok();
    Some((field()?, field()?))
}

/// The layout labels of a stack whose tables have the update-index `ranges`, in order.
pub(crate) fn layouts(ranges: &[(u64, u64)]) -> Vec<&'static str> {
    let mut out = vec![match ranges.len() {
        0 => "verify: an empty stack",
        1 => "verify: one table",
        _ => "verify: several tables",
    }];
    if ranges.iter().any(|(min, max)| max > min) {
        out.push("verify: a table of several update indexes");
    }
    if ranges.windows(2).any(|w| w[1].0 == w[0].1 + 1) {
        out.push("verify: tables with consecutive update indexes");
    }
    if ranges.windows(2).any(|w| w[1].0 > w[0].1 + 1) {
        out.push("verify: a gap in update indexes between tables");
    }
    out
}

impl Executor<'_> {
    /// Our verify on git's stack (`tables`, its listed tables), when it changed since the
    /// last one (`fp`, its fingerprint); `false` when it found something.
    pub(crate) fn check_our_verify(&mut self, tables: &Tables, fp: u64) -> bool {
        if self.verified == Some(fp) {
            return true;
        }
        self.verified = Some(fp);
        self.count(Check::OurVerify);
        let ranges: Vec<(u64, u64)> = tables.iter().filter_map(|t| range_of(&t.0)).collect();
        for label in layouts(&ranges) {
            *self.result.variants.entry(label.to_string()).or_default() += 1;
        }
        let dir = self.repo.path().join(".git/reftable");
        let said = match fsck::check_stack(&dir, Some(self.hash)) {
            Ok(report) if report.count() == 0 => return true,
            Ok(report) => (report.findings())
                .take(3)
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("; "),
            Err(e) => format!("{e:#}"),
        };
        self.diverge(
            Check::OurVerify,
            "our verify rejects git's stack",
            format!("{} tables, update indexes {ranges:?}: {said}", tables.len()),
        );
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_name_each_arrangement_of_update_indexes() {
        assert_eq!(
            range_of("0x000000000001-0x00000000000a-5b1e0c6d.ref"),
            Some((1, 10))
        );
        assert_eq!(layouts(&[]), ["verify: an empty stack"]);
        assert_eq!(layouts(&[(3, 3)]), ["verify: one table"]);
        assert_eq!(
            layouts(&[(1, 4), (5, 5), (8, 8)]),
            [
                "verify: several tables",
                "verify: a table of several update indexes",
                "verify: tables with consecutive update indexes",
                "verify: a gap in update indexes between tables",
            ]
        );
    }
}
