//! What a writing role's copy must show once the case is over: git reads it as it reads its
//! own repository (`for-each-ref`, `git refs verify` and `git fsck` say no more of it), and
//! the stack keeps its invariants (our deep check finds nothing, no lock is left).

use std::path::Path;

use crate::cases::executor::Executor;
use crate::impls::check::ImplCheck;
use crate::impls::side::Side;
use crate::impls::tally::Tally;

/// The end-of-case checks of a writing side that got through every step.
pub fn check_end(side: &mut Side, exec: &Executor<'_>, t: &mut Tally) {
    if side.failed.is_some() || side.copy.is_none() {
        return;
    }
    let copy = side.repo(exec);
    let git = exec.git_repo().to_path_buf();
    let role = side.role;
    for (what, args) in git_reads(exec, side) {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = |repo: &Path| {
            let o = exec.env_git().run(repo, &argv, "", exec.tick());
            format!("{:?}\n{}{}", o.exit, o.stdout, o.stderr)
        };
        let (mine, theirs) = (run(&copy), run(&git));
        if mine == theirs {
            t.count(role, ImplCheck::GitReads, true);
        } else {
            let d = format!(
                "{what}: {} / git's own: {}",
                first_line_diff(&mine, &theirs).0,
                first_line_diff(&mine, &theirs).1
            );
            t.count(role, ImplCheck::GitReads, false);
            side.failed.get_or_insert((ImplCheck::GitReads, d));
            return;
        }
    }
    match invariants(&copy.join(".git/reftable")) {
        Ok(()) => t.count(role, ImplCheck::Invariants, true),
        Err(d) => {
            t.count(role, ImplCheck::Invariants, false);
            side.failed.get_or_insert((ImplCheck::Invariants, d));
        }
    }
}

/// git's reads of a repository that must say the same of the copy as of git's own.
fn git_reads(exec: &Executor<'_>, side: &Side) -> Vec<(&'static str, Vec<String>)> {
    let f = &exec.env().profile.features;
    let mut listing = vec!["for-each-ref".to_string()];
    if f.include_root_refs {
        listing.push("--include-root-refs".into());
    }
    listing.push("--format=%(refname) %(objectname) %(*objectname) %(symref)".into());
    let mut reads = vec![("for-each-ref", listing)];
    if side.adapter.hello.claims("reflogs_written") {
        let show = ["reflog", "show", "--format=%H %gs", "HEAD", "--"];
        reads.push(("reflog of HEAD", show.map(String::from).to_vec()));
    }
    if f.refs_verify {
        reads.push(("git refs verify", vec!["refs".into(), "verify".into()]));
    }
    reads.push((
        "git fsck",
        vec![
            "fsck".into(),
            "--no-progress".into(),
            "--no-dangling".into(),
        ],
    ));
    reads
}

/// The first line where two outputs differ.
fn first_line_diff(a: &str, b: &str) -> (String, String) {
    let (mut la, mut lb) = (a.lines(), b.lines());
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return (
                    x.unwrap_or("(end)").to_string(),
                    y.unwrap_or("(end)").to_string(),
                )
            }
        }
    }
}

/// Our deep check of the stack finds nothing, and no lock or temporary file is left.
fn invariants(dir: &Path) -> Result<(), String> {
    let report = reftable::fsck::check_stack(dir, None).map_err(|e| format!("{e:#}"))?;
    if report.count() > 0 {
        let first: Vec<String> = report.findings().take(3).map(|f| f.to_string()).collect();
        return Err(format!("{} problems: {}", report.count(), first.join("; ")));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".lock") || name.contains(".temp.") {
            return Err(format!("{name} left in the stack"));
        }
    }
    Ok(())
}
