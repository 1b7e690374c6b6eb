//! A build tree's `bin-wrappers/git`: the shell script git's build writes so that a build
//! runs before it is installed. It exports the build's exec path, templates and `PATH`,
//! then `exec`s the built binary. Run as is, every git command starts a shell as well:
//! about 0.65 ms of CPU each on a 2-core VM, a quarter of a default run's git CPU on
//! master's `-O0` build. [`Wrapper::read`] reads what the script sets and runs, so that
//! [`Git`](super::driver::Git) can start the binary itself with the same environment.
//!
//! The reading is strict: the script must consist of the lines the template has had since
//! git 2.45 (assignments of quoted text, `export`, the `NO_SET_GIT_TEMPLATE_DIR` test and the
//! `GIT_DEBUGGER` case), as they run in the cleared environment the gate gives git. Any
//! other line and the script is run as is.

use std::collections::BTreeSet;
use std::path::PathBuf;

/// What a wrapper script does in the gate's environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapper {
    /// The binary it runs.
    pub program: PathBuf,
    /// The variables it exports, with their values, in the order it assigns them (`PATH`
    /// left out).
    pub env: Vec<(String, String)>,
    /// What it puts before `$PATH`, if it sets `PATH`.
    pub path_prefix: Option<String>,
}

/// The variable the template's `if` tests; the gate never sets it, so the `else` runs.
const TEMPLATE_TEST: &str = "if test -n \"$NO_SET_GIT_TEMPLATE_DIR\"";
/// The case that picks how to run git; the gate never sets it, so the `''` branch runs.
const DEBUGGER_CASE: &str = "case \"$GIT_DEBUGGER\" in";

/// Where a line stands in the template's one `if`.
#[derive(PartialEq)]
enum Branch {
    Outside,
    /// In the `then` branch, which does not run.
    Skipped,
    /// In the `else` branch, which runs.
    Taken,
}

