//! The power-loss mode's command line (`conformance powerloss`, over the faults mode's
//! case options): the run, its table on stdout, its exit status.

use crate::ci_output::result::TestResult;
use crate::faults::cli::CaseArgs;
use crate::mode::report::{finish, pretty, ModeReport};
use crate::powerloss::{run_powerloss, PowerLossReport};

/// `conformance powerloss`: the exit status, or why the run could not be made.
pub fn main(a: &CaseArgs) -> Result<i32, String> {
    let (known, env) = a.common.open()?;
    let cfg = a.config()?;
    let r = run_powerloss(&env, &known, &cfg).map_err(|e| format!("powerloss: {e}"))?;
    finish(&r, &a.common.outputs, &known)
}

impl ModeReport for PowerLossReport {
    fn suite(&self) -> String {
        "reftable-rs conformance powerloss".into()
    }

    fn json(&self) -> String {
        pretty(self)
    }

    fn markdown(&self) -> String {
        PowerLossReport::markdown(self)
    }

    fn known_defects(&self) -> Vec<&str> {
        PowerLossReport::known_defects(self)
    }

    /// The report's table.
    fn lines(&self) -> Vec<String> {
        vec![PowerLossReport::markdown(self).trim_end().to_string()]
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        crate::powerloss::ci_tests::ci_tests(self)
    }

    fn failed(&self) -> bool {
        !self.clean()
    }
}
