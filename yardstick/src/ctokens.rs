//! C source as tokens, enough to mutate it: identifiers, numbers, string and character
//! literals and punctuators with their byte offsets, comments and preprocessor lines left
//! out; and the functions of a file (name, body span), found from the braces.
//!
//! This is not a C parser. It knows what a mutation operator needs to know: where a token
//! starts and ends, what comes before it, and which function body it is in. Code the
//! preprocessor removes (`#if 0`) is still tokenized; the mutation run tells such mutants
//! apart by their unchanged object code.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A name or keyword.
    Ident,
    /// A numeric literal (any base, with suffixes).
    Number,
    /// A string or character literal.
    Literal,
    /// An operator or separator.
    Punct,
}

/// One token: its kind and where it is (`start..end` bytes of the file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Token {
    /// The token's text in `src`.
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }
}

/// C's punctuators, longest first so that the first match is the longest.
const PUNCTS: [&str; 48] = [
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", "[", "]", "(", ")", "{", "}", ".", "&", "*",
    "+", "-", "~", "!", "/", "%", "<", ">", "^", "|", "?", ":", ";", "=", ",", "#",
];

/// The tokens of `src`, comments, whitespace and preprocessor lines (with their
/// continuations) left out.
pub fn tokenize(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if line_start && c == b'#' {
            i = skip_directive(b, i);
        } else if b[i..].starts_with(b"//") {
            i = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p);
        } else if b[i..].starts_with(b"/*") {
            i = find(b, i + 2, b"*/").map_or(b.len(), |p| p + 2);
        } else {
            line_start = false;
            let (kind, end) = lex_one(b, i);
            out.push(Token {
                kind,
                start: i,
                end,
            });
            i = end;
        }
    }
    out
}

/// One token starting at `i` (not whitespace or a comment): its kind and end.
fn lex_one(b: &[u8], i: usize) -> (Kind, usize) {
    let c = b[i];
    if c.is_ascii_alphabetic() || c == b'_' {
        let n = b[i..]
            .iter()
            .take_while(|x| x.is_ascii_alphanumeric() || **x == b'_')
            .count();
        return (Kind::Ident, i + n);
    }
    if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
        let n = b[i..]
            .iter()
            .take_while(|x| x.is_ascii_alphanumeric() || **x == b'.' || **x == b'_')
            .count();
        return (Kind::Number, i + n);
    }
    if c == b'"' || c == b'\'' {
        let mut j = i + 1;
        while j < b.len() && b[j] != c && b[j] != b'\n' {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        return (Kind::Literal, (j + 1).min(b.len()));
    }
    let p = PUNCTS
        .iter()
        .find(|p| b[i..].starts_with(p.as_bytes()))
        .map_or(1, |p| p.len());
    (Kind::Punct, i + p)
}

/// The end of the preprocessor directive starting at `i` (its backslash continuations and
/// comments included).
fn skip_directive(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            i = find(b, i + 2, b"*/").map_or(b.len(), |p| p + 2);
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
            i += 2;
        } else if b[i] == b'\n' {
            return i;
        } else {
            i += 1;
        }
    }
    i
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// A function definition: its name and the token indexes of its body's braces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// Index of the body's `{`.
    pub open: usize,
    /// Index of the body's `}`.
    pub close: usize,
}

/// The function definitions of a file: a `{` at file level right after a `)` opens the
/// body of the function named by the identifier before the matching `(`.
pub fn functions(src: &str, toks: &[Token]) -> Vec<Function> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current: Option<(String, usize)> = None;
    for (i, t) in toks.iter().enumerate() {
        match t.text(src) {
            "{" => {
                if depth == 0 && i > 0 && toks[i - 1].text(src) == ")" {
                    current = function_name(src, toks, i - 1).map(|n| (n, i));
                }
                depth += 1;
            }
            "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some((name, open)) = current.take() {
                        out.push(Function {
                            name,
                            open,
                            close: i,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The identifier before the `(` that matches the `)` at `close`.
fn function_name(src: &str, toks: &[Token], close: usize) -> Option<String> {
    let open = matching_open(src, toks, close)?;
    let t = toks.get(open.checked_sub(1)?)?;
    (t.kind == Kind::Ident).then(|| t.text(src).to_string())
}

/// The index of the `(` matching the `)` at `close`.
pub fn matching_open(src: &str, toks: &[Token], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for j in (0..=close).rev() {
        match toks[j].text(src) {
            ")" => depth += 1,
            "(" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the `)` matching the `(` at `open`.
pub fn matching_close(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.text(src) {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The 1-based line of byte `offset`.
pub fn line_of(src: &str, offset: usize) -> usize {
    src.as_bytes()[..offset.min(src.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        tokenize(src).iter().map(|t| t.text(src)).collect()
    }

    #[test]
    fn comments_strings_and_directives_are_left_out_or_kept_whole() {
        let src = "#include <a.h>\n#define X(a) \\\n  a < 1\nint f(int a) { // a < b\n  return a <= 'x' /* < */ + \"<=\" >> 2; }\n";
        assert_eq!(
            texts(src),
            [
                "int", "f", "(", "int", "a", ")", "{", "return", "a", "<=", "'x'", "+", "\"<=\"",
                ">>", "2", ";", "}"
            ]
        );
    }

    #[test]
    fn functions_are_found_by_their_braces() {
        let src = "static int t[] = { 1, 2 };\nstruct s { int a; };\nint f(int (*g)(void)) { if (x) { y(); } return 0; }\nvoid h(void)\n{\n}\n";
        let toks = tokenize(src);
        let fs = functions(src, &toks);
        let names: Vec<&str> = fs.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["f", "h"]);
        assert_eq!(toks[fs[0].open].text(src), "{");
        assert_eq!(toks[fs[0].close].text(src), "}");
        assert_eq!(line_of(src, toks[fs[1].open].start), 5);
    }
}
