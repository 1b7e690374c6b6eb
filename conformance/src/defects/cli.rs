//! `conformance upstream ID`: a known git defect handed over in git's own test style.

use std::path::PathBuf;

use crate::defects::registry::{self, ExpectedSet};
use crate::defects::upstream::hand_over;

/// `conformance upstream`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct UpstreamArgs {
    /// The defect's id, or `all`.
    pub id: String,
    /// Where the files go.
    #[arg(long, default_value = "target/conformance/upstream")]
    pub out: PathBuf,
    /// The known git defects (default: REFTABLE_EXPECTED_DIVERGENCES, else
    /// conformance/expected-divergences.json).
    #[arg(long)]
    pub expected: Option<PathBuf>,
}

/// Write the test and the message of each defect asked for; their paths on stdout.
pub fn main(a: &UpstreamArgs) -> Result<i32, String> {
    let path = a.expected.clone().unwrap_or_else(registry::default_path);
    let known = ExpectedSet::load(&path)?;
    let ids: Vec<String> = if a.id == "all" {
        (known.entries())
            .filter(|e| !e.upstream.is_empty())
            .map(|e| e.id.clone())
            .collect()
    } else {
        vec![a.id.clone()]
    };
    for id in ids {
        let h = hand_over(&known, &id, &a.out)?;
        println!("{}\n{}", h.test.display(), h.message.display());
    }
    Ok(0)
}
