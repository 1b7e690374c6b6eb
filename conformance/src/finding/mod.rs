//! What more than one mode uses for what it finds: the divergence type ([`divergence`]),
//! finding directories and their two scripts ([`dir`]), delta debugging ([`minimize`]),
//! git-only reproducer scripts of operations ([`script`]) and a detail's signature
//! ([`shape`]).

pub mod dir;
pub mod divergence;
pub mod minimize;
pub mod script;
pub mod shape;
