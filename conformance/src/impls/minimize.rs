//! A finding's operations cut down (ddmin) to a few that still show it: a finding of the
//! same signature (role, check, the detail's words), its side alone, on the case's options.

use std::time::{Duration, Instant};

use crate::finding::minimize::ddmin;
use crate::impls::case::{run_ops, CaseRun, CaseSpec, Source};
use crate::impls::report::signature;
use crate::impls::tally::ImplFinding;
use crate::ops::Op;
use crate::setup::env::Env;

/// `f` shown by fewer operations, found within `budget`: the finding of the smallest run
/// that still shows it (`f` itself when none does).
pub fn minimize(env: &Env, spec: &CaseSpec<'_>, f: &ImplFinding, budget: Duration) -> ImplFinding {
    let (seed, _, nops) = spec.case;
    let (opts, _) = crate::cases::generate::generate(seed, f.index, nops);
    let roles = [f.role];
    let one = CaseSpec {
        argv: spec.argv,
        timeout: spec.timeout,
        roles: &roles,
        case: (seed, f.index, nops),
        damaged_trials: spec.damaged_trials,
    };
    let end = Instant::now() + budget;
    let mut best: Option<ImplFinding> = None;
    let mut shows = |ops: &[Op]| {
        if Instant::now() > end {
            return false;
        }
        let Ok(CaseRun::Ran(t)) = run_ops(env, &one, opts, Source::Given(ops)) else {
            return false;
        };
        let same = signature(f);
        let Some(g) = t.findings.into_iter().find(|g| signature(g) == same) else {
            return false;
        };
        if best.as_ref().map_or(true, |b| g.ops.len() <= b.ops.len()) {
            best = Some(g);
        }
        true
    };
    if shows(&f.ops) {
        ddmin(f.ops.clone(), &mut shows);
    }
    best.unwrap_or_else(|| f.clone())
}
