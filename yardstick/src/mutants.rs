//! Mutants of C functions: the operator set, every mutant of a file, and the deterministic
//! sample a run takes (seed, sample size, shard).
//!
//! The operators, each a small edit of the tokens inside a function body:
//!
//! | operator | edits |
//! | --- | --- |
//! | `cmp` | `<` ↔ `<=`, `>` ↔ `>=`, `==` ↔ `!=` (each one way: `<` becomes `<=`, `<=` becomes `<`) |
//! | `logic` | `&&` → `\|\|`, `\|\|` → `&&` |
//! | `arith` | binary `+` ↔ `-`, `+=` ↔ `-=` |
//! | `incdec` | `++` ↔ `--` |
//! | `bit` | `\|` → `&`, binary `&` → `\|`, `<<` ↔ `>>`, `\|=` ↔ `&=` |
//! | `const` | an integer literal `0` → `1`, `1` → `0`, `n` → `n+1` |
//! | `cond` | the condition of an `if` or `while` negated: `if (c)` → `if (!(c))` |
//! | `call` | a call statement `f(...);` deleted (one that starts a statement: after `;`, a brace, `else` or a condition) |
//!
//! A binary `+`, `-` or `&` follows an operand (a name that is not a keyword, a literal, `)`
//! or `]`; `&` not after `)`, where it is usually the address of a cast's operand). A
//! mutant's id (`file:line:column:operator:from->to`) is stable while the file does not
//! change; the sample is the seeded shuffle of every mutant of the chosen files and
//! functions, and shard `k/n` takes every `n`th of it from the `k`th.

use serde::{Deserialize, Serialize};

use crate::ctokens::{self, Kind, Token};
use reftable_testkit::rng::Rng;

/// One mutant: a byte range of a file and what replaces it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutant {
    /// Stable name: `file:line:column:operator:from->to`.
    pub id: String,
    /// The file, relative to the tree.
    pub file: String,
    /// The function it is in.
    pub function: String,
    /// 1-based line of the edit.
    pub line: usize,
    /// The operator (`cmp`, `logic`, ...).
    pub operator: String,
    /// First byte replaced.
    pub start: usize,
    /// One past the last byte replaced.
    pub end: usize,
    /// The text replaced.
    pub original: String,
    /// The text put in its place.
    pub replacement: String,
}

impl Mutant {
    /// `src` with this mutant applied.
    pub fn apply(&self, src: &str) -> Result<String, String> {
        if src.get(self.start..self.end) != Some(self.original.as_str()) {
            return Err(format!(
                "{}: the file changed since the mutants were listed",
                self.id
            ));
        }
        Ok(format!(
            "{}{}{}",
            &src[..self.start],
            self.replacement,
            &src[self.end..]
        ))
    }

    /// The lines the mutant touches, before and after, as a small unified diff.
    pub fn diff(&self, src: &str) -> String {
        let first = src[..self.start].rfind('\n').map_or(0, |p| p + 1);
        let last = src[self.end..]
            .find('\n')
            .map_or(src.len(), |p| self.end + p);
        let before = &src[first..last];
        let after = format!(
            "{}{}{}",
            &src[first..self.start],
            self.replacement,
            &src[self.end..last]
        );
        let mut out = format!(
            "--- a/{0}\n+++ b/{0}\n@@ line {1} @@\n",
            self.file, self.line
        );
        before
            .lines()
            .for_each(|l| out.push_str(&format!("-{l}\n")));
        after.lines().for_each(|l| out.push_str(&format!("+{l}\n")));
        out
    }
}

const KEYWORDS: [&str; 12] = [
    "return", "case", "sizeof", "if", "while", "for", "switch", "do", "else", "goto", "break",
    "continue",
];

/// One-way token swaps: operator, from, to.
const SWAPS: [(&str, &str, &str); 20] = [
    ("cmp", "<", "<="),
    ("cmp", "<=", "<"),
    ("cmp", ">", ">="),
    ("cmp", ">=", ">"),
    ("cmp", "==", "!="),
    ("cmp", "!=", "=="),
    ("logic", "&&", "||"),
    ("logic", "||", "&&"),
    ("arith", "+", "-"),
    ("arith", "-", "+"),
    ("arith", "+=", "-="),
    ("arith", "-=", "+="),
    ("incdec", "++", "--"),
    ("incdec", "--", "++"),
    ("bit", "|", "&"),
    ("bit", "&", "|"),
    ("bit", "<<", ">>"),
    ("bit", ">>", "<<"),
    ("bit", "|=", "&="),
    ("bit", "&=", "|="),
];

