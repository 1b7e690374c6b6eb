//! The byte layout of the stack fuzz target's input: a `tables.list` and named table files
//! in one buffer, so that seeds are real git stacks and libFuzzer mutates them byte-wise.
//!
//! ```text
//! <tables.list contents>
//! SEPARATOR <file name> \n <file bytes>
//! SEPARATOR <file name> \n <file bytes>
//! ```

/// Separates the `tables.list` contents and the files.
pub const SEPARATOR: &[u8] = b"\n%%reftable-fuzz-file%%\n";

/// A decoded stack input, borrowing from the buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackInput<'a> {
    /// The contents of `tables.list`.
    pub list: &'a [u8],
    /// File names and contents (a later file shadows an earlier one of the same name).
    pub files: Vec<(&'a [u8], &'a [u8])>,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl<'a> StackInput<'a> {
    /// Split `data` into the list and the files. Every buffer decodes: a file part without a
    /// newline is a file with that name and no bytes.
    pub fn parse(data: &'a [u8]) -> StackInput<'a> {
        let mut parts = Vec::new();
        let mut rest = data;
        while let Some(i) = find(rest, SEPARATOR) {
            parts.push(&rest[..i]);
            rest = &rest[i + SEPARATOR.len()..];
        }
        parts.push(rest);
        let list = parts[0];
        let files = parts[1..]
            .iter()
            .map(|p| match p.iter().position(|&b| b == b'\n') {
                Some(i) => (&p[..i], &p[i + 1..]),
                None => (*p, &p[p.len()..]),
            })
            .collect();
        StackInput { list, files }
    }

    /// The file called `name`, if present.
    pub fn file(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.files
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|f| f.1)
    }

    /// Encode back into the byte layout (the inverse of [`StackInput::parse`] when no file
    /// contains the separator).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.list.to_vec();
        for (name, bytes) in &self.files {
            out.extend_from_slice(SEPARATOR);
            out.extend_from_slice(name);
            out.push(b'\n');
            out.extend_from_slice(bytes);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let s = StackInput {
            list: b"a.ref\nb.ref\n",
            files: vec![(b"a.ref", b"REFT\x01"), (b"b.ref", b"")],
        };
        let enc = s.encode();
        assert_eq!(StackInput::parse(&enc), s);
        assert_eq!(StackInput::parse(b"only a list").files.len(), 0);
        let odd = [SEPARATOR, b"noname"].concat();
        assert_eq!(StackInput::parse(&odd).files, [(&b"noname"[..], &b""[..])]);
    }
}
