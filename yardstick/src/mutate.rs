//! `conformance mutate-git`: mutants of a git checkout's reftable code, each built in a copy
//! of the checkout and put through the gate's modes (and the counters comparison, and the
//! user's tests), classified, recorded one file per mutant so that the run resumes where it
//! stopped; one shard of a sample that a merge puts together.
//!
//! The order of a run: the copy (made once), the plan (the seeded sample, this shard's
//! part; an existing plan is resumed and must have been made with the same choices), the
//! baseline (the unmutated build and every command on it, which must pass; their times give
//! the commands' time budgets), then each mutant not yet done: applied, built, run, the file
//! put back.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::build::{object_fingerprint, Tree};
use crate::command::{log_tail, run_logged, Cmd, Ran, Vars};
use crate::mutants::{sample, Mutant};
use crate::outcome::{classify, Class, MutantResult};
use crate::select::{candidates, resolve};
use crate::state::{Baseline, Plan, RunDir, Selection};

/// What a mutation run does.
#[derive(Clone, Debug)]
pub struct MutateConfig {
    /// The user's built checkout.
    pub src: PathBuf,
    /// The run's directory (plan, results, logs).
    pub out: PathBuf,
    /// The copy that is mutated and built (default: `OUT/tree`).
    pub work: Option<PathBuf>,
    /// The build command (shell text, run in the copy).
    pub build: String,
    /// The program the build makes (`git`).
    pub binary: String,
    /// File specs.
    pub files: Vec<String>,
    /// Function globs.
    pub functions: Vec<String>,
    /// Only the mutants with these ids (empty: all), to run known ones again.
    pub only: Vec<String>,
    /// Seed of the sample.
    pub seed: u64,
    /// Sample size (0: all).
    pub sample: usize,
    /// This shard, `(k, n)`.
    pub shard: (usize, usize),
    /// The gate's commands.
    pub gate: Vec<Cmd>,
    /// The user's tests.
    pub tests: Vec<Cmd>,
    /// The counters comparison (run when the gate's modes pass).
    pub counters: Option<Cmd>,
    /// Time budget of each command (default: three times its baseline, at least a minute).
    pub timeout: Option<Duration>,
    /// Time budget of a build.
    pub build_timeout: Duration,
    /// Start no mutant after this long.
    pub budget: Option<Duration>,
    /// Run at most this many mutants now.
    pub max_mutants: Option<usize>,
    /// Run every gate and test command on each mutant, not only up to the first that fails.
    pub every_command: bool,
    /// This binary (`{exe}`).
    pub exe: PathBuf,
    /// The `complexity` binary (`{complexity}`).
    pub complexity: PathBuf,
}

/// What a run did.
#[derive(Debug)]
pub struct MutateOutcome {
    /// The shard's plan (with its baseline).
    pub plan: Plan,
    /// Every finished mutant of the shard, this run's and earlier ones.
    pub results: Vec<MutantResult>,
    /// Mutants run now.
    pub ran_now: usize,
}

/// The copy, the plan and the run's directory (the copy's mutated files put back).
fn open(cfg: &MutateConfig) -> Result<(Tree, Plan, RunDir), String> {
    let dir = RunDir::new(&cfg.out);
    let work = cfg.work.clone().unwrap_or_else(|| cfg.out.join("tree"));
    let tree = Tree::prepare(&cfg.src, &work, cfg.build.clone(), &cfg.binary)?;
    let targets = resolve(&tree.src, &cfg.files)?;
    let (mut all, sources) = candidates(&tree.src, &targets, &cfg.functions)?;
    if !cfg.only.is_empty() {
        if let Some(id) = cfg.only.iter().find(|id| !all.iter().any(|m| &m.id == *id)) {
            return Err(format!(
                "--only {id}: no such mutant in the chosen files and functions"
            ));
        }
        all.retain(|m| cfg.only.contains(&m.id));
    }
    let selection = Selection {
        seed: cfg.seed,
        sample: cfg.sample,
        files: cfg.files.clone(),
        functions: cfg.functions.clone(),
        only: cfg.only.clone(),
        sources,
        candidates: all.len(),
        gate: cfg.gate.clone(),
        tests: cfg.tests.clone(),
        counters: cfg.counters.clone(),
        every_command: cfg.every_command,
    };
    let sampled = if cfg.sample == 0 {
        all.len()
    } else {
        cfg.sample.min(all.len())
    };
    let plan = match dir.plan()? {
        Some(p) if p.selection == selection && p.shard == cfg.shard => p,
        Some(_) => {
            return Err(format!(
                "{} holds a run made with other choices (seed, sample, files, functions, ids, commands, shard) or of a changed checkout: use another --out",
                cfg.out.display()
            ))
        }
        None => Plan {
            mutants: sample(all, cfg.seed, cfg.sample, cfg.shard),
            selection,
            shard: cfg.shard,
            sampled,
            baseline: None,
        },
    };
    for t in &targets {
        if tree.restore(&t.file)? {
            eprintln!("mutate: put back {} (a mutant was left in it)", t.file);
        }
    }
    dir.save_plan(&plan)?;
    Ok((tree, plan, dir))
}

