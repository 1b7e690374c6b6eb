//! A run's workers: each takes the next trial number until every trial is taken, the time
//! budget is spent or (with fail-fast) a finding on our side was made; a trial is its damage drawn, the damaged copy prepared, every
//! command observed on both sides, crashes signed (under gdb on a fresh copy), and all of it
//! counted into the run's [`Tally`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::lanes::take_in_turn;
use crate::setup::env::Env;

use super::base::Base;
use super::class::{Class, Side};
use super::config::{DamageConfig, COMMANDS};
use super::damage::Damage;
use super::observe::{observe, Observation};
use super::signature::signature;
use super::tally::Tally;
use super::trial::{damage_for, Trial};

/// What the workers of a run share.
pub(crate) struct Workers<'a> {
    /// The git under test.
    pub(crate) env: &'a Env,
    /// The run's configuration.
    pub(crate) cfg: &'a DamageConfig,
    /// The undamaged starting points, taken in turn.
    pub(crate) bases: &'a [Base],
    /// The run's scratch directory (a `trial-JOB` and a `gdb-JOB` per worker).
    pub(crate) work: &'a Path,
    /// Commands run so far (git's and ours).
    pub(crate) commands: AtomicU64,
    /// What was found so far.
    pub(crate) found: Mutex<Tally>,
    /// Set by a finding on our side under fail-fast: no trial starts after it.
    pub(crate) failed: AtomicBool,
}

impl Workers<'_> {
    /// The trials on `cfg.jobs` lanes, until every one is taken, the budget counted from
    /// `start` is spent, or (fail-fast) one found something on our side; how many ran.
    pub(crate) fn work(&self, start: Instant) -> u64 {
        // The budget is looked at before a trial number is taken, so that the numbers
        // taken are the trials run.
        let go = || !self.failed.load(Ordering::SeqCst) && start.elapsed() <= self.cfg.budget;
        let taken = take_in_turn(self.cfg.jobs, go, |job, i| {
            if i >= self.cfg.trials {
                return false;
            }
            self.trial(job, i);
            true
        });
        taken.min(self.cfg.trials)
    }

    /// Trial `i` on worker `job` (skipped when its damaged copy cannot be prepared).
    fn trial(&self, job: usize, i: u64) {
        let bi = (i % self.bases.len() as u64) as usize;
        let base = &self.bases[bi];
        let damage = damage_for(self.cfg.seed, i, base);
        let dir = self.work.join(format!("trial-{job}"));
        let Ok(t) = Trial::prepare(base, &damage, &dir) else {
            return;
        };
        let (obs, exits) = observe(self.env, self.cfg, base, &t);
        self.commands
            .fetch_add(2 * COMMANDS.len() as u64, Ordering::Relaxed);
        let sigs = self.signatures(job, base, &damage, &t, &obs);
        let mut g = self.found.lock().expect("lock");
        g.count_exits(exits);
        for (o, sig) in obs.into_iter().zip(sigs) {
            if self.cfg.fail_fast && o.side == Side::Ours {
                self.failed.store(true, Ordering::SeqCst);
            }
            g.record(o, sig, &damage, bi);
        }
    }

    /// The signature of each observation of trial `t`; a crash is re-run under gdb on a
    /// fresh copy.
    fn signatures(
        &self,
        job: usize,
        base: &Base,
        damage: &Damage,
        t: &Trial,
        obs: &[Observation],
    ) -> Vec<String> {
        let mut sigs = Vec::new();
        for o in obs {
            let t2 = if o.class == Class::Crash {
                Trial::prepare(base, damage, &self.work.join(format!("gdb-{job}"))).ok()
            } else {
                None
            };
            sigs.push(signature(
                self.env,
                self.cfg,
                base,
                t2.as_ref().unwrap_or(t),
                o,
            ));
        }
        sigs
    }
}
