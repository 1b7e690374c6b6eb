//! JUnit XML, as GitLab's `artifacts:reports:junit` and GitHub's test-report actions read
//! it: `<testsuites>` holding one `<testsuite>` per group, one `<testcase>` per test; a
//! failure carries a `<failure>` with the divergence as its text, a known git defect or a
//! test not run a `<skipped>`. Written by hand: the format is small, and every text is
//! escaped here, control characters XML 1.0 cannot hold included.

use crate::ci_output::result::{counts, TestResult, Verdict};

/// The JUnit XML document of `tests`, named `title`; tests are grouped by suite in the order
/// their suites first appear.
pub fn render(title: &str, tests: &[TestResult]) -> String {
    let mut suites: Vec<(&str, Vec<&TestResult>)> = Vec::new();
    for t in tests {
        match suites.iter_mut().find(|(s, _)| *s == t.suite) {
            Some((_, v)) => v.push(t),
            None => suites.push((&t.suite, vec![t])),
        }
    }
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    // The common JUnit schema (Jenkins' junit-10.xsd, which GitLab follows) has no
    // `skipped` on `<testsuites>`: only the suites count them.
    let (n, failures, _, _) = counts(tests);
    let time: f64 = tests.iter().map(|t| t.seconds).sum();
    s.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" time=\"{time:.3}\">\n",
        escape(title)
    ));
    for (name, group) in suites {
        let owned: Vec<TestResult> = group.iter().map(|t| (*t).clone()).collect();
        s.push_str(&format!(
            "  <testsuite name=\"{}\"{}>\n",
            escape(name),
            totals(&owned)
        ));
        for t in group {
            testcase(&mut s, t);
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

/// The count and time attributes of a group.
fn totals(tests: &[TestResult]) -> String {
    let (n, failures, known, skipped) = counts(tests);
    let time: f64 = tests.iter().map(|t| t.seconds).sum();
    format!(
        " tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{}\" time=\"{time:.3}\"",
        known + skipped
    )
}

/// One `<testcase>`.
fn testcase(s: &mut String, t: &TestResult) {
    let open = format!(
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
        escape(&t.name),
        escape(&t.suite),
        t.seconds
    );
    let first = |text: &str| text.lines().next().unwrap_or("").to_string();
    match &t.verdict {
        Verdict::Pass => s.push_str(&format!("{open}/>\n")),
        Verdict::Fail => s.push_str(&format!(
            "{open}>\n      <failure message=\"{}\" type=\"divergence\">{}</failure>\n    </testcase>\n",
            escape(&first(&t.text)),
            escape_text(&t.text)
        )),
        Verdict::Known(why) => s.push_str(&format!(
            "{open}>\n      <skipped message=\"{}\"/>\n      <system-out>{}</system-out>\n    </testcase>\n",
            escape(why),
            escape_text(&t.text)
        )),
        Verdict::Skip(why) => s.push_str(&format!(
            "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>\n",
            escape(why)
        )),
    }
}

/// `s` as an XML attribute value: markup characters as entities, line breaks and tabs as
/// character references (an attribute's own would become spaces), and characters XML 1.0
/// cannot hold at all (other control characters, U+FFFE, U+FFFF) written out as `\u{..}`.
pub fn escape(s: &str) -> String {
    escape_as(s, true)
}

/// `s` as XML element text: as [`escape`], but line breaks and tabs kept as they are
/// (carriage returns still as references, which a parser would otherwise drop).
pub fn escape_text(s: &str) -> String {
    escape_as(s, false)
}

fn escape_as(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' if !attribute => out.push(c),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_line_breaks_and_forbidden_characters_are_escaped() {
        assert_eq!(
            escape("a<b>&\"c'\n\t\u{1b}[0m\u{fffe}é"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;&#9;\\u{1b}[0m\\u{fffe}é"
        );
        assert_eq!(escape_text("a\n\tb\r<"), "a\n\tb&#13;&lt;");
    }

    #[test]
    fn suites_group_tests_and_count_them() {
        let tests = vec![
            TestResult::new("g1", "a", Verdict::Pass, String::new()).timed(0.5),
            TestResult::new("g2", "b", Verdict::Fail, "diverged <here>\nrerun.sh".into()),
            TestResult::new("g1", "c", Verdict::Known("known".into()), "x".into()),
        ];
        let x = render("run", &tests);
        assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"run\" tests=\"3\" failures=\"1\" errors=\"0\" time=\"0.500\">\n  <testsuite name=\"g1\" tests=\"2\" failures=\"0\""), "{x}");
        assert!(x.contains("<failure message=\"diverged &lt;here&gt;\" type=\"divergence\">diverged &lt;here&gt;\nrerun.sh</failure>"), "{x}");
        assert_eq!(x.matches("<testsuite ").count(), 2);
        assert!(x.ends_with("</testsuites>\n"));
    }
}