/// Every mutant of `src` (the file `file`) inside the functions `keep` accepts, in file order.
pub fn mutants_of(file: &str, src: &str, keep: &dyn Fn(&str) -> bool) -> Vec<Mutant> {
    let toks = ctokens::tokenize(src);
    let mut out = Vec::new();
    for f in ctokens::functions(src, &toks) {
        if !keep(&f.name) {
            continue;
        }
        let cx = Cx {
            file,
            src,
            toks: &toks,
            function: &f.name,
        };
        for i in f.open + 1..f.close {
            cx.at(i, &mut out);
        }
    }
    out
}

/// What the operators look at while walking one function.
struct Cx<'a> {
    file: &'a str,
    src: &'a str,
    toks: &'a [Token],
    function: &'a str,
}

impl Cx<'_> {
    /// The mutants at token `i`.
    fn at(&self, i: usize, out: &mut Vec<Mutant>) {
        let t = &self.toks[i];
        let text = t.text(self.src);
        for (op, from, to) in SWAPS {
            if text == from && self.applies(i, from) {
                out.push(self.mutant(op, t.start, t.end, to.to_string()));
            }
        }
        if t.kind == Kind::Number {
            if let Some(to) = bumped(text) {
                out.push(self.mutant("const", t.start, t.end, to));
            }
        }
        if text == "if" || text == "while" {
            self.negation(i, out);
        }
        self.call_deletion(i, out);
    }

    /// Whether the swap of `from` at `i` applies (binary `+`, `-`, `&` only).
    fn applies(&self, i: usize, from: &str) -> bool {
        if !matches!(from, "+" | "-" | "&") {
            return true;
        }
        let Some(prev) = i.checked_sub(1).map(|p| &self.toks[p]) else {
            return false;
        };
        let pt = prev.text(self.src);
        match prev.kind {
            Kind::Ident => !KEYWORDS.contains(&pt),
            Kind::Number | Kind::Literal => true,
            Kind::Punct => pt == "]" || (pt == ")" && from != "&"),
        }
    }

    /// `if (c)` → `if (!(c))`.
    fn negation(&self, i: usize, out: &mut Vec<Mutant>) {
        let Some(open) = self.toks.get(i + 1).filter(|t| t.text(self.src) == "(") else {
            return;
        };
        let Some(close) = ctokens::matching_close(self.src, self.toks, i + 1) else {
            return;
        };
        if close == i + 2 {
            return;
        }
        let inner = &self.src[open.end..self.toks[close].start];
        let (start, end) = (open.end, self.toks[close].start);
        out.push(self.mutant("cond", start, end, format!("!({inner})")));
    }

    /// `f(...);` at the start of a statement → `;`.
    fn call_deletion(&self, i: usize, out: &mut Vec<Mutant>) {
        let t = &self.toks[i];
        if t.kind != Kind::Ident || KEYWORDS.contains(&t.text(self.src)) {
            return;
        }
        if !self.statement_starts(i) || self.toks.get(i + 1).map(|n| n.text(self.src)) != Some("(")
        {
            return;
        }
        let Some(close) = ctokens::matching_close(self.src, self.toks, i + 1) else {
            return;
        };
        let Some(semi) = self.toks.get(close + 1).filter(|s| s.text(self.src) == ";") else {
            return;
        };
        out.push(self.mutant("call", t.start, semi.end, ";".to_string()));
    }

    /// Whether a statement starts at token `i`: after `;`, a brace, `else`, or the `)` that
    /// ends the condition of an `if`, `while` or `for`.
    fn statement_starts(&self, i: usize) -> bool {
        let Some(p) = i.checked_sub(1) else {
            return false;
        };
        match self.toks[p].text(self.src) {
            ";" | "{" | "}" | "else" => true,
            ")" => ctokens::matching_open(self.src, self.toks, p)
                .and_then(|o| o.checked_sub(1))
                .is_some_and(|k| matches!(self.toks[k].text(self.src), "if" | "while" | "for")),
            _ => false,
        }
    }

    fn mutant(&self, op: &str, start: usize, end: usize, replacement: String) -> Mutant {
        let line = ctokens::line_of(self.src, start);
        let col = start - self.src[..start].rfind('\n').map_or(0, |p| p + 1) + 1;
        let original = self.src[start..end].to_string();
        let short = |s: &str| {
            let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
            if s.chars().count() > 24 {
                format!("{}…", s.chars().take(24).collect::<String>())
            } else {
                s
            }
        };
        Mutant {
            id: format!(
                "{}:{line}:{col}:{op}:{}->{}",
                self.file,
                short(&original),
                short(&replacement)
            ),
            file: self.file.to_string(),
            function: self.function.to_string(),
            line,
            operator: op.to_string(),
            start,
            end,
            original,
            replacement,
        }
    }
}

