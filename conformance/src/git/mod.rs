//! Driving git: processes under a timeout that kills the whole process group
//! ([`driver`]), the version ([`version`]), what a git does ([`profile`]), the sanitizers
//! it was built with ([`sanitizer`]) and its error wordings mapped to refusal classes
//! ([`messages`]).

pub mod driver;
pub mod messages;
pub mod profile;
pub mod reflogs;
pub mod sanitizer;
pub mod version;
