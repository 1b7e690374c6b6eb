//! What more than one mode uses for what it finds: the divergence type ([`divergence`]),
//! finding directories and their two scripts ([`dir`]), delta debugging ([`minimize`]) and
//! git-only reproducer scripts of operations ([`script`]).

pub mod dir;
pub mod divergence;
pub mod minimize;
pub mod script;
