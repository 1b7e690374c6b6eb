//! A run's limits other than its case count: a time budget in seconds and fail-fast.
//!
//! A CI job is given minutes, not cases. With a budget, a mode takes its cases in their
//! usual order (the same seed gives the same list) and stops taking new ones when the budget
//! says so; the budget only cuts the list short. With fail-fast, the first unexpected
//! divergence stops the list the same way. Work already begun is finished, so a cut list is
//! always a prefix of the full one.
//!
//! The budget counts from when it is made (`main` makes it before git is probed), and a mode
//! divides it into phases with [`Budget::until`]: generated cases up to a share of it,
//! minimizing up to its end less a margin for writing the reports.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Why a run stopped before its list of cases ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The time budget was used.
    Time,
    /// An unexpected divergence, with fail-fast.
    FirstFailure,
}

impl Stop {
    /// How a report says it.
    pub fn describe(self, budget: &Budget) -> String {
        match self {
            Stop::Time => format!(
                "stopped by the time budget of {} s",
                budget.seconds.unwrap_or(0)
            ),
            Stop::FirstFailure => "stopped at the first unexpected divergence (--fail-fast)".into(),
        }
    }
}

/// A time budget (or none) and fail-fast, shared by the threads of a run.
#[derive(Debug)]
pub struct Budget {
    start: Instant,
    seconds: Option<u64>,
    fail_fast: bool,
    /// 0: running; 1: stopped by time; 2: stopped by a failure.
    stopped: AtomicU8,
}

impl Budget {
    /// A budget of `seconds` (none: no time limit) counted from now; `fail_fast` stops the
    /// run at its first unexpected divergence.
    pub fn new(seconds: Option<u64>, fail_fast: bool) -> Budget {
        Budget {
            start: Instant::now(),
            seconds,
            fail_fast,
            stopped: AtomicU8::new(0),
        }
    }

    /// No time limit, no fail-fast: what a run without the flags gets.
    pub fn unlimited() -> Budget {
        Budget::new(None, false)
    }

    /// The budget in seconds, if there is one.
    pub fn seconds(&self) -> Option<u64> {
        self.seconds
    }

    /// Whether there is a time budget.
    pub fn is_timed(&self) -> bool {
        self.seconds.is_some()
    }

    /// The moment `share` (0 to 1) of the budget is used; `None` without a budget.
    pub fn until(&self, share: f64) -> Option<Instant> {
        let secs = self.seconds? as f64 * share.clamp(0.0, 1.0);
        Some(self.start + Duration::from_secs_f64(secs))
    }

    /// The end of the budget less `margin` (never before the start).
    pub fn end_less(&self, margin: Duration) -> Option<Instant> {
        let end = Duration::from_secs(self.seconds?).saturating_sub(margin);
        Some(self.start + end)
    }

    /// Seconds since the budget was made.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether new work may start: not stopped, and `phase_end` (from [`Budget::until`])
    /// not reached. Reaching it stops the run for good.
    pub fn may_start(&self, phase_end: Option<Instant>) -> bool {
        if self.stopped.load(Ordering::SeqCst) != 0 {
            return false;
        }
        if phase_end.is_some_and(|t| Instant::now() >= t) {
            let _ = self
                .stopped
                .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Note an unexpected divergence: with fail-fast, nothing new starts after it.
    pub fn failed(&self) {
        if self.fail_fast {
            let _ = self
                .stopped
                .compare_exchange(0, 2, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// Why the run stopped early, if it did.
    pub fn stop(&self) -> Option<Stop> {
        match self.stopped.load(Ordering::SeqCst) {
            1 => Some(Stop::Time),
            2 => Some(Stop::FirstFailure),
            _ => None,
        }
    }

    /// [`Budget::stop`] as a report says it.
    pub fn stop_line(&self) -> Option<String> {
        self.stop().map(|s| s.describe(self))
    }
}

/// Whether `deadline` (if any) has passed.
pub fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|t| Instant::now() >= t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_flags_nothing_ever_stops() {
        let b = Budget::unlimited();
        b.failed();
        assert!(b.may_start(b.until(0.5)));
        assert_eq!(b.stop(), None);
    }

    #[test]
    fn fail_fast_stops_at_the_first_failure_and_keeps_that_reason() {
        let b = Budget::new(Some(0), true);
        b.failed();
        assert!(!b.may_start(b.until(1.0)));
        assert_eq!(b.stop(), Some(Stop::FirstFailure));
    }

    #[test]
    fn a_used_budget_stops_new_work() {
        let b = Budget::new(Some(0), false);
        assert!(!b.may_start(b.until(1.0)));
        assert_eq!(b.stop(), Some(Stop::Time));
        assert!(b.stop_line().unwrap().contains("time budget of 0 s"));
        let long = Budget::new(Some(3600), false);
        assert!(long.may_start(long.until(0.9)));
        assert!(!past(long.end_less(Duration::from_secs(1))));
    }
}
