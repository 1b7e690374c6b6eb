//! Formatting shared by the subcommands: ref and log lines, escapes, time zones.

use std::io::{self, Write};

use reftable::{LogRecord, LogValue, RefRecord, RefValue};

/// Byte strings as JSON text: UTF-8 as is, invalid sequences replaced by U+FFFD.
pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Write the message as `logs` prints it: without one trailing newline, with `\`, newline
/// and tab escaped as `\\`, `\n` and `\t`. The runs between escaped bytes are copied whole
/// (reflog messages can be many megabytes).
pub fn write_escaped(out: &mut impl Write, msg: &[u8]) -> io::Result<()> {
    let mut rest = msg.strip_suffix(b"\n").unwrap_or(msg);
    while let Some(i) = memchr::memchr3(b'\\', b'\n', b'\t', rest) {
        out.write_all(&rest[..i])?;
        out.write_all(match rest[i] {
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            _ => b"\\t",
        })?;
        rest = &rest[i + 1..];
    }
    out.write_all(rest)
}

/// Write the line `refs` prints for a ref record (without the newline).
pub fn write_ref(out: &mut impl Write, r: &RefRecord) -> io::Result<()> {
    out.write_all(&r.refname)?;
    match &r.value {
        RefValue::Deletion => out.write_all(b" deleted"),
        RefValue::Object(id) => write!(out, " {id}"),
        RefValue::Peeled {
            object: value,
            peeled,
        } => write!(out, " {value} {peeled}"),
        RefValue::Symref(t) => {
            out.write_all(b" ref:")?;
            out.write_all(t)
        }
    }
}

/// Write the line `logs` prints for a log record (without the newline):
/// `<refname> <update-index> <old> <new> <name> <<email>> <time> <tz> <message>`, or
/// `<refname> <update-index> deleted` for a tombstone.
pub fn write_log(out: &mut impl Write, l: &LogRecord) -> io::Result<()> {
    out.write_all(&l.refname)?;
    write!(out, " {}", l.update_index)?;
    match &l.value {
        LogValue::Deletion => out.write_all(b" deleted"),
        LogValue::Update(u) => {
            write!(out, " {} {} ", u.old_id, u.new_id)?;
            let who = &u.committer;
            out.write_all(&who.name)?;
            out.write_all(b" <")?;
            out.write_all(&who.email)?;
            write!(out, "> {} {} ", who.time, who.tz_offset)?;
            write_escaped(out, &u.message)
        }
    }
}

/// Write `doc` to stdout as one pretty-printed JSON document and a newline.
pub fn print_json<T: serde::Serialize>(doc: &T) -> io::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, doc).map_err(io::Error::from)?;
    out.write_all(b"\n")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let esc = |m: &[u8]| {
            let mut v = Vec::new();
            write_escaped(&mut v, m).unwrap();
            v
        };
        assert_eq!(esc(b"a\\b\tc\n"), b"a\\\\b\\tc");
        assert_eq!(esc(b"a\nb\n\n"), b"a\\nb\\n");
        assert_eq!(esc(b""), b"");
        assert_eq!(esc(b"\t\\x"), b"\\t\\\\x");
    }
}
