//! Which implementation `--impl` names, as the command line of its adapter:
//!
//! - `ours`: the reference adapter, `reftable-adapter` beside this binary (`cargo build
//!   --release -p reftable-adapter`);
//! - `dulwich`, `dulwich=VERSION` or `dulwich=PATH`: dulwich's adapter in a virtual
//!   environment `adapters/dulwich/setup.sh` makes under `target/impls/` (1.2.21 by
//!   default; a path installs that checkout);
//! - `libgit2=ADAPTER`: the adapter `adapters/libgit2/build.sh` built against a libgit2
//!   checkout;
//! - `cmd=PROGRAM ARGS...`: any adapter, split on spaces.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::impls::process::sibling;

/// The dulwich release the gate pins.
pub const DULWICH: &str = "1.2.21";

/// The adapter's command line for `spec`, with a short label for reports.
pub fn adapter_command(spec: &str, workspace: &Path) -> Result<(String, Vec<String>), String> {
    let (name, arg) = spec.split_once('=').unwrap_or((spec, ""));
    match name {
        "ours" => {
            let bin = sibling("reftable-adapter")?;
            if !bin.is_file() {
                return Err(format!(
                    "no reference adapter at {} (cargo build --release -p reftable-adapter)",
                    bin.display()
                ));
            }
            Ok(("ours".into(), vec![bin.display().to_string()]))
        }
        "dulwich" => dulwich(if arg.is_empty() { DULWICH } else { arg }, workspace),
        "libgit2" if !arg.is_empty() => Ok(("libgit2".into(), vec![arg.to_string()])),
        "cmd" if !arg.is_empty() => {
            let argv: Vec<String> = arg.split_whitespace().map(String::from).collect();
            Ok((argv[0].clone(), argv))
        }
        _ => Err(format!(
            "--impl {spec}: say ours, dulwich[=VERSION|PATH], libgit2=ADAPTER or cmd=COMMAND"
        )),
    }
}

/// dulwich `what` (a version or a checkout's path) in a virtual environment of its own.
fn dulwich(what: &str, workspace: &Path) -> Result<(String, Vec<String>), String> {
    let tag: String = (what.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let venv: PathBuf = workspace
        .join("target/impls")
        .join(format!("dulwich-{tag}"));
    let setup = workspace.join("adapters/dulwich/setup.sh");
    let out = Command::new("bash")
        .arg(&setup)
        .arg(what)
        .arg(&venv)
        .output()
        .map_err(|e| format!("{}: {e}", setup.display()))?;
    if !out.status.success() {
        return Err(format!(
            "cannot install dulwich {what}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let python = venv.join("bin/python");
    let adapter = workspace.join("adapters/dulwich/adapter.py");
    let label = format!("dulwich {what}");
    Ok((
        label,
        vec![python.display().to_string(), adapter.display().to_string()],
    ))
}

/// The workspace the gate runs in: where `adapters/` is (the current directory, or the
/// one the binary was built in).
pub fn workspace() -> PathBuf {
    let here = PathBuf::from(".");
    if here.join("adapters/PROTOCOL.md").is_file() {
        return std::path::absolute(&here).unwrap_or(here);
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}