/// The shard's plan without building anything (`--list`).
pub fn plan_only(cfg: &MutateConfig) -> Result<Plan, String> {
    open(cfg).map(|(_, plan, _)| plan)
}

/// Run the shard (resuming it) and return every finished mutant.
pub fn run_mutate(cfg: &MutateConfig) -> Result<MutateOutcome, String> {
    let (tree, mut plan, dir) = open(cfg)?;
    if plan.baseline.is_none() {
        plan.baseline = Some(baseline(cfg, &tree, &plan, &dir)?);
        dir.save_plan(&plan)?;
    }
    let base = plan.baseline.clone().expect("made above");
    let runner = Runner::new(cfg, &tree, &dir, &base);
    let mut done = dir.results()?;
    let started = Instant::now();
    let mut ran_now = 0;
    for (index, m) in plan.mutants.iter().enumerate() {
        if done.contains_key(&index) {
            continue;
        }
        let over_time = cfg.budget.is_some_and(|b| started.elapsed() >= b);
        if over_time || cfg.max_mutants.is_some_and(|n| ran_now >= n) {
            break;
        }
        let r = runner.one(index, m)?;
        eprintln!(
            "mutate: [{}/{}] {} {} ({:.0} s)",
            done.len() + 1,
            plan.mutants.len(),
            r.class.name(),
            m.id,
            r.seconds
        );
        dir.save_result(&r)?;
        done.insert(index, r);
        ran_now += 1;
    }
    Ok(MutateOutcome {
        plan,
        results: done.into_values().collect(),
        ran_now,
    })
}

/// Build the unmutated copy and run every command on it; each must pass.
fn baseline(
    cfg: &MutateConfig,
    tree: &Tree,
    plan: &Plan,
    dir: &RunDir,
) -> Result<Baseline, String> {
    let logs = dir.path.join("logs").join("baseline");
    let files: std::collections::BTreeSet<&String> = plan.mutants.iter().map(|m| &m.file).collect();
    for f in &files {
        tree.touch(f)?;
    }
    let build = tree.make(&logs.join("build.log"), cfg.build_timeout);
    if !build.passed() {
        return Err(format!(
            "the unmutated copy {} does not build ({}):\n{}",
            tree.dir.display(),
            build.exit,
            log_tail(&logs.join("build.log"), 20)
        ));
    }
    if tree.src.join("GIT-CFLAGS").exists() {
        tree.check_flags()?;
    }
    let base_program = tree.save_base(&dir.path.join("base"))?;
    let objects = files
        .iter()
        .map(|f| (f.to_string(), object_fingerprint(&tree.dir, f)))
        .collect();
    let mut b = Baseline {
        build,
        gate: Vec::new(),
        tests: Vec::new(),
        counters: None,
        objects,
        base_program,
    };
    let unrun = b.clone();
    let runner = Runner::new(cfg, tree, dir, &unrun);
    let long = Duration::from_secs(6 * 3600);
    b.gate = runner.all(&cfg.gate, "gate", &logs, |_| long)?;
    b.tests = runner.all(&cfg.tests, "tests", &logs, |_| long)?;
    if let Some(c) = &cfg.counters {
        b.counters = runner
            .all(std::slice::from_ref(c), "counters", &logs, |_| long)?
            .pop();
    }
    Ok(b)
}

/// Runs commands on the copy.
struct Runner<'a> {
    cfg: &'a MutateConfig,
    tree: &'a Tree,
    dir: &'a RunDir,
    base: &'a Baseline,
    vars: Vars,
}

impl<'a> Runner<'a> {
    fn new(cfg: &'a MutateConfig, tree: &'a Tree, dir: &'a RunDir, base: &'a Baseline) -> Self {
        let vars = Vars {
            git: tree.program(),
            base_git: base.base_program.clone(),
            tree: tree.dir.clone(),
            exe: cfg.exe.clone(),
            complexity: cfg.complexity.clone(),
        };
        Runner {
            cfg,
            tree,
            dir,
            base,
            vars,
        }
    }

