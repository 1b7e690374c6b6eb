//! The error that ends the program: its message for stderr and its exit status (1 corrupt
//! data, 2 usage or I/O, 141 broken pipe), from the library's errors (with their causes)
//! and from writing output.

use std::fmt;
use std::io;
use std::process::ExitCode;

/// A failure that ends the program: the message for stderr and the exit status.
#[derive(Debug)]
pub struct CliError {
    /// Exit status (1 corrupt data, 2 usage or I/O, 141 broken pipe).
    pub code: u8,
    /// What went wrong; empty for a broken pipe, which is not reported.
    pub message: String,
}

impl CliError {
    /// A usage or I/O error (exit status 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: message.into(),
        }
    }

    /// Corrupt input (exit status 1).
    pub fn corrupt(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<reftable::Error> for CliError {
    fn from(e: reftable::Error) -> CliError {
        match e.kind() {
            reftable::ErrorKind::Format | reftable::ErrorKind::Zlib => {
                CliError::corrupt(format!("{e:#}"))
            }
            _ => CliError::usage(format!("{e:#}")),
        }
    }
}

impl From<io::Error> for CliError {
    /// Errors writing to stdout.
    fn from(e: io::Error) -> CliError {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError {
                code: 141,
                message: String::new(),
            }
        } else {
            CliError::usage(format!("writing output: {e}"))
        }
    }
}

/// What each subcommand returns: its exit status, or the error that ended it.
pub type CliResult = Result<ExitCode, CliError>;
