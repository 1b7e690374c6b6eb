//! Multi-process stress and crash tests for the stack (own `main`: the binary re-runs itself
//! as worker processes).
//!
//! - stress: two writer processes, one compactor and two readers share a stack; no update is
//!   lost, readers never see an older state after a newer one, every table stays readable;
//! - crash: a writer or compactor killed (abort) at each step of a transaction or compaction
//!   leaves a stack that reads as before or after it, never corrupt, and writable once the
//!   stale lock is removed. The crash points exist only in builds made with
//!   `--cfg reftable_test_hooks` (`ci/test-hooks.sh`), which runs only the crash test; other
//!   builds run the stress test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};

use reftable::{ErrorKind, ObjectId, StackOptions};
use reftable::{Signature, TzOffset};

fn id_for(writer: u32, i: u32) -> ObjectId {
    let mut b = [0u8; 20];
    b[0] = 1 + writer as u8;
    b[16..].copy_from_slice(&i.to_be_bytes());
    ObjectId::from_bytes(&b).unwrap()
}

fn committer() -> Signature {
    Signature {
        name: b"Stress".to_vec(),
        email: b"stress@example.com".to_vec(),
        time: 1_700_000_000,
        tz_offset: TzOffset::from_hhmm(100),
    }
}

fn open(dir: &Path, auto: bool) -> RefDb {
    RefDb::open_or_create(
        dir,
        RefDbOptions::default().stack(
            StackOptions::default()
                .auto_compaction(auto)
                .lock_timeout(Some(Duration::from_secs(20)))
                .fsync(false),
        ),
    )
    .expect("open stack")
}

fn worker(role: &str, dir: &Path) -> Result<String, String> {
    let done = dir.join("../done");
    let parts: Vec<&str> = role.split(':').collect();
    match parts[0] {
        "writer" => {
            let id: u32 = parts[1].parse().unwrap();
            let n: u32 = parts[2].parse().unwrap();
            let mut db = open(dir, true);
            for i in 0..n {
                let u = RefUpdate::create(format!("refs/heads/w{id}/{i:04}"), id_for(id, i))
                    .message(format!("writer {id} ref {i}"));
                db.transaction(&[u], &committer(), &AssumeCommits)
                    .map_err(|e| format!("writer {id}: transaction {i}: {e}"))?;
            }
            Ok(format!("writer {id}: {n} transactions"))
        }
        "compactor" => {
            let mut db = open(dir, false);
            let mut runs = 0;
            while !done.exists() {
                let _ = db.reload();
                match db.stack_mut().compact_all(None) {
                    Ok(()) => runs += 1,
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::Lock | ErrorKind::Outdated | ErrorKind::NotExist
                        ) => {}
                    Err(e) => return Err(format!("compactor: {e}")),
                }
                std::thread::sleep(Duration::from_millis(3));
            }
            Ok(format!("compactor: {runs} compactions"))
        }
        "reader" => {
            let mut db = open(dir, false);
            let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
            let mut reads = 0;
            while !done.exists() {
                match db.reload() {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::NotExist => continue,
                    Err(e) => return Err(format!("reader: reload: {e}")),
                }
                let mut refs = db.refs().map_err(|e| format!("reader: read: {e}"))?;
                let mut per_writer: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                while let Some(r) = refs
                    .next_record()
                    .map_err(|e| format!("reader: read: {e}"))?
                {
                    let name = String::from_utf8_lossy(&r.refname).into_owned();
                    let Some(rest) = name.strip_prefix("refs/heads/w") else {
                        continue;
                    };
                    let (w, i) = rest.split_once('/').unwrap();
                    let (w, i): (u32, u32) = (w.parse().unwrap(), i.parse().unwrap());
                    if r.value_id() != Some(&id_for(w, i)) {
                        return Err(format!("reader: {name} has a wrong value"));
                    }
                    per_writer.entry(w).or_default().push(i);
                }
                for (w, is) in per_writer {
                    // Each writer's refs are visible as a prefix 0..k, and k never shrinks.
                    if is.iter().enumerate().any(|(k, &i)| k as u32 != i) {
                        return Err(format!("reader: writer {w}'s refs have a gap: {is:?}"));
                    }
                    let prev = seen.insert(w, is.len()).unwrap_or(0);
                    if is.len() < prev {
                        return Err(format!(
                            "reader: writer {w} went from {prev} to {} refs",
                            is.len()
                        ));
                    }
                }
                reads += 1;
            }
            Ok(format!("reader: {reads} consistent reads"))
        }
        "crash" => {
            // REFTABLE_CRASH_AT aborts the process at the named point.
            let mut db = open(dir, false);
            if parts[1].starts_with("compact") {
                db.stack_mut()
                    .compact_all(None)
                    .map_err(|e| e.to_string())?;
            } else {
                let u = RefUpdate::create("refs/heads/new", id_for(9, 9)).message("crash me");
                db.transaction(&[u], &committer(), &AssumeCommits)
                    .map_err(|e| e.to_string())?;
            }
            Ok("crash point not reached".into())
        }
        other => Err(format!("unknown role {other}")),
    }
}

fn spawn(role: &str, dir: &Path, crash_at: Option<&str>) -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.env("STRESS_ROLE", role).env("STRESS_DIR", dir);
    if let Some(p) = crash_at {
        c.env("REFTABLE_CRASH_AT", p);
    }
    c.spawn().expect("spawn worker")
}

