//! A defect planted into our worker processes (`REFTABLE_PLANT`), which only a build with
//! `--cfg reftable_test_hooks` has; an ordinary build refuses the variable rather than run
//! clean without the defect.

/// Plant the defect `REFTABLE_PLANT` names, if any.
#[cfg(reftable_test_hooks)]
pub fn plant_from_env() -> Result<(), String> {
    if let Ok(name) = std::env::var("REFTABLE_PLANT") {
        match reftable::test_hooks::Defect::from_name(&name) {
            Some(d) => reftable::test_hooks::plant(d),
            None => return Err(format!("no planted defect named {name}")),
        }
    }
    Ok(())
}

/// [`plant_from_env`] in a concurrent worker: a planted lost update
/// (`no-reload-under-lock`) is made certain on its first additions, each waiting for
/// another writer's commit before it locks (`reftable::test_hooks::await_other_writers`).
pub fn plant_worker_from_env() -> Result<(), String> {
    plant_from_env()?;
    #[cfg(reftable_test_hooks)]
    if std::env::var("REFTABLE_PLANT").as_deref() == Ok("no-reload-under-lock") {
        reftable::test_hooks::await_other_writers(AWAITED_ADDITIONS);
    }
    Ok(())
}

/// How many of a planted worker's first additions wait for another writer.
#[cfg(reftable_test_hooks)]
const AWAITED_ADDITIONS: u32 = 3;

/// An ordinary build has no planted defects: asking for one is an error, not a clean run.
#[cfg(not(reftable_test_hooks))]
pub fn plant_from_env() -> Result<(), String> {
    if std::env::var_os("REFTABLE_PLANT").is_some() {
        return Err("REFTABLE_PLANT needs a build with --cfg reftable_test_hooks".into());
    }
    Ok(())
}
