//! The model's own ref-name and reflog-message rules (`harness::git_rules`, written from
//! git's documentation and source) against the library's (`reftable::refname`,
//! `reftable::refdb::normalize_message`) on generated inputs: they must agree on every
//! one, so that the gate's oracle does not share a defect with the code it checks.

use reftable::refdb::normalize_message;
use reftable::refname::{autocreates_reflog, is_pseudoref, is_safe_refname, is_valid_refname};
use reftable_harness::git_rules::{
    model_autocreates_reflog, model_pseudoref, model_reflog_message, model_refname_ok,
    model_refname_safe,
};

/// xorshift64*: reproducible draws without a dependency.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// Pieces names are made of: ordinary words, and every rule's edge (`.`, `..`, `@{`,
/// `.lock`, control bytes, `*`, leading `-`, runs of `/`, revision syntax, non-ASCII).
const NAME_PIECES: &[&[u8]] = &[
    b"refs",
    b"heads",
    b"tags",
    b"notes",
    b"remotes",
    b"FETCH_HEAD",
    b"MERGE_HEAD",
    b"_",
    b"main",
    b"a",
    b"HEAD",
    b"x.y",
    b"/",
    b"/",
    b"/",
    b"//",
    b".",
    b"..",
    b"...",
    b".x",
    b"x.",
    b"@",
    b"{",
    b"@{",
    b"}",
    b"@{1}",
    b"{@",
    b".lock",
    b"lock",
    b"a.lock",
    b".lock.lock",
    b"*",
    b"-",
    b"-x",
    b"~",
    b"^",
    b":",
    b"?",
    b"[",
    b"]",
    b"\\",
    b" ",
    b"\t",
    b"\n",
    b"\r",
    b"\x7f",
    b"\x01",
    b"\x1f",
    b"\0",
    b"\xc3\xa9",
    b"\xff",
    b"\x80",
    b"!",
    b"#",
    b"%",
    b"'",
    b"\"",
    b"<",
    b">",
    b"|",
    b"=",
    b"+",
    b",",
];

/// Pieces messages are made of: git's four whitespace bytes, the two it does not count
/// (vertical tab, form feed), NUL, non-ASCII (a no-break space's UTF-8, a lone 0xa0).
const MESSAGE_PIECES: &[&[u8]] = &[
    b" ",
    b"  ",
    b"\t",
    b"\n",
    b"\n\n",
    b"\r",
    b"\r\n",
    b"\x0b",
    b"\x0c",
    b"\0",
    b"a",
    b"commit: x",
    b"msg",
    b"\xc3\xa9",
    b"\xc2\xa0",
    b"\xa0",
    b"-",
    b"\\n",
    b".",
];

fn compose(d: &mut Draw, pieces: &[&[u8]], max: usize) -> Vec<u8> {
    let n = d.below(max) + 1;
    (0..n)
        .flat_map(|_| pieces[d.below(pieces.len())].to_vec())
        .collect()
}

fn random_bytes(d: &mut Draw, max: usize) -> Vec<u8> {
    let n = d.below(max + 1);
    (0..n).map(|_| d.below(256) as u8).collect()
}

#[test]
fn ref_names_agree() {
    let mut d = Draw(0x9e37_79b9_7f4a_7c15);
    let mut names: Vec<Vec<u8>> = [
        &b""[..],
        b"@",
        b"HEAD",
        b"refs/heads/main",
        b"refs/heads/a..b",
        b"refs/heads/a.lock",
        b"refs/heads/.x",
        b"refs/heads/x.",
        b"refs//x",
        b"/refs/x",
        b"refs/x/",
        b"refs/x@{1}",
        b"refs/heads/@",
        b"refs/*",
        b"-x",
        b"refs/heads/-x",
        b"refs/heads/a b",
        b"refs/heads/\xc3\xa9",
        b"refs/heads/.lock",
        b"refs/heads/x.lock/y",
        b"a/b.lock.c",
    ]
    .iter()
    .map(|n| n.to_vec())
    .collect();
    // Half under `refs/`, where the safe-name rule looks at path components.
    names.extend((0..20_000).map(|i| {
        let mut n = if i % 2 == 0 {
            b"refs/".to_vec()
        } else {
            Vec::new()
        };
        n.extend(compose(&mut d, NAME_PIECES, 8));
        n
    }));
    names.extend((0..5_000).map(|_| random_bytes(&mut d, 12)));
    // Names safe but not valid, pseudorefs and reflog-creating prefixes too.
    for extra in [
        &b"refs/x/../y"[..],
        b"refs/./x",
        b"refs/x/.",
        b"refs/",
        b"refs//x",
        b"refs/x/",
        b"ORIG_HEAD",
        b"FETCH_HEAD",
        b"MERGE_HEAD",
        b"_",
        b"HEAD_",
        b"Head",
        b"refs/heads/x",
        b"refs/remotes/o/x",
        b"refs/notes/commits",
        b"refs/tags/v1",
        b"refs/headsx",
        b"HEAD/x",
    ] {
        names.push(extra.to_vec());
    }
    let mut disagreements = Vec::new();
    let mut valid = 0;
    for name in &names {
        for onelevel in [false, true] {
            let model = model_refname_ok(name, onelevel);
            valid += usize::from(model);
            if model != is_valid_refname(name, onelevel) {
                disagreements.push((String::from_utf8_lossy(name).into_owned(), onelevel));
            }
        }
        let others = [
            ("safe", model_refname_safe(name), is_safe_refname(name)),
            ("pseudoref", model_pseudoref(name), is_pseudoref(name)),
            (
                "reflog",
                model_autocreates_reflog(name),
                autocreates_reflog(name),
            ),
        ];
        for (rule, model, library) in others {
            if model != library {
                disagreements.push((format!("{rule}: {}", String::from_utf8_lossy(name)), false));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} names: {:?}",
        disagreements.len(),
        names.len() * 2,
        &disagreements[..disagreements.len().min(20)]
    );
    // The draw reaches both answers often enough to mean something.
    assert!(
        valid > 2_000 && valid < names.len() * 2 - 2_000,
        "{valid} valid"
    );
}

#[test]
fn reflog_messages_agree() {
    let mut d = Draw(0xd1b5_4a32_d192_ed03);
    let mut messages: Vec<Vec<u8>> = [
        &b""[..],
        b" ",
        b"\n",
        b"  multi\n\nline\t x ",
        b"a\0b",
        b"\0",
        b"\x0ba\x0c",
        b"tail\r\n",
        b"\xa0x\xa0",
    ]
    .iter()
    .map(|m| m.to_vec())
    .collect();
    messages.extend((0..20_000).map(|_| compose(&mut d, MESSAGE_PIECES, 10)));
    messages.extend((0..5_000).map(|_| random_bytes(&mut d, 16)));
    let disagreements: Vec<String> = messages
        .iter()
        .filter(|m| model_reflog_message(m) != normalize_message(m))
        .map(|m| format!("{:?}", String::from_utf8_lossy(m)))
        .collect();
    assert!(
        disagreements.is_empty(),
        "{} of {} messages: {:?}",
        disagreements.len(),
        messages.len(),
        &disagreements[..disagreements.len().min(20)]
    );
}
