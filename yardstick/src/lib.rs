//! The yardsticks: how much of git's reftable code the gate reaches (`conformance
//! coverage`) and how many changes to it the gate notices (`conformance mutate-git`), each
//! beside the user's own tests, on a git checkout the user names and the tool copies and
//! builds. The project holds no git source: the tools build from the user's checkout.
//!
//! The files, bottom up: [`ctokens`] (C source as tokens and functions), [`command`]
//! (commands with placeholders, run in a process group under a timeout), [`build`] (the
//! copy of the checkout and its build); [`mutants`] (the operators, the seeded sample) →
//! [`select`] (which files and functions) → [`outcome`] (a mutant's class), [`state`] (the
//! resumable run directory) → [`mutate`] (the run) → [`report`] (scores, merge of shards);
//! [`gcov`] (gcov's JSON) → [`coverage`] (the coverage build and runs) → [`covreport`].

pub mod build;
pub mod cli;
pub mod command;
pub mod coverage;
pub mod covreport;
pub mod ctokens;
pub mod gcov;
pub mod mutants;
pub mod mutate;
pub mod outcome;
pub mod report;
pub mod select;
pub mod state;
