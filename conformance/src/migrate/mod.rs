//! The migration mode: files-backend repositories made by replaying the gate's cases with
//! git (loose refs, `packed-refs` after the cases' `pack-refs`, reflogs in `logs/`), moved to
//! reftable by `git refs migrate --ref-format=reftable` (a dry run, then the real one) and
//! by our [`reftable::refdb::RefDb::import`]; the tables must be byte for byte the same, and
//! git must read the migrated repository as the files one.
//!
//! Where git's migration is known to differ by version (2.48 to 2.51 number each reflog on
//! its own and lose old ids and identities, 2.55 drops peeled values), the difference is
//! classified from the records and matched against the registry's migrate entries
//! ([`crate::defects::registry`]); gits that cannot migrate reflogs (2.46, 2.47, by the
//! probe) get repositories without them.
//!
//! [`run`] holds the mode's loop over the cases and [`case`] the steps of one case:
//! [`replay`] makes the files repository, [`ours`] our stack, [`compare`] compares git's
//! outputs with ours, [`config`] says what to run and [`report`] holds what is found; `finding_dir.rs` writes a case
//! that diverged (with `--out`), [`ci_tests`] turns the report into CI test results.

pub mod case;
pub mod ci_tests;
pub mod cli;
pub mod compare;
pub mod config;
mod finding_dir;
pub mod ours;
pub mod replay;
pub mod report;
pub mod run;

pub use config::MigrateConfig;
pub use report::{MigrationDivergence, MigrationReport};
pub use run::{run_migrate, run_migrate_within};
