//! What git says about a repository's reflogs: `git log -g` of many refs in one process.

use std::collections::BTreeMap;
use std::path::Path;

use crate::git::driver::Git;

/// Where `name@{n}` in `log -g`'s `%gD` ends the name.
fn selector_name(sel: &str) -> Option<&str> {
    let at = sel.rfind("@{")?;
    sel.ends_with('}').then(|| &sel[..at])
}

/// `git log -g --format='%gD %H %gs'` of `names` in `repo`, one line per entry, by reflog:
/// one process for all of them (each line's `%gD` says which reflog it is from), and one per
/// name only when git refuses the batch (a name that does not resolve). A name git cannot
/// walk at all is missing from the result.
pub fn log_g(
    git: &Git,
    repo: &Path,
    names: &[&String],
    tick: u64,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for chunk in names.chunks(400) {
        let mut args = vec!["log", "-g", "--format=%gD %H %gs"];
        args.extend(chunk.iter().map(|n| n.as_str()));
        args.push("--");
        let o = git.run(repo, &args, "", tick);
        if o.exit.success() {
            for n in chunk {
                out.insert(n.to_string(), Vec::new());
            }
            for line in o.stdout.lines() {
                let sel = line.split(' ').next().unwrap_or("");
                if let Some(lines) = selector_name(sel).and_then(|n| out.get_mut(n)) {
                    lines.push(line.to_string());
                }
            }
            continue;
        }
        for name in chunk {
            let o = git.run(
                repo,
                &["log", "-g", "--format=%gD %H %gs", name, "--"],
                "",
                tick,
            );
            if o.exit.success() {
                out.insert(
                    name.to_string(),
                    o.stdout.lines().map(str::to_string).collect(),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_selectors() {
        assert_eq!(selector_name("HEAD@{0}"), Some("HEAD"));
        assert_eq!(selector_name("refs/heads/a@b@{12}"), Some("refs/heads/a@b"));
        assert_eq!(selector_name("refs/heads/x"), None);
    }
}
