//! The conformance matrix as a picture: a row per check, a column per role, each cell
//! coloured by its outcome (pass, fail, not tried, not run) with its counts.

use crate::impls::check::{ImplCheck, Role};
use crate::impls::report::ImplReport;

const CELL_W: usize = 150;
const CELL_H: usize = 26;
const LABEL_W: usize = 130;

/// The SVG document.
pub fn matrix_svg(r: &ImplReport) -> String {
    let roles: Vec<Role> = r.roles.clone();
    let width = LABEL_W + CELL_W * roles.len() + 10;
    let height = CELL_H * (ImplCheck::ALL.len() + 2) + 10;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    let title = format!(
        "{} {} vs git {}",
        r.hello.implementation, r.hello.version, r.git
    );
    s += &format!(
        "<text x=\"5\" y=\"16\" font-weight=\"bold\">{}</text>\n",
        escape(&title)
    );
    for (i, role) in roles.iter().enumerate() {
        let x = LABEL_W + i * CELL_W + CELL_W / 2;
        s += &format!(
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            CELL_H + 14,
            role.name()
        );
    }
    for (j, check) in ImplCheck::ALL.iter().enumerate() {
        let y = CELL_H * (j + 2);
        s += &format!("<text x=\"5\" y=\"{}\">{}</text>\n", y + 17, check.name());
        for (i, role) in roles.iter().enumerate() {
            let row = r
                .matrix
                .iter()
                .find(|m| m.role == *role && m.check == *check);
            let (fill, text) = match row {
                Some(m) => (colour(m.outcome()), cell_text(m)),
                None => ("#ffffff", String::new()),
            };
            let x = LABEL_W + i * CELL_W;
            s += &format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#888\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                CELL_W - 2, CELL_H - 2, x + CELL_W / 2, y + 17, escape(&text)
            );
        }
    }
    s + "</svg>\n"
}

/// A cell's colour for its outcome.
fn colour(outcome: &str) -> &'static str {
    match outcome {
        "pass" => "#b7e1b0",
        "FAIL" => "#f4a6a6",
        "not tried" => "#dddddd",
        _ => "#ffffff",
    }
}

/// A cell's words: the outcome and its counts.
fn cell_text(m: &crate::impls::report::MatrixRow) -> String {
    match m.outcome() {
        "FAIL" => format!("FAIL {}/{}", m.cell.failed, m.cell.failed + m.cell.passed),
        "pass" => format!("pass {}", m.cell.passed),
        o => o.to_string(),
    }
}

/// Text made safe for XML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
