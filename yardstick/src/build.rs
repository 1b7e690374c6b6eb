//! A checkout of the user's, built: copied into a directory of the tool's own (built
//! objects and all, so the first build there is incremental), rebuilt with the checkout's
//! own build configuration, and put back file by file after a mutant.
//!
//! The build configuration of a git tree is its `config.mak` (copied with it) plus the make
//! variables it was built with on the command line, which git records in
//! `GIT-BUILD-OPTIONS` (`NO_CURL`, `NO_PERL`, ...; a tree without gitk built was built with
//! `NO_TCLTK`; its `prefix` is in `GIT-PREFIX`). The copy is built with the same ones, and
//! `GIT-CFLAGS`, `GIT-LDFLAGS` and `GIT-PREFIX` must come out as the checkout's: otherwise make would have rebuilt everything with other
//! flags, and the run stops and says so. git's wrapper scripts (`bin-wrappers/`) name the
//! directory they were made in; the copy's are pointed at the copy, and a checkout whose
//! wrappers run another tree (one copied with `cp -a` after its build) is refused.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::command::{run_logged, Ran};

/// `GIT-BUILD-OPTIONS` entries that are make variables of the build itself.
const MAKE_OPTIONS: [&str; 14] = [
    "NO_CURL",
    "NO_EXPAT",
    "NO_GETTEXT",
    "NO_GITWEB",
    "NO_ICONV",
    "NO_PERL",
    "NO_PTHREADS",
    "NO_PYTHON",
    "NO_REGEX",
    "NO_UNIX_SOCKETS",
    "USE_LIBPCRE2",
    "SANITIZE_ADDRESS",
    "SANITIZE_LEAK",
    "WITH_BREAKING_CHANGES",
];

/// A built copy of a checkout.
#[derive(Clone, Debug)]
pub struct Tree {
    /// The user's checkout (never written).
    pub src: PathBuf,
    /// The copy the tool builds and mutates.
    pub dir: PathBuf,
    /// The build command (shell text, run in `dir`).
    pub build: String,
    /// The program the build makes, relative to the tree (`git`).
    pub binary: String,
}

impl Tree {
    /// The copy at `dir` of `src`, made (with `cp -a`, wrappers re-pointed) unless it exists.
    pub fn prepare(src: &Path, dir: &Path, build: String, binary: &str) -> Result<Tree, String> {
        let src = std::fs::canonicalize(src).map_err(|e| format!("{}: {e}", src.display()))?;
        let abs = std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if abs.starts_with(&src) || src.starts_with(&abs) {
            return Err(format!(
                "the work tree {} must be outside the checkout {}",
                abs.display(),
                src.display()
            ));
        }
        wrappers_run_own_git(&src)?;
        if !abs.exists() {
            copy_checkout(&src, &abs)?;
        }
        let dir = std::fs::canonicalize(&abs).map_err(|e| format!("{}: {e}", abs.display()))?;
        wrappers_run_own_git(&dir)?;
        Ok(Tree {
            src,
            dir,
            build,
            binary: binary.to_string(),
        })
    }

    /// Build, output to `log`, killed (the whole process group) after `timeout`.
    pub fn make(&self, log: &Path, timeout: Duration) -> Ran {
        run_logged("build", &self.build, &self.dir, log, timeout, &[])
    }

    /// The program to hand the gate: git's `bin-wrappers/git` when the tree has one (it runs
    /// the tree's git with the tree's exec path and templates), else the binary itself.
    pub fn program(&self) -> PathBuf {
        let wrapper = self.dir.join("bin-wrappers").join(&self.binary);
        if wrapper.is_file() {
            wrapper
        } else {
            self.dir.join(&self.binary)
        }
    }

    /// After the first build: fails when `GIT-CFLAGS`, `GIT-LDFLAGS` or `GIT-PREFIX` differ
    /// from the checkout's (the build used other flags than the checkout was built with).
    pub fn check_flags(&self) -> Result<(), String> {
        for f in ["GIT-CFLAGS", "GIT-LDFLAGS", "GIT-PREFIX"] {
            let theirs = std::fs::read_to_string(self.src.join(f)).ok();
            let ours = std::fs::read_to_string(self.dir.join(f)).ok();
            if theirs != ours {
                return Err(format!(
                    "{f} of the copy differs from the checkout's: the checkout was built with other make variables than `{}`; give them with --make-vars or --build\n  checkout: {}\n  copy:     {}",
                    self.build,
                    theirs.unwrap_or_default().trim(),
                    ours.unwrap_or_default().trim()
                ));
            }
        }
        Ok(())
    }

