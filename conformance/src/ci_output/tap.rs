//! TAP, the Test Anything Protocol git's own test suite speaks: a plan `1..N`, then one
//! `ok N - name` or `not ok N - name` line per test. A known git defect is `not ok … # TODO`
//! (an expected failure, which `prove` does not count against the run), a test not run is
//! `ok … # SKIP`. The text of a failure follows its line as `#` comments, the way git's
//! `test-lib.sh` prints a failed test's commands.

use crate::ci_output::result::{TestResult, Verdict};

/// The TAP document of `tests`, with `title` as a comment after the plan.
pub fn render(title: &str, tests: &[TestResult]) -> String {
    let mut s = if tests.is_empty() {
        "1..0 # SKIP no tests ran\n".to_string()
    } else {
        format!("1..{}\n", tests.len())
    };
    comment(&mut s, title);
    for (i, t) in tests.iter().enumerate() {
        let n = i + 1;
        let name = description(&format!("{}: {}", t.suite, t.name));
        match &t.verdict {
            Verdict::Pass => s.push_str(&format!("ok {n} - {name}\n")),
            Verdict::Fail => {
                s.push_str(&format!("not ok {n} - {name}\n"));
                comment(&mut s, &t.text);
            }
            Verdict::Known(why) => {
                s.push_str(&format!("not ok {n} - {name} # TODO {}\n", one_line(why)));
                comment(&mut s, &t.text);
            }
            Verdict::Skip(why) => {
                s.push_str(&format!("ok {n} - {name} # SKIP {}\n", one_line(why)));
            }
        }
    }
    s
}

/// A test's description: one line, with `#` (which would start a directive) and `\`
/// escaped as TAP says.
fn description(s: &str) -> String {
    one_line(s).replace('\\', "\\\\").replace('#', "\\#")
}

/// `s` on one line: line breaks become spaces.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Each line of `text` as a `#` comment.
fn comment(out: &mut String, text: &str) {
    for line in text.lines() {
        let line = line.replace('\r', "");
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            out.push_str(&format!("# {line}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_verdict_has_its_line_and_failures_their_comments() {
        let tests = vec![
            TestResult::new("s", "a", Verdict::Pass, "quiet".into()),
            TestResult::new("s", "b #1", Verdict::Fail, "why\n\nrerun.sh".into()),
            TestResult::new(
                "s",
                "c",
                Verdict::Known("known git defect x".into()),
                "d".into(),
            ),
            TestResult::new("s", "d", Verdict::Skip("no time".into()), String::new()),
        ];
        let t = render("conformance run", &tests);
        assert_eq!(
            t,
            "1..4\n# conformance run\nok 1 - s: a\nnot ok 2 - s: b \\#1\n# why\n#\n# rerun.sh\nnot ok 3 - s: c # TODO known git defect x\n# d\nok 4 - s: d # SKIP no time\n"
        );
        assert_eq!(render("x", &[]), "1..0 # SKIP no tests ran\n# x\n");
    }
}
