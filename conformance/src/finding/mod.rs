//! What more than one mode uses for what it finds: the divergence type ([`divergence`]),
//! delta debugging ([`minimize`]) and git-only reproducer scripts of operations
//! ([`script`]).

pub mod divergence;
pub mod minimize;
pub mod script;