    /// Put `file` (relative) back as the checkout has it, when it differs. Whether it did.
    pub fn restore(&self, file: &str) -> Result<bool, String> {
        let theirs = read(&self.src.join(file))?;
        let ours = self.dir.join(file);
        if read(&ours)? == theirs {
            return Ok(false);
        }
        std::fs::write(&ours, theirs).map_err(|e| format!("{}: {e}", ours.display()))?;
        Ok(true)
    }

    /// Mark `file` (relative) as changed now, so that the next build compiles it here: the
    /// copied objects were compiled in the checkout and name its directory in their debug
    /// information, so they cannot be compared with objects compiled in the copy.
    pub fn touch(&self, file: &str) -> Result<(), String> {
        let p = self.dir.join(file);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            .map_err(|e| format!("{}: {e}", p.display()))
    }

    /// Copy the unmutated program to `dir` and return what runs it: for git, a copy of its
    /// `bin-wrappers/git` that runs the copied binary (so both sides start alike).
    pub fn save_base(&self, dir: &Path) -> Result<PathBuf, String> {
        std::fs::create_dir_all(dir.join("bin")).map_err(|e| e.to_string())?;
        let bin = dir.join("bin").join(&self.binary);
        let built = self.dir.join(&self.binary);
        std::fs::copy(&built, &bin).map_err(|e| format!("{}: {e}", built.display()))?;
        let wrapper = self.dir.join("bin-wrappers").join(&self.binary);
        let Ok(text) = std::fs::read_to_string(&wrapper) else {
            return Ok(bin);
        };
        let target = format!("\"{}\"", built.display());
        let text = text.replace(&target, &format!("\"{}\"", bin.display()));
        let out = dir.join(&self.binary);
        reftable_testkit::exec_file::write_executable(&out, &text)?;
        Ok(out)
    }
}

/// The build command for a checkout: `make -jJOBS` with the make variables its
/// `GIT-BUILD-OPTIONS` records, `extra` variables after them.
pub fn default_build(src: &Path, jobs: usize, extra: &[String]) -> String {
    let mut words = vec![format!("make -j{jobs}")];
    words.extend(recorded_make_vars(src));
    words.extend(extra.iter().cloned());
    words.join(" ")
}

/// The make variables a checkout's `GIT-BUILD-OPTIONS` records as set (shell-quoted as it
/// writes them), `NO_TCLTK=1` when it has no gitk built, and the `prefix` of `GIT-PREFIX`.
pub fn recorded_make_vars(src: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(src.join("GIT-BUILD-OPTIONS")) else {
        return Vec::new();
    };
    let mut vars: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, v)| MAKE_OPTIONS.contains(k) && !v.is_empty() && *v != "''")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if src.join("gitk-git").is_dir() && !src.join("gitk-git/gitk-wish").exists() {
        vars.push("NO_TCLTK=1".to_string());
    }
    // GIT-PREFIX: bindir:gitexecdir:template_dir:prefix:localedir.
    let prefix = std::fs::read_to_string(src.join("GIT-PREFIX")).unwrap_or_default();
    if let Some(p) = prefix.split(':').nth(3).filter(|p| !p.is_empty()) {
        vars.push(format!("prefix='{}'", p.replace('\'', "'\\''")));
    }
    vars
}

/// `cp -a SRC/. DEST` (times kept, so make sees the objects as current), then the wrapper
/// scripts pointed at `DEST`.
fn copy_checkout(src: &Path, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(dest)
        .status()
        .map_err(|e| format!("cp: {e}"))?;
    if !st.success() {
        return Err(format!(
            "cp -a {} {} failed: {st}",
            src.display(),
            dest.display()
        ));
    }
    let dest = std::fs::canonicalize(dest).map_err(|e| e.to_string())?;
    repoint_wrappers(src, &dest)
}

/// Refuse a tree (canonical path) whose `bin-wrappers/*` run another tree's git: a checkout
/// copied with its wrappers still runs the tree it was copied from, and testing it would
/// test that tree.
fn wrappers_run_own_git(tree: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(tree.join("bin-wrappers")) else {
        return Ok(());
    };
    let own = tree.display().to_string();
    for e in entries.flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        if let Some(other) = wrapped_tree(&text).filter(|t| *t != own) {
            return Err(format!(
                "{own}/bin-wrappers/{} runs the git of {other}, not its own (a copied \
                 checkout keeps the wrappers of the tree it was copied from): remake them \
                 (`rm -r bin-wrappers && make ...` there) and run again",
                e.file_name().to_string_lossy()
            ));
        }
    }
    Ok(())
}

/// The tree a git wrapper script runs (its `GIT_EXEC_PATH='...'` line), if it says; the
/// template the wrappers are made from (`@BUILD_DIR@`, which newer gits keep beside them)
/// names none.
fn wrapped_tree(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("GIT_EXEC_PATH='"))
        .and_then(|rest| rest.strip_suffix('\''))
        .filter(|tree| !tree.starts_with('@'))
}

