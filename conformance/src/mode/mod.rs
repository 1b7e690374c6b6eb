//! What every mode shares on the command line and at its end: the options every mode takes
//! ([`args`]: the git, the registry of known defects, where reports and CI results go),
//! the contract of a mode's report ([`report`]: JSON, Markdown with the section for git's
//! maintainers, the lines said on stdout, CI test results, whether the run failed) and the
//! one way it is finished, and defects planted into our worker processes on a test-hooks
//! build ([`plant`]).
//!
//! Exit statuses, in every mode: 0 clean, 1 a finding that fails the run, 2 the run could
//! not be made or its results not written (a git that cannot be run, a registry that cannot
//! be read, a report that cannot be written).

pub mod args;
pub mod plant;
pub mod report;
