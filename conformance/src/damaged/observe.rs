//! Observing a trial: every command run on both sides, and what went wrong as
//! [`Observation`]s: crashes, hangs and panics, files touched outside the repository, load
//! errors git hides or data it prints from a stack we reject, and our silent wrong answers.

use crate::git::driver::{Exit, Output};
use crate::setup::env::Env;

use super::base::{Answers, Base};
use super::class::{Class, Side};
use super::config::{DamageConfig, COMMANDS};
use super::outside::listing_change;
use super::sides::{run_git, run_ours_bounded, OursStopped};
use super::trial::Trial;

/// One thing that went wrong on a trial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Observation {
    /// Whose command it was.
    pub(crate) side: Side,
    /// What went wrong.
    pub(crate) class: Class,
    /// The command (one of [`COMMANDS`], or `all` for ours run together).
    pub(crate) command: &'static str,
    /// What was seen: git's stderr, our error, the outputs' difference, ...
    pub(crate) detail: String,
}

impl Observation {
    /// Something git's `command` did.
    fn git(class: Class, command: &'static str, detail: String) -> Self {
        Observation {
            side: Side::Git,
            class,
            command,
            detail,
        }
    }

    /// Something our `command` did.
    fn ours(class: Class, command: &'static str, detail: String) -> Self {
        Observation {
            side: Side::Ours,
            class,
            command,
            detail,
        }
    }
}

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
            let change = listing_change(&before, &after);
            obs.push(Observation::git(Class::TouchedOutside, c, change));
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
) -> Result<Answers, OursStopped> {
    let before = t.outside();
    let ours = run_ours_bounded(base, &t.ours_stack, cfg.timeout);
    if let Err(stopped) = &ours {
        let class = match stopped {
            OursStopped::Hang => Class::Hang,
            OursStopped::Panic(_) => Class::Panic,
        };
        obs.push(Observation::ours(class, "all", stopped.detail()));
    }
    let after = t.outside();
    if after != before {
        let change = listing_change(&before, &after);
        obs.push(Observation::ours(Class::TouchedOutside, "all", change));
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
    if let Some(report) = sanitizer_report(&o.stderr) {
        // A sanitizer's signal handler turns a crash into an exit status.
        if report.contains("DEADLYSIGNAL") || report.contains(": SEGV") {
            let how = format!("signal 11 (under a sanitizer); stderr: {}", o.stderr.trim());
            obs.push(Observation::git(Class::Crash, c, how));
            return;
        }
        obs.push(Observation::git(Class::SanitizerReport, c, report));
    }
    let our_err = matches!(our, Some(Err(_)));
    let our_msg = match our {
        Some(Err(m)) => m.clone(),
        _ => String::new(),
    };
    match &o.exit {
        Exit::Signal(s) => obs.push(Observation::git(
            Class::Crash,
            c,
            format!("signal {s}; stderr: {}", o.stderr.trim()),
        )),
        Exit::Timeout => obs.push(Observation::git(Class::Hang, c, o.stderr.trim().into())),
        Exit::Code(0) if c != "pack-refs" && c != "refs-verify" && our_err => {
            if o.stdout.trim().is_empty() && !base_out.trim().is_empty() {
                obs.push(Observation::git(
                    Class::HiddenLoadError,
                    c,
                    format!("we: {our_msg}; git stderr: {}", o.stderr.trim()),
                ));
            } else if !o.stdout.trim().is_empty() {
                let we = format!("we: {our_msg}");
                obs.push(Observation::git(Class::PrintedWhatWeReject, c, we));
            }
        }
        Exit::Code(0) if c == "refs-verify" && our_err => obs.push(Observation::git(
            Class::VerifyPassesWhatWeReject,
            c,
            format!("we: {our_msg}"),
        )),
        _ => {}
    }
}

/// The error a sanitizer built into git reported in `stderr` (a leak, an access out of
/// bounds, undefined behaviour), with the first function of git's own it names, past the
/// allocator's: `LeakSanitizer: detected memory leaks in reftable_block_init`.
pub(crate) fn sanitizer_report(stderr: &str) -> Option<String> {
    const ALLOCATORS: [&str; 12] = [
        "malloc",
        "calloc",
        "realloc",
        "strdup",
        "strndup",
        "xmalloc",
        "xcalloc",
        "xrealloc",
        "do_xmalloc",
        "reftable_malloc",
        "reftable_calloc",
        "reftable_realloc",
    ];
    let mut lines = stderr.lines();
    let error = lines.find(|l| l.contains("Sanitizer:") || l.contains("runtime error:"))?;
    let what = match error.find("Sanitizer:") {
        Some(i) => {
            let start = error[..i]
                .rfind(|c: char| c.is_whitespace())
                .map_or(0, |s| s + 1);
            error[start..].trim()
        }
        None => error.trim(),
    };
    let what = what.split(" on address").next().unwrap_or(what);
    let frame = lines
        .filter_map(|l| l.trim_start().strip_prefix('#'))
        .filter_map(|l| l.split(" in ").nth(1))
        .filter_map(|l| l.split_whitespace().next())
        .find(|f| {
            !f.starts_with("__") && !f.starts_with("reftable_alloc") && !ALLOCATORS.contains(f)
        });
    Some(match frame {
        Some(f) => format!("{what} in {f}"),
        None => what.to_string(),
    })
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
                let stderr = o.stderr.trim().to_string();
                obs.push(Observation::ours(Class::AnsweredWhereGitRefused, c, stderr));
            } else if git_undamaged {
                let diff = line_diff(ours_out, &o.stdout);
                obs.push(Observation::ours(Class::WrongWhereGitRight, c, diff));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sanitizer_report_is_named_by_its_kind_and_gits_first_function() {
        let leak = "fatal: bad table\n\n=================================================================\n==7==ERROR: LeakSanitizer: detected memory leaks\n\nDirect leak of 4096 byte(s) in 1 object(s) allocated from:\n    #0 0x7f in malloc ../asan_malloc_linux.cpp:69\n    #1 0x55 in reftable_malloc reftable/basics.c:25\n    #2 0x55 in reftable_block_init reftable/block.c:260\n    #3 0x55 in table_init_block reftable/table.c:75\n";
        assert_eq!(
            sanitizer_report(leak).as_deref(),
            Some("LeakSanitizer: detected memory leaks in reftable_block_init")
        );
        let asan = "==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x60 at pc 0x5\nWRITE of size 1 at 0x60 thread T0\n    #0 0x5 in __interceptor_memcpy x.c:1\n    #1 0x5 in reftable_ref_record_copy_from reftable/record.c:255\n";
        assert_eq!(
            sanitizer_report(asan).as_deref(),
            Some("AddressSanitizer: heap-buffer-overflow in reftable_ref_record_copy_from")
        );
        let ub = "reftable/block.c:12:5: runtime error: load of misaligned address\n";
        assert!(sanitizer_report(ub)
            .unwrap()
            .contains("runtime error: load of misaligned"));
        assert_eq!(sanitizer_report("fatal: reftable: corrupt table\n"), None);
    }
}
