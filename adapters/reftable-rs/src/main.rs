//! `reftable-adapter`: the reference adapter of the reftable conformance protocol
//! (`adapters/PROTOCOL.md`, version 1) over this workspace's `reftable` library.
//!
//! It reads one JSON request a line on stdin and writes one JSON answer a line on stdout, in
//! order, until EOF or `quit`, then exits 0. Diagnostics go to stderr only.
//!
//! - `wire.rs`: the protocol's types read from and written to JSON (object ids, values,
//!   identities, ref and reflog objects);
//! - `answer.rs`: the four answers, and the library's errors mapped onto refusal reasons;
//! - `repo.rs`: opening a git directory (object format and `core.*` read from its config);
//! - `objects.rs`: the object lookups transactions need, from `git cat-file`;
//! - `reads.rs`, `transaction.rs`, `maintenance.rs`: the verbs;
//! - `session.rs`: the open repository and the dispatch of one request;
//! - `plant.rs`: defects planted in a test-hooks build, to show the gate's roles can fail.

#![warn(missing_docs)]

mod answer;
mod maintenance;
mod objects;
mod plant;
mod reads;
mod repo;
mod session;
mod transaction;
mod wire;

use std::io::{BufRead, Write};

use serde_json::Value;

use crate::answer::Answer;
use crate::session::{Flow, Session};

/// Serve requests from stdin until EOF or `quit`.
fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut session = Session::default();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("reftable-adapter: reading stdin: {e}");
                std::process::exit(2);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let (answer, flow) = serve_line(&mut session, &line);
        if let Err(e) = writeln!(stdout, "{answer}").and_then(|()| stdout.flush()) {
            eprintln!("reftable-adapter: writing stdout: {e}");
            std::process::exit(2);
        }
        if flow == Flow::Quit {
            break;
        }
    }
}

/// Parse one request line, run it, and return its answer (with the request's `id` echoed)
/// and whether to go on.
fn serve_line(session: &mut Session, line: &str) -> (Value, Flow) {
    let request: Value = match serde_json::from_str(line) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            return (
                Answer::error("a request must be a JSON object").into_json(None),
                Flow::Go,
            )
        }
        Err(e) => {
            return (
                Answer::error(format!("not JSON: {e}")).into_json(None),
                Flow::Go,
            )
        }
    };
    let (answer, flow) = session.serve(&request);
    (answer.into_json(request.get("id")), flow)
}
