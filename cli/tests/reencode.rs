//! `reencode` on every table git wrote: byte-identical with the options git used.

mod common;

use common::*;

#[test]
fn reencode_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let mut n = 0;
    for case in cases() {
        for t in &case.tables {
            let input = case.stack().join(t);
            let out = tmp.path().join(format!("{}-{t}", case.name));
            let mut args = vec![
                "reencode".to_string(),
                s(&input).to_string(),
                "-o".into(),
                s(&out).to_string(),
                "--restart-interval".into(),
                case.restart_interval.to_string(),
            ];
            if !case.index_objects {
                args.push("--no-index-objects".into());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let said = ok(&args);
            assert!(
                said.contains("byte-identical"),
                "{}: {t}: {said}",
                case.name
            );
            assert!(
                std::fs::read(&out).unwrap() == std::fs::read(&input).unwrap(),
                "{}: {t}: re-encoded table differs",
                case.name
            );
            n += 1;
        }
    }
    assert!(n >= 50, "only {n} tables re-encoded");
    // Other options give another (valid) table, and say so.
    let case = cases().into_iter().find(|c| c.name == "many-refs").unwrap();
    let out = tmp.path().join("other.ref");
    let input = case.stack().join(&case.tables[0]);
    let said = ok(&[
        "reencode",
        s(&input),
        "-o",
        s(&out),
        "--restart-interval",
        "3",
    ]);
    assert!(said.contains("differs"), "{said}");
    ok(&["verify", s(&out)]);
    assert_eq!(ok(&["refs", s(&out)]), ok(&["refs", s(&input)]));
}