impl Wrapper {
    /// What `script` does, if it is a wrapper this reads (see the module's documentation).
    pub fn read(script: &str) -> Option<Wrapper> {
        let mut lines = script.lines().map(str::trim);
        if lines.next()? != "#!/bin/sh" {
            return None;
        }
        let mut vars: Vec<(String, String)> = Vec::new();
        let mut exported = BTreeSet::new();
        let mut path_prefix = None;
        let mut branch = Branch::Outside;
        while let Some(line) = lines.next() {
            match line {
                "" => continue,
                _ if line.starts_with('#') => continue,
                TEMPLATE_TEST if branch == Branch::Outside => branch = Branch::Skipped,
                "then" if branch == Branch::Skipped => {}
                "else" if branch == Branch::Skipped => branch = Branch::Taken,
                "fi" if branch == Branch::Taken => branch = Branch::Outside,
                _ if branch == Branch::Skipped => continue,
                DEBUGGER_CASE if branch == Branch::Outside => {
                    let program = debugger_unset_branch(&mut lines, &vars)?;
                    let env = vars
                        .into_iter()
                        .filter(|(k, _)| exported.contains(k) && k != "PATH")
                        .collect();
                    return Some(Wrapper {
                        program,
                        env,
                        path_prefix: path_prefix.filter(|_| exported.contains("PATH")),
                    });
                }
                _ => {
                    if let Some(names) = line.strip_prefix("export ") {
                        exported.extend(names.split_whitespace().map(str::to_string));
                    } else {
                        let (name, value) = line.split_once('=')?;
                        if !is_name(name) {
                            return None;
                        }
                        match value.strip_suffix("\"$PATH\"") {
                            Some(prefix) if name == "PATH" => {
                                path_prefix = Some(expand_word(prefix, name, &vars)?);
                            }
                            _ => {
                                let value = expand_word(value, name, &vars)?;
                                vars.retain(|(k, _)| k != name);
                                vars.push((name.to_string(), value));
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

/// After the `case` line: the `''` branch must be one `exec "<program>" "$@"`.
fn debugger_unset_branch<'a>(
    lines: &mut impl Iterator<Item = &'a str>,
    vars: &[(String, String)],
) -> Option<PathBuf> {
    if lines.next()? != "'')" {
        return None;
    }
    let word = lines
        .next()?
        .strip_prefix("exec ")?
        .strip_suffix(" \"$@\"")?;
    let program = expand_word(word, "", vars)?;
    (lines.next()? == ";;" && program.starts_with('/')).then(|| PathBuf::from(program))
}

/// A shell name: letters, digits and underscores, not starting with a digit.
fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// The value of a word made of quoted pieces: `'text'`, and `"…"` holding text and
/// `${NAME}`, `$NAME` or `${SELF:+…}` (`SELF` being the variable assigned, which the gate's
/// cleared environment leaves unset, so the piece is empty). A name must have been assigned
/// above; anything else is not read.
fn expand_word(word: &str, assigning: &str, vars: &[(String, String)]) -> Option<String> {
    let mut out = String::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('\'') {
            let (text, after) = r.split_once('\'')?;
            out.push_str(text);
            rest = after;
        } else if let Some(r) = rest.strip_prefix('"') {
            let (text, after) = r.split_once('"')?;
            out.push_str(&expand_double_quoted(text, assigning, vars)?);
            rest = after;
        } else {
            return None;
        }
    }
    Some(out)
}

/// The inside of a double-quoted piece (see [`expand_word`]).
fn expand_double_quoted(text: &str, assigning: &str, vars: &[(String, String)]) -> Option<String> {
    // Escapes and command substitutions are not read.
    if text.contains(['`', '\\']) {
        return None;
    }
    let lookup = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(r) = rest.strip_prefix('{') {
            let (inner, after) = r.split_once('}')?;
            rest = after;
            match inner.split_once(":+") {
                Some((name, _)) if name == assigning && lookup(name).is_none() => {}
                Some(_) => return None,
                None if is_name(inner) => out.push_str(&lookup(inner)?),
                None => return None,
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            out.push_str(&lookup(&rest[..end])?);
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template as git master writes it (our own rendering of its lines).
    const MASTER: &str = r#"#!/bin/sh

# written by the build

GIT_EXEC_PATH='/b/git'
if test -n "$NO_SET_GIT_TEMPLATE_DIR"
then
	unset GIT_TEMPLATE_DIR
else
	GIT_TEMPLATE_DIR='/b/git/templates/blt'
	export GIT_TEMPLATE_DIR
fi
MERGE_TOOLS_DIR='/b/git/mergetools'
GITPERLLIB='/b/git/perl/build/lib'"${GITPERLLIB:+:$GITPERLLIB}"
GIT_TEXTDOMAINDIR='/b/git/po/build/locale'
PATH='/b/git/bin-wrappers:'"$PATH"

export MERGE_TOOLS_DIR GIT_EXEC_PATH GITPERLLIB PATH GIT_TEXTDOMAINDIR

case "$GIT_DEBUGGER" in
'')
	exec "/b/git/git" "$@"
	;;
1)
	unset GIT_DEBUGGER
	exec gdb --args "/b/git/git" "$@"
	;;
esac
"#;

    #[test]
    fn a_master_wrapper_is_read_with_its_exports_in_order() {
        let w = Wrapper::read(MASTER).expect("read");
        assert_eq!(w.program, PathBuf::from("/b/git/git"));
        let env: Vec<(&str, &str)> = (w.env.iter())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            env,
            [
                ("GIT_EXEC_PATH", "/b/git"),
                ("GIT_TEMPLATE_DIR", "/b/git/templates/blt"),
                ("MERGE_TOOLS_DIR", "/b/git/mergetools"),
                ("GITPERLLIB", "/b/git/perl/build/lib"),
                ("GIT_TEXTDOMAINDIR", "/b/git/po/build/locale"),
            ]
        );
        assert_eq!(w.path_prefix.as_deref(), Some("/b/git/bin-wrappers:"));
    }

    #[test]
    fn an_older_wrapper_runs_the_binary_under_its_exec_path() {
        let older = MASTER
            .replace("MERGE_TOOLS_DIR='/b/git/mergetools'\n", "")
            .replace("export MERGE_TOOLS_DIR ", "export ")
            .replace("exec \"/b/git/git\"", "exec \"${GIT_EXEC_PATH}/git\"");
        let w = Wrapper::read(&older).expect("read");
        assert_eq!(w.program, PathBuf::from("/b/git/git"));
        assert!(!w.env.iter().any(|(k, _)| k == "MERGE_TOOLS_DIR"));
    }

    #[test]
    fn a_line_the_template_never_had_leaves_the_script_to_run_as_is() {
        for extra in [
            "echo hello",
            "GIT_EXEC_PATH=$(pwd)",
            "X=\"$HOME/git\"",
            "X='a'\"${Y:+:$Y}\"",
            "X=\"`pwd`\"",
            "X=\"a\\$GIT_EXEC_PATH\"",
            "X=unquoted",
        ] {
            let script =
                MASTER.replace("\nMERGE_TOOLS_DIR", &format!("\n{extra}\nMERGE_TOOLS_DIR"));
            assert_eq!(Wrapper::read(&script), None, "{extra}");
        }
        assert_eq!(
            Wrapper::read(
                &MASTER.replace("\"/b/git/git\" \"$@\"\n\t;;\n1)", "git \"$@\"\n\t;;\n1)")
            ),
            None
        );
        assert_eq!(Wrapper::read("\x7fELF"), None);
    }

    #[test]
    fn an_unexported_assignment_does_not_reach_git() {
        let script = MASTER.replace("export MERGE_TOOLS_DIR ", "export ");
        let w = Wrapper::read(&script).expect("read");
        assert!(!w.env.iter().any(|(k, _)| k == "MERGE_TOOLS_DIR"));
        let script = MASTER.replace(" PATH GIT_TEXTDOMAINDIR", " GIT_TEXTDOMAINDIR");
        assert_eq!(Wrapper::read(&script).expect("read").path_prefix, None);
    }
}