/// Rewrite `bin-wrappers/*` of `dest` (copied from `src`) to name `dest`.
fn repoint_wrappers(src: &Path, dest: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dest.join("bin-wrappers")) else {
        return Ok(());
    };
    let (from, to) = (src.display().to_string(), dest.display().to_string());
    for e in entries.flatten() {
        let p = e.path();
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        if text.contains(&from) {
            std::fs::write(&p, text.replace(&from, &to))
                .map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    Ok(())
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// A stable 64-bit fingerprint (FNV-1a) of bytes: the same on every machine and build, for
/// state files that outlive the binary.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The fingerprint of the object file a C file compiles to (`x.c` → `x.o` beside it), if
/// there is one.
pub fn object_fingerprint(tree: &Path, file: &str) -> Option<String> {
    let obj = tree.join(file).with_extension("o");
    std::fs::read(obj).ok().map(|b| fingerprint(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_repoint_wrappers_and_restore_files() {
        let src = tempfile::tempdir().unwrap();
        let s = src.path().canonicalize().unwrap();
        std::fs::create_dir_all(s.join("bin-wrappers")).unwrap();
        let wrapper = format!("#!/bin/sh\nexec \"{}/git\" \"$@\"\n", s.display());
        std::fs::write(s.join("bin-wrappers/git"), wrapper).unwrap();
        std::fs::write(s.join("git"), "#!/bin/sh\necho base\n").unwrap();
        std::fs::write(s.join("a.c"), "int x;\n").unwrap();
        std::fs::write(
            s.join("GIT-BUILD-OPTIONS"),
            "NO_CURL='1'\nNO_EXPAT=''\nSHELL_PATH='/bin/sh'\n",
        )
        .unwrap();
        std::fs::write(
            s.join("GIT-PREFIX"),
            "/p/bin:libexec/git-core:share:/p: /p/locale\n",
        )
        .unwrap();
        assert_eq!(recorded_make_vars(&s), ["NO_CURL='1'", "prefix='/p'"]);
        assert_eq!(
            default_build(&s, 2, &["X=1".into()]),
            "make -j2 NO_CURL='1' prefix='/p' X=1"
        );
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join("tree");
        let t = Tree::prepare(&s, &dir, "true".into(), "git").unwrap();
        let w = std::fs::read_to_string(t.dir.join("bin-wrappers/git")).unwrap();
        assert!(
            w.contains(&t.dir.display().to_string()) && !w.contains(&format!("{}/", s.display()))
        );
        assert_eq!(t.program(), t.dir.join("bin-wrappers/git"));
        // A wrapper that runs another tree's git (a copied checkout's) is refused.
        let other = "#!/bin/sh\nGIT_EXEC_PATH='/elsewhere'\nexec \"/elsewhere/git\"\n";
        std::fs::write(s.join("bin-wrappers/git"), other).unwrap();
        let err = Tree::prepare(&s, &work.path().join("tree2"), "true".into(), "git").unwrap_err();
        assert!(err.contains("runs the git of /elsewhere"), "{err}");
        // The template the wrappers are made from names no tree.
        let template = "GIT_EXEC_PATH='@BUILD_DIR@'\n";
        std::fs::write(s.join("bin-wrappers/wrap-for-bin.sh"), template).unwrap();
        std::fs::write(
            s.join("bin-wrappers/git"),
            format!("GIT_EXEC_PATH='{}'\n", s.display()),
        )
        .unwrap();
        assert!(Tree::prepare(&s, &work.path().join("tree3"), "true".into(), "git").is_ok());
        std::fs::write(t.dir.join("a.c"), "int y;\n").unwrap();
        assert!(t.restore("a.c").unwrap());
        assert!(!t.restore("a.c").unwrap());
        let base = t.save_base(&work.path().join("base")).unwrap();
        let text = std::fs::read_to_string(&base).unwrap();
        assert!(text.contains("base/bin/git"), "{text}");
        assert!(Tree::prepare(&s, &s.join("inside"), "true".into(), "git").is_err());
        std::fs::write(s.join("GIT-CFLAGS"), "cc: -O2\n").unwrap();
        std::fs::write(t.dir.join("GIT-CFLAGS"), "cc: -O2\n").unwrap();
        t.check_flags().unwrap();
        std::fs::write(t.dir.join("GIT-CFLAGS"), "cc: -O0\n").unwrap();
        let e = t.check_flags().unwrap_err();
        assert!(e.contains("GIT-CFLAGS") && e.contains("--make-vars"), "{e}");
    }

    #[test]
    fn fingerprints_are_fnv1a() {
        assert_eq!(fingerprint(b""), "cbf29ce484222325");
        assert_eq!(fingerprint(b"a"), "af63dc4c8601ec8c");
    }
}
