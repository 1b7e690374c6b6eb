//! Observing a trial: every command run on both sides, and what went wrong as
//! [`Observation`]s: crashes, hangs and panics, files touched outside the repository, load
//! errors git hides or data it prints from a stack we reject, and our silent wrong answers.

use crate::git::driver::{Exit, Output};
use crate::setup::env::Env;

use super::base::{Answers, Base};
use super::config::{DamageConfig, COMMANDS};
use super::outside::listing_change;
use super::sides::{run_git, run_ours_bounded};
use super::trial::Trial;

/// One observation: (side, class, command, detail).
pub(crate) type Observation = (&'static str, &'static str, &'static str, String);

/// Run every command on a damaged stack; what went wrong, on either side.
pub(crate) fn observe(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    t: &Trial,
) -> (Vec<Observation>, Vec<(&'static str, Exit)>) {
    let mut obs = Vec::new();
    let ours = observe_ours(cfg, base, t, &mut obs);
    let mut exits = Vec::new();
    for c in COMMANDS {
        let before = t.outside();
        let o = run_git(env, base, &t.git_repo, c, cfg.timeout);
        exits.push((c, o.exit.clone()));
        let after = t.outside();
        let base_out = &base.git_base[c];
        let our = ours.as_ref().ok().map(|m| &m[c]);
        git_misbehaviour(c, &o, base_out, our, &mut obs);
        if after != before {
            obs.push(("git", "touched-outside", c, listing_change(&before, &after)));
        }
        silent_wrong_answer(c, &o, base_out, our, base.ours_base.get(c), &mut obs);
    }
    (obs, exits)
}

/// Our commands on the trial's stack, given `cfg.timeout`: a hang, a panic or a file touched
/// outside goes into `obs`; our answers are returned.
fn observe_ours(
    cfg: &DamageConfig,
    base: &Base,
    t: &Trial,
    obs: &mut Vec<Observation>,
) -> Result<Answers, String> {
    let before = t.outside();
    let ours = run_ours_bounded(base, &t.ours_stack, cfg.timeout);
    match &ours {
        Err(p) if p == "hang" => obs.push(("ours", "hang", "all", p.clone())),
        Err(p) => obs.push(("ours", "panic", "all", p.clone())),
        Ok(_) => {}
    }
    let after = t.outside();
    if after != before {
        obs.push((
            "ours",
            "touched-outside",
            "all",
            listing_change(&before, &after),
        ));
    }
    ours
}

/// What git's run `o` of command `c` did wrong: a crash, a hang, exit 0 on a stack we
/// reject (`our`: our answer, `base_out`: git's undamaged output).
fn git_misbehaviour(
    c: &'static str,
    o: &Output,
    base_out: &str,
    our: Option<&Result<String, String>>,
    obs: &mut Vec<Observation>,
) {
    let our_err = matches!(our, Some(Err(_)));
    let our_msg = match our {
        Some(Err(m)) => m.clone(),
        _ => String::new(),
    };
    match &o.exit {
        Exit::Signal(s) => obs.push((
            "git",
            "crash",
            c,
            format!("signal {s}; stderr: {}", o.stderr.trim()),
        )),
        Exit::Timeout => obs.push(("git", "hang", c, o.stderr.trim().to_string())),
        Exit::Code(0) if c != "pack-refs" && c != "refs-verify" && our_err => {
            if o.stdout.trim().is_empty() && !base_out.trim().is_empty() {
                obs.push((
                    "git",
                    "hidden-load-error",
                    c,
                    format!("we: {our_msg}; git stderr: {}", o.stderr.trim()),
                ));
            } else if !o.stdout.trim().is_empty() {
                obs.push(("git", "printed-what-we-reject", c, format!("we: {our_msg}")));
            }
        }
        Exit::Code(0) if c == "refs-verify" && our_err => obs.push((
            "git",
            "verify-passes-what-we-reject",
            c,
            format!("we: {our_msg}"),
        )),
        _ => {}
    }
}

/// Silent wrong answers on our side: we answer, differently from the undamaged stack
/// (`ours_base`), where git refuses the stack or still gives the undamaged answer.
fn silent_wrong_answer(
    c: &'static str,
    o: &Output,
    base_out: &str,
    our: Option<&Result<String, String>>,
    ours_base: Option<&Result<String, String>>,
    obs: &mut Vec<Observation>,
) {
    if let (Some(Ok(ours_out)), Some(Ok(ours_base))) = (our, ours_base) {
        if c == "for-each-ref" && ours_out != ours_base {
            let git_refused =
                matches!(o.exit, Exit::Code(x) if x != 0) && mentions_corruption(&o.stderr);
            let git_undamaged = o.exit.success() && o.stdout == *base_out && o.stderr.is_empty();
            if git_refused {
                obs.push((
                    "ours",
                    "answered-where-git-refused",
                    c,
                    o.stderr.trim().to_string(),
                ));
            } else if git_undamaged {
                obs.push((
                    "ours",
                    "wrong-where-git-right",
                    c,
                    line_diff(ours_out, &o.stdout),
                ));
            }
        }
    }
}

/// The lines only one of two outputs has, marked `ours` / `git`.
fn line_diff(ours: &str, git: &str) -> String {
    let a: std::collections::BTreeSet<&str> = ours.lines().collect();
    let b: std::collections::BTreeSet<&str> = git.lines().collect();
    let mut out = String::new();
    for l in a.difference(&b).take(20) {
        out.push_str(&format!("only ours: {l}\n"));
    }
    for l in b.difference(&a).take(20) {
        out.push_str(&format!("only git: {l}\n"));
    }
    out
}

/// Whether git's stderr speaks of a damaged stack.
fn mentions_corruption(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    ["format error", "corrupt", "reftable", "zlib"]
        .iter()
        .any(|w| s.contains(w))
}