/// The `const` replacement of an integer literal: `0` → `1`, `1` → `0`, `n` → `n+1`
/// (decimal literals only, suffixes kept).
fn bumped(text: &str) -> Option<String> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    let suffix = &text[digits.len()..];
    if digits.is_empty()
        || (digits.len() > 1 && digits.starts_with('0'))
        || !suffix.chars().all(|c| matches!(c, 'u' | 'U' | 'l' | 'L'))
    {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let m = match n {
        1 => 0,
        _ => n.checked_add(1)?,
    };
    Some(format!("{m}{suffix}"))
}

/// Whether `name` matches the glob `pattern` (`*` any run of characters, `?` one).
pub fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|k| go(rest, &n[k..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// The run's sample of `all` (every candidate, in a fixed order): shuffled by `seed`, the
/// first `size` (all of them when `size` is 0), then shard `k` of `n` (every `n`th from the
/// `k`th, 1-based).
pub fn sample(mut all: Vec<Mutant>, seed: u64, size: usize, shard: (usize, usize)) -> Vec<Mutant> {
    let mut rng = Rng(seed);
    for i in (1..all.len()).rev() {
        let j = rng.below(i + 1);
        all.swap(i, j);
    }
    if size > 0 {
        all.truncate(size);
    }
    let (k, n) = shard;
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| i % n == k - 1)
        .map(|(_, m)| m)
        .collect()
}

/// `K/N` with `1 <= K <= N` as `(K, N)`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let parsed = s
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!("--shard wants K/N with 1 <= K <= N, got {s}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "int f(int a, int *p)\n{\n\tif (a < 10 && p)\n\t\tfree(p);\n\treturn -a + (int)&a[0] - 1;\n}\n";

    fn ops(ms: &[Mutant]) -> Vec<String> {
        ms.iter()
            .map(|m| format!("{} {}->{}", m.operator, m.original, m.replacement))
            .collect()
    }

    #[test]
    fn operators_find_their_edits_and_leave_unary_ones() {
        let ms = mutants_of("x.c", SRC, &|_| true);
        assert_eq!(
            ops(&ms),
            [
                "cond a < 10 && p->!(a < 10 && p)",
                "cmp <-><=",
                "const 10->11",
                "logic &&->||",
                "call free(p);->;",
                "arith +->-",
                "const 0->1",
                "arith -->+",
                "const 1->0",
            ]
        );
        let m = &ms[1];
        assert_eq!(m.id, "x.c:3:8:cmp:<-><=");
        assert_eq!(m.function, "f");
        let mutated = m.apply(SRC).unwrap();
        assert!(mutated.contains("if (a <= 10 && p)"));
        assert_eq!(
            m.diff(SRC),
            "--- a/x.c\n+++ b/x.c\n@@ line 3 @@\n-\tif (a < 10 && p)\n+\tif (a <= 10 && p)\n"
        );
        assert!(ms[0].apply("int g;").is_err());
    }

    #[test]
    fn functions_filter_and_globs() {
        assert!(mutants_of("x.c", SRC, &|n| n == "g").is_empty());
        assert!(glob("*transaction*", "ref_transaction_commit"));
        assert!(glob("reftable/*.c", "reftable/stack.c"));
        assert!(!glob("reftable/*.c", "reftable/stack.h"));
        assert!(glob("f?o", "foo") && !glob("f?o", "fo"));
    }

    #[test]
    fn the_sample_is_deterministic_and_shards_partition_it() {
        let all = mutants_of("x.c", SRC, &|_| true);
        let s1 = sample(all.clone(), 7, 6, (1, 1));
        assert_eq!(s1, sample(all.clone(), 7, 6, (1, 1)));
        assert_eq!(s1.len(), 6);
        let mut halves = sample(all.clone(), 7, 6, (1, 2));
        halves.extend(sample(all.clone(), 7, 6, (2, 2)));
        let mut a: Vec<String> = s1.iter().map(|m| m.id.clone()).collect();
        let mut b: Vec<String> = halves.iter().map(|m| m.id.clone()).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert_eq!(sample(all.clone(), 1, 0, (1, 1)).len(), all.len());
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        assert!(
            parse_shard("0/3").is_err() && parse_shard("4/3").is_err() && parse_shard("x").is_err()
        );
    }

    #[test]
    fn literals_are_bumped_only_when_decimal() {
        assert_eq!(bumped("0").as_deref(), Some("1"));
        assert_eq!(bumped("1").as_deref(), Some("0"));
        assert_eq!(bumped("41U").as_deref(), Some("42U"));
        assert_eq!(bumped("0x10"), None);
        assert_eq!(bumped("017"), None);
        assert_eq!(bumped("1.5"), None);
    }
}
