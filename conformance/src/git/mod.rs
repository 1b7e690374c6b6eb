//! Driving git: processes under a timeout that kills the whole process group
//! ([`driver`]), a build tree's wrapper script read so its binary starts without a shell
//! ([`wrapper`]), the version ([`version`]), what a git does ([`profile`]), the sanitizers
//! it was built with ([`sanitizer`]), its error wordings mapped to refusal classes
//! ([`messages`]) and the bound on the files it writes ([`runaway`]).

pub mod driver;
pub mod messages;
pub mod profile;
pub mod reflogs;
pub mod runaway;
pub mod sanitizer;
pub mod version;
pub mod wrapper;
