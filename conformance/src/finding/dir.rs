//! A finding's directory, written the same way by every mode: created afresh, scripts
//! executable, and one name per kind of script: [`RERUN`] runs the finding again through
//! the gate, [`REPRODUCE`] shows it with git alone.

use std::path::Path;

use crate::finding::script::sh_quote;

/// The script that runs a finding again through the gate (`sh rerun.sh [ARGS]`).
pub const RERUN: &str = "rerun.sh";

/// The script that shows a finding with git alone: no cargo, no gate, for a report upstream.
pub const REPRODUCE: &str = "reproduce.sh";

/// Make `dir` anew: whatever was there is removed first.
pub fn fresh(dir: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)
}

/// Write `text` to `path` as an executable script.
pub fn write_script(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// A [`RERUN`] script: `about` as its comment, then the gate run with `args` (shell words;
/// `$here` is the script's own directory) and whatever arguments the script is given, under
/// the environment assignments `vars` (each followed by a space). The binary is `CONFORMANCE`
/// when set, else the conformance binary that wrote the script while it still exists, else
/// cargo in the workspace it came from.
pub fn rerun_script(about: &str, vars: &str, args: &str) -> String {
    let bin = std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .display()
        .to_string();
    let about: String = about.lines().map(|l| format!("# {l}\n")).collect();
    format!(
        "#!/bin/sh\n{about}# CONFORMANCE: the conformance binary to run (default: the one that wrote this script,\n# else cargo in the workspace it came from).\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\nbin=${{CONFORMANCE:-{}}}\nif [ -x \"$bin\" ]; then exec env {vars}\"$bin\" {args} \"$@\"; fi\nexec env {vars}cargo run --quiet --release --manifest-path {} -p conformance -- {args} \"$@\"\n",
        sh_quote(&bin),
        sh_quote(&format!("{workspace}/Cargo.toml"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_script_runs_the_binary_with_its_arguments_from_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RERUN);
        write_script(
            &path,
            &rerun_script("two\nlines", "A=1 ", "replay \"$here\""),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("#!/bin/sh\n# two\n# lines\n"), "{text}");
        // CONFORMANCE stands in for the gate: a script that prints its environment variable
        // and arguments.
        let fake = dir.path().join("fake");
        write_script(&fake, "#!/bin/sh\necho \"A=$A $*\"\n").unwrap();
        let out = std::process::Command::new(&path)
            .arg("--git")
            .arg("/x/git")
            .current_dir("/")
            .env("CONFORMANCE", &fake)
            .output()
            .unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("A=1 replay {} --git /x/git\n", real.display())
        );
    }
}
