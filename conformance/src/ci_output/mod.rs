//! What every mode hands a CI system besides its JSON and Markdown reports: one test result
//! per case (or per run, finding or class of trial, as the mode counts them), written as TAP
//! for `prove` and meson, and as JUnit XML for GitLab and GitHub's test-report actions.
//!
//! Each mode turns its report into a list of [`result::TestResult`]s (in its own folder);
//! [`tap`] and [`junit`] write such a list, and [`sink`] sends it where the command line
//! said, keeping stdout a valid TAP stream when TAP goes there.

pub mod junit;
pub mod result;
pub mod sink;
pub mod tap;