    /// Run one command with its log in `logs`.
    fn run(&self, c: &Cmd, kind: &str, logs: &Path, timeout: Duration) -> Result<Ran, String> {
        let scratch = self.dir.scratch()?;
        let text = self.vars.fill(&c.text, &scratch);
        let log = logs.join(format!("{kind}-{}.log", sanitize(&c.label)));
        Ok(run_logged(
            &c.label,
            &text,
            &self.tree.dir,
            &log,
            timeout,
            &[],
        ))
    }

    /// Run every command of the baseline; all must pass.
    fn all(
        &self,
        cmds: &[Cmd],
        kind: &str,
        logs: &Path,
        timeout: impl Fn(&Cmd) -> Duration,
    ) -> Result<Vec<Ran>, String> {
        let mut out = Vec::new();
        for c in cmds {
            eprintln!("mutate: baseline {kind} {}", c.label);
            let r = self.run(c, kind, logs, timeout(c))?;
            if !r.passed() {
                let log = logs.join(format!("{kind}-{}.log", sanitize(&c.label)));
                return Err(format!(
                    "{kind} command {} fails on the unmutated build ({}); the yardstick needs a clean baseline. Its log, {}:\n{}",
                    c.label,
                    r.exit,
                    log.display(),
                    log_tail(&log, 20)
                ));
            }
            out.push(r);
        }
        Ok(out)
    }

    /// A command's time budget: `--timeout`, else three times its baseline, at least 60 s.
    fn budget(&self, kind: &str, label: &str) -> Duration {
        if let Some(t) = self.cfg.timeout {
            return t;
        }
        let base = match kind {
            "gate" => self.base.gate.iter().find(|r| r.label == label),
            "tests" => self.base.tests.iter().find(|r| r.label == label),
            _ => self.base.counters.as_ref(),
        };
        let secs = base.map_or(600.0, |r| r.seconds);
        Duration::from_secs_f64((3.0 * secs).max(60.0))
    }

    /// Commands in order until one fails or hangs (with `--every-command`: all of them).
    fn until_failure(&self, cmds: &[Cmd], kind: &str, logs: &Path) -> Result<Vec<Ran>, String> {
        let mut out = Vec::new();
        for c in cmds {
            let r = self.run(c, kind, logs, self.budget(kind, &c.label))?;
            let stop = !r.passed() && !self.cfg.every_command;
            out.push(r);
            if stop {
                break;
            }
        }
        Ok(out)
    }

    /// Mutant `index`: applied, built, run, put back.
    fn one(&self, index: usize, m: &Mutant) -> Result<MutantResult, String> {
        let started = Instant::now();
        let path = self.tree.dir.join(&m.file);
        let original =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mutated = m.apply(&original)?;
        std::fs::write(&path, &mutated).map_err(|e| format!("{}: {e}", path.display()))?;
        let outcome = self.judge(index, m);
        self.tree.restore(&m.file)?;
        let mut r = outcome?;
        r.diff = m.diff(&original);
        r.seconds = started.elapsed().as_secs_f64();
        Ok(r)
    }

    /// Build the mutated copy and run the commands on it.
    fn judge(&self, index: usize, m: &Mutant) -> Result<MutantResult, String> {
        let logs = self.dir.logs(index);
        let build = self
            .tree
            .make(&logs.join("build.log"), self.cfg.build_timeout);
        let mut r = MutantResult {
            index,
            mutant: m.clone(),
            class: Class::Unviable,
            diff: String::new(),
            build,
            gate: Vec::new(),
            counters: None,
            tests: Vec::new(),
            seconds: 0.0,
            note: String::new(),
        };
        if !r.build.passed() {
            r.note = log_tail(&logs.join("build.log"), 8);
            return Ok(r);
        }
        let object = object_fingerprint(&self.tree.dir, &m.file);
        if object.is_some() && self.base.objects.get(&m.file) == Some(&object) {
            r.class = Class::Equivalent;
            return Ok(r);
        }
        r.gate = self.until_failure(&self.cfg.gate, "gate", &logs)?;
        if let Some(c) = &self.cfg.counters {
            if r.gate.iter().all(Ran::passed) {
                r.counters = Some(self.run(c, "counters", &logs, self.budget("counters", ""))?);
            }
        }
        r.tests = self.until_failure(&self.cfg.tests, "tests", &logs)?;
        r.class = classify(&r.gate, &r.tests, r.counters.as_ref());
        Ok(r)
    }
}

/// A label as a file name part.
fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