#[cfg(not(reftable_test_hooks))]
fn stress() -> Result<(), String> {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("reftable");
    std::fs::create_dir_all(&dir).unwrap();
    let n = 200;
    let start = std::time::Instant::now();
    let writers: Vec<Child> = (0..2)
        .map(|w| spawn(&format!("writer:{w}:{n}"), &dir, None))
        .collect();
    let others: Vec<Child> = ["compactor", "reader", "reader"]
        .iter()
        .map(|r| spawn(r, &dir, None))
        .collect();
    for mut w in writers {
        if !w.wait().unwrap().success() {
            std::fs::write(root.path().join("done"), "").unwrap();
            return Err("a writer failed".into());
        }
    }
    std::fs::write(root.path().join("done"), "").unwrap();
    for mut o in others {
        if !o.wait().unwrap().success() {
            return Err("a compactor or reader failed".into());
        }
    }
    let db = open(&dir, false);
    for w in 0..2 {
        for i in 0..n {
            let name = format!("refs/heads/w{w}/{i:04}");
            let r = db.read_ref(name.as_bytes()).map_err(|e| e.to_string())?;
            if r.as_ref().and_then(|r| r.value_id()) != Some(&id_for(w, i)) {
                return Err(format!("lost update: {name}"));
            }
        }
        if db
            .reflog(format!("refs/heads/w{w}/0000").as_bytes())
            .map_err(|e| e.to_string())?
            .count()
            != 1
        {
            return Err("lost reflog entry".into());
        }
    }
    eprintln!(
        "stress: 2 writers x {n} transactions with a compactor and 2 readers: no lost update ({:.1} s, {} tables left)",
        start.elapsed().as_secs_f64(),
        db.stack().tables().len()
    );
    Ok(())
}

#[cfg(reftable_test_hooks)]
fn names(db: &RefDb) -> Vec<(Vec<u8>, Option<ObjectId>)> {
    db.refs()
        .unwrap()
        .map(|r| r.unwrap())
        .map(|r| (r.refname.clone(), r.value_id().copied()))
        .collect()
}

#[cfg(reftable_test_hooks)]
fn crash() -> Result<(), String> {
    for point in reftable::test_hooks::CrashPoint::ALL.map(|p| p.name()) {
        let root = tempfile::tempdir().unwrap();
        let dir: PathBuf = root.path().join("reftable");
        let mut db = open(&dir, false);
        for i in 0..3 {
            let u = RefUpdate::create(format!("refs/heads/b{i}"), id_for(5, i));
            db.transaction(&[u], &committer(), &AssumeCommits).unwrap();
        }
        let before = names(&db);
        let status = spawn(&format!("crash:{point}"), &dir, Some(point))
            .wait()
            .unwrap();
        if status.success() {
            return Err(format!("{point}: the worker did not crash"));
        }
        let mut after = open(&dir, false);
        let now = names(&after);
        let mut with_new = before.clone();
        with_new.push((b"refs/heads/new".to_vec(), Some(id_for(9, 9))));
        with_new.sort();
        if now != before && now != with_new {
            return Err(format!(
                "{point}: stack reads neither as before nor as after"
            ));
        }
        // Every listed table is intact.
        for t in after.stack().tables() {
            for r in t.refs().map_err(|e| e.to_string())? {
                r.map_err(|e| format!("{point}: {e}"))?;
            }
        }
        // A stale lock blocks writers (as in git) until it is removed; then all is well.
        let stale = reftable::stale::StaleOptions::default().min_age(std::time::Duration::ZERO);
        let cleaned = reftable::stale::remove_stale(&dir, &stale).map_err(|e| e.to_string())?;
        if !cleaned.kept.is_empty() {
            return Err(format!("{point}: stale files kept: {:?}", cleaned.kept));
        }
        let u = RefUpdate::create("refs/heads/later", id_for(7, 7));
        after
            .transaction(&[u], &committer(), &AssumeCommits)
            .map_err(|e| format!("{point}: write after crash: {e}"))?;
        after.stack_mut().clean().map_err(|e| e.to_string())?;
        let stray: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "tables.list" && !after.stack().table_names().contains(n))
            .collect();
        if !stray.is_empty() {
            return Err(format!(
                "{point}: stray files after cleanup and clean: {stray:?}"
            ));
        }
        eprintln!(
            "crash at {point}: reads as {}, {} stale files removed, none left after clean",
            if now == before { "before" } else { "after" },
            cleaned.removed.len()
        );
    }
    Ok(())
}

fn main() {
    if let Ok(role) = std::env::var("STRESS_ROLE") {
        let dir = PathBuf::from(std::env::var_os("STRESS_DIR").expect("STRESS_DIR"));
        match worker(&role, &dir) {
            Ok(msg) => {
                eprintln!("{msg}");
                std::process::exit(0)
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1)
            }
        }
    }
    let mut failed = 0;
    type Test = fn() -> Result<(), String>;
    let tests: &[(&str, Test)] = &[
        // The ordinary build runs the stress test; the test-hooks build only what needs its
        // hooks.
        #[cfg(not(reftable_test_hooks))]
        ("stress", stress),
        #[cfg(reftable_test_hooks)]
        ("crash", crash),
    ];
    let count = tests.len();
    for &(name, test) in tests {
        match test() {
            Ok(()) => println!("test {name} ... ok"),
            Err(e) => {
                println!("test {name} ... FAILED: {e}");
                failed += 1;
            }
        }
    }
    println!("stack_stress: {} passed, {failed} failed", count - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
