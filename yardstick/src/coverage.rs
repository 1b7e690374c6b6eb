//! `conformance coverage`: how much of git's reftable code the gate reaches, beside the
//! user's tests. A copy of the checkout is built with gcc's `--coverage` (in a directory of
//! the tool's own, or one given), then each command runs from zeroed counters and gcov's
//! JSON of every chosen file is kept (`OUT/runs/LABEL.json`; with `--reuse` a run whose
//! command has not changed is read back instead of run again, so the grouping can be
//! changed without re-running).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::build::Tree;
use crate::command::{log_tail, run_logged, Cmd, Ran, Vars};
use crate::gcov::{collect, FileCov};
use crate::select::resolve;
use crate::state::{read_json, write_json};

/// The files whose coverage is measured by default: git's reftable library and backend.
pub const COVERAGE_FILES: [&str; 2] = ["reftable/*.c", "refs/reftable-backend.c"];

/// What a coverage run does.
#[derive(Clone, Debug)]
pub struct CoverageConfig {
    /// The user's checkout.
    pub src: PathBuf,
    /// Where runs, logs and the copy go.
    pub out: PathBuf,
    /// The coverage build (default `OUT/tree`; made there unless it exists).
    pub build_dir: Option<PathBuf>,
    /// The build command (with coverage flags).
    pub build: String,
    /// The program the build makes.
    pub binary: String,
    /// File specs (function parts are ignored).
    pub files: Vec<String>,
    /// The gate's commands.
    pub gate: Vec<Cmd>,
    /// The user's tests.
    pub tests: Vec<Cmd>,
    /// Time budget of each command.
    pub timeout: Duration,
    /// Time budget of the build.
    pub build_timeout: Duration,
    /// Read back runs whose command is unchanged.
    pub reuse: bool,
    /// This binary (`{exe}`).
    pub exe: PathBuf,
}

/// The make variables of a coverage build (gcc's gcov instrumentation, no optimization).
pub const COVERAGE_VARS: &str = "CFLAGS='-g -O0 --coverage' LDFLAGS='--coverage'";

/// One command's coverage.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunCoverage {
    /// Its label.
    pub label: String,
    /// `gate` or `tests`.
    pub side: String,
    /// The command (placeholders filled).
    pub command: String,
    /// How it ended.
    pub ran: Ran,
    /// Coverage of each file.
    pub files: Vec<FileCov>,
}

/// Build the copy, run every command from zeroed counters, and return each run's coverage.
pub fn run_coverage(cfg: &CoverageConfig) -> Result<(Tree, Vec<RunCoverage>), String> {
    let dir = cfg
        .build_dir
        .clone()
        .unwrap_or_else(|| cfg.out.join("tree"));
    let tree = Tree::prepare(&cfg.src, &dir, cfg.build.clone(), &cfg.binary)?;
    let files: Vec<String> = resolve(&tree.dir, &cfg.files)?
        .into_iter()
        .map(|t| t.file)
        .collect();
    // A build system that does not track its flags (git's does) would keep the objects
    // copied from the checkout: compile the measured files again.
    for f in &files {
        if !tree.dir.join(f).with_extension("gcno").exists() {
            tree.touch(f)?;
        }
    }
    let log = cfg.out.join("logs").join("build.log");
    eprintln!("coverage: building {} ({})", tree.dir.display(), tree.build);
    let b = tree.make(&log, cfg.build_timeout);
    if !b.passed() {
        return Err(format!(
            "the coverage build in {} failed ({}):\n{}",
            tree.dir.display(),
            b.exit,
            log_tail(&log, 20)
        ));
    }
    for f in &files {
        if !tree.dir.join(f).with_extension("gcno").exists() {
            return Err(format!(
                "{} has no {f} built with --coverage (no .gcno beside it)",
                tree.dir.display()
            ));
        }
    }
    let vars = Vars {
        git: tree.program(),
        base_git: tree.program(),
        tree: tree.dir.clone(),
        exe: cfg.exe.clone(),
        complexity: PathBuf::new(),
    };
    let mut runs = Vec::new();
    let sides = cfg.gate.iter().map(|c| ("gate", c));
    for (side, c) in sides.chain(cfg.tests.iter().map(|c| ("tests", c))) {
        runs.push(one_run(cfg, &tree, &files, &vars, side, c)?);
    }
    Ok((tree, runs))
}

/// One command from zeroed counters (or read back with `--reuse`).
fn one_run(
    cfg: &CoverageConfig,
    tree: &Tree,
    files: &[String],
    vars: &Vars,
    side: &str,
    c: &Cmd,
) -> Result<RunCoverage, String> {
    let name: String = c
        .label
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '-' {
                ch
            } else {
                '_'
            }
        })
        .collect();
    let stored = cfg.out.join("runs").join(format!("{name}.json"));
    let scratch = cfg.out.join("scratch").join(&name);
    let command = vars.fill(&c.text, &scratch);
    if cfg.reuse && stored.exists() {
        let r: RunCoverage = read_json(&stored)?;
        if r.command == command && r.side == side {
            eprintln!("coverage: {} read back from {}", c.label, stored.display());
            return Ok(r);
        }
    }
    zero_counters(&tree.dir, files)?;
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    eprintln!("coverage: {side} {}: {command}", c.label);
    let log = cfg.out.join("logs").join(format!("{name}.log"));
    let ran = run_logged(&c.label, &command, &tree.dir, &log, cfg.timeout, &[]);
    eprintln!(
        "coverage: {} ended {} after {:.0} s",
        c.label, ran.exit, ran.seconds
    );
    let covs = files
        .iter()
        .map(|f| collect(&tree.dir, f))
        .collect::<Result<Vec<_>, _>>()?;
    let r = RunCoverage {
        label: c.label.clone(),
        side: side.to_string(),
        command,
        ran,
        files: covs,
    };
    write_json(&stored, &r)?;
    Ok(r)
}

/// Remove the counters (`.gcda`) of `files` so that the next command starts from zero.
fn zero_counters(tree: &Path, files: &[String]) -> Result<(), String> {
    for f in files {
        let gcda = tree.join(f).with_extension("gcda");
        match std::fs::remove_file(&gcda) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", gcda.display())),
        }
    }
    Ok(())
}
