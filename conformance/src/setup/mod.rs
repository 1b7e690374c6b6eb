//! What every mode sets up once per git: the [`env::Env`] (git, profile, scratch space,
//! repository templates) and the object pools refs point at ([`pool`]).

pub mod env;
pub mod pool;
