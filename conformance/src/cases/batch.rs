//! `update-ref --stdin --batch-updates` (git 2.50+): what git reports of a batch — a
//! `rejected <ref> <new> <old> <reason>` line on standard output per rejected update, after
//! its message on standard error — and the comparison of the updates git, our library and
//! the model reject, and why.

use crate::cases::verdict::Mismatch;
use crate::err_class::ErrClass;
use crate::finding::divergence::Check;
use crate::git::messages;
use crate::model::Faults;

/// One rejected update: its ref and why (`None`: a reason or message git's wording table
/// does not know, never taken for a match).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The ref.
    pub refname: String,
    /// The reason git gave (empty for ours).
    pub reason: String,
    /// The class of the reason.
    pub class: Option<ErrClass>,
    /// Where git says no message (before 2.54), the classes its reason may come with: one
    /// of them must be one of the model's faults for the ref.
    pub classes: &'static [ErrClass],
    /// What was said.
    pub detail: String,
}

/// The reasons a `rejected` line gives (refs.c `ref_transaction_error_msg`) and the
/// classes of the messages each may come with.
const REASONS: [(&str, &[ErrClass]); 7] = [
    (
        "refname conflict",
        &[ErrClass::DfConflict, ErrClass::Duplicate],
    ),
    ("reference already exists", &[ErrClass::OldValue]),
    ("reference does not exist", &[ErrClass::OldValue]),
    ("incorrect old value provided", &[ErrClass::OldValue]),
    (
        "invalid new value provided",
        &[ErrClass::MissingObject, ErrClass::NonCommit],
    ),
    (
        "expected symref but found regular ref",
        &[ErrClass::OldValue],
    ),
    (
        "reference conflict due to case-insensitive filesystem",
        &[ErrClass::DfConflict],
    ),
];

/// git's rejections from a batch's `stdout` and `stderr`. With `messages` (git 2.54+) the
/// n-th `rejected` line goes with the n-th message, whose class (from the wording table)
/// must be one its reason may come with; without (2.50 to 2.53 say only the reason) the
/// reason alone stands for the classes it may come with.
pub fn git_rejections(stdout: &str, stderr: &str, messages: bool) -> Vec<Rejection> {
    let mut said = stderr.lines().filter(|l| l.starts_with("error: "));
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("rejected "))
        .map(|rest| {
            let mut fields = rest.splitn(4, ' ');
            let refname = fields.next().unwrap_or("").to_string();
            let reason = fields.nth(2).unwrap_or("").trim();
            let allowed = REASONS
                .iter()
                .find(|(r, _)| *r == reason)
                .map_or(&[][..], |(_, classes)| *classes);
            let message = if messages {
                said.next().unwrap_or("")
            } else {
                ""
            };
            let class = messages::classify(message).filter(|c| allowed.contains(c));
            Rejection {
                refname,
                reason: reason.to_string(),
                class,
                classes: if messages { &[] } else { allowed },
                detail: format!("{reason}: {message}"),
            }
        })
        .collect()
}

/// The reason git gives when an update's old id is all that is wrong with it, for a plain
/// update (an old id, the ref absent or holding an id, no symref in the way), from the ref's
/// value before the batch: a ref that must not exist and does, one that must and does not,
/// or another id (hex ids; all zeros: the ref must not exist).
pub fn old_value_reason(old: &str, current: Option<&str>) -> &'static str {
    let null = |h: &str| h.bytes().all(|b| b == b'0');
    match current {
        None => "reference does not exist",
        Some(_) if null(old) => "reference already exists",
        Some(_) => "incorrect old value provided",
    }
}

/// Each of git's rejections that `reasons` (ref, the reason [`old_value_reason`] gives)
/// names must come with that reason: [`Check::ErrorClass`] when one does not.
pub fn compare_reasons(git: &[Rejection], reasons: &[(String, &'static str)]) -> Option<Mismatch> {
    let (r, want) = git.iter().find_map(|r| {
        let (_, want) = reasons.iter().find(|(n, _)| *n == r.refname)?;
        (r.reason != *want).then_some((r, want))
    })?;
    Some(Mismatch {
        check: Check::ErrorClass,
        class: "rejection reason mismatch",
        detail: format!(
            "--batch-updates: git rejected {} for {:?} ({}); its old id alone is wrong: {want:?}",
            r.refname, r.reason, r.detail
        ),
    })
}

/// The rejections of git, ours and the model (refs and faults) compared: the same refs
/// rejected by all three (git against ours: [`Check::Verdict`]; git against the model:
/// [`Check::Model`]), and each reason git and we give one of the model's faults for the ref
/// ([`Check::ErrorClass`]).
pub fn compare_rejections(
    git: &[Rejection],
    ours: &[Rejection],
    model: &[(String, Faults)],
) -> Option<Mismatch> {
    let names = |r: &mut dyn Iterator<Item = &String>| {
        let mut v: Vec<String> = r.cloned().collect();
        v.sort();
        v
    };
    let g = names(&mut git.iter().map(|r| &r.refname));
    let o = names(&mut ours.iter().map(|r| &r.refname));
    let m = names(&mut model.iter().map(|(n, _)| n));
    // What each side said of the refs it alone rejected, after the names.
    let said = |r: &[Rejection], by: &str, others: &Vec<String>| -> String {
        r.iter()
            .filter(|x| !others.contains(&x.refname))
            .map(|x| format!("; {by} said of {}: {}", x.refname, x.detail))
            .collect()
    };
    let differ = |check, what: &str, other: &Vec<String>| {
        Some(Mismatch {
            check,
            class: "rejection mismatch",
            detail: format!("--batch-updates: git rejected {g:?}, {what} {other:?}"),
        })
    };
    // git naming one update twice, where the names are otherwise ours, is a difference of
    // its own (known defect batch-updates-rejection-reported-twice).
    let mut once = g.clone();
    once.dedup();
    if once != g && once == o {
        return Some(Mismatch {
            check: Check::Verdict,
            class: "rejection mismatch",
            detail: format!(
                "--batch-updates: git rejected one update more than once {g:?}, ours {o:?}"
            ),
        });
    }
    if g != o {
        let mut m = differ(Check::Verdict, "ours", &o)?;
        m.detail += &said(git, "git", &o);
        m.detail += &said(ours, "ours", &g);
        return Some(m);
    }
    if g != m {
        return differ(Check::Model, "the model", &m);
    }
    for (who, list) in [("git", git), ("ours", ours)] {
        for r in list {
            let faults = model.iter().find(|(n, _)| *n == r.refname).map(|x| x.1);
            let named = |c: &ErrClass| {
                c.fault()
                    .is_some_and(|f| faults.is_some_and(|s| s.contains(f)))
            };
            let applies = match r.class {
                Some(c) => named(&c),
                None => r.classes.iter().any(named),
            };
            if !applies {
                return Some(Mismatch {
                    check: Check::ErrorClass,
                    class: "rejection reason mismatch",
                    detail: format!(
                        "--batch-updates: {who} rejected {} with {:?} ({}); its faults are {}",
                        r.refname,
                        r.class,
                        r.detail,
                        faults.unwrap_or_default()
                    ),
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Fault;

    #[test]
    fn old_value_reasons_follow_the_ref_and_the_expectation() {
        let (null, a, b) = ("0000", "aaaa", "bbbb");
        assert_eq!(old_value_reason(a, None), "reference does not exist");
        assert_eq!(old_value_reason(null, Some(b)), "reference already exists");
        assert_eq!(old_value_reason(a, Some(b)), "incorrect old value provided");
    }

    const OUT: &str = "rejected refs/heads/t 4b82 (null) invalid new value provided\n\
                       rejected refs/heads/main 4443 4443 incorrect old value provided\n\
                       rejected refs/heads/x/y 5044 0000 refname conflict\n";
    const ERR: &str = "error: trying to write non-commit object 4b82 to branch 'refs/heads/t'\n\
                       error: cannot lock ref 'refs/heads/main': is at 5044 but expected 4443\n\
                       error: 'refs/heads/x' exists; cannot create 'refs/heads/x/y'\n";

    fn model() -> Vec<(String, Faults)> {
        [
            ("refs/heads/t", Fault::NonCommit),
            ("refs/heads/main", Fault::OldValue),
            ("refs/heads/x/y", Fault::DfConflict),
        ]
        .iter()
        .map(|(n, f)| (n.to_string(), [*f].into_iter().collect()))
        .collect()
    }

    #[test]
    fn rejections_are_read_with_their_messages() {
        let g = git_rejections(OUT, ERR, true);
        let classes: Vec<_> = g.iter().map(|r| (r.refname.as_str(), r.class)).collect();
        assert_eq!(
            classes,
            [
                ("refs/heads/t", Some(ErrClass::NonCommit)),
                ("refs/heads/main", Some(ErrClass::OldValue)),
                ("refs/heads/x/y", Some(ErrClass::DfConflict)),
            ]
        );
        assert_eq!(compare_rejections(&g, &g, &model()), None);
        // A message whose class its reason cannot come with is unclassified.
        let swapped = ERR.replace("non-commit object 4b82 to branch", "ref with nonexistent");
        let g = git_rejections(OUT, &swapped, true);
        assert_eq!(g[0].class, None);
        assert!(compare_rejections(&g, &g, &model()).is_some());
    }

    /// Before 2.54 git says only the reason: it must be one the model's fault can give
    /// ("invalid new value provided" for a non-commit or a missing object), and a reason
    /// for another fault fails.
    #[test]
    fn rejections_without_messages_go_by_their_reason() {
        let g = git_rejections(OUT, "", false);
        assert!(g.iter().all(|r| r.class.is_none()));
        assert_eq!(compare_rejections(&g, &g, &model()), None);
        let mut m = model();
        m[0].1 = [Fault::OldValue].into_iter().collect();
        let f = compare_rejections(&g, &g, &m).expect("diverges");
        assert_eq!(f.check, Check::ErrorClass);
        let exact = |reason: &'static str| vec![("refs/heads/main".to_string(), reason)];
        assert_eq!(
            compare_reasons(&g, &exact("incorrect old value provided")),
            None
        );
        let f = compare_reasons(&g, &exact("reference already exists")).expect("diverges");
        assert_eq!(f.check, Check::ErrorClass);
        let unknown = OUT.replace("refname conflict", "something new");
        let g = git_rejections(&unknown, "", false);
        assert!(compare_rejections(&g, &g, &model()).is_some());
    }

    /// A planted wrong model: one that accepts what git and we reject, or that names
    /// another fault, fails the comparison.
    #[test]
    fn a_wrong_model_fails() {
        let g = git_rejections(OUT, ERR, true);
        let mut m = model();
        m.remove(1);
        let f = compare_rejections(&g, &g, &m).expect("diverges");
        assert_eq!(f.check, Check::Model);
        assert!(f.detail.contains("the model"), "{}", f.detail);
        let mut m = model();
        m[2].1 = [Fault::OldValue].into_iter().collect();
        let f = compare_rejections(&g, &g, &m).expect("diverges");
        assert_eq!(f.check, Check::ErrorClass);
        assert!(f.detail.contains("refs/heads/x/y"), "{}", f.detail);
        // Ours rejecting one update less than git.
        let f = compare_rejections(&g, &g[..2], &model()).expect("diverges");
        assert_eq!(f.check, Check::Verdict);
        assert!(!f.detail.contains("more than once"), "{}", f.detail);
    }

    /// git naming one rejected update twice is told apart from other differences, which a
    /// repeat must not hide.
    #[test]
    fn a_rejection_git_repeats_is_named_as_such() {
        let g = git_rejections(OUT, ERR, true);
        let mut twice = g.clone();
        twice.push(g[2].clone());
        let f = compare_rejections(&twice, &g, &model()).expect("diverges");
        assert_eq!(f.check, Check::Verdict);
        assert!(f.detail.contains("more than once"), "{}", f.detail);
        let f = compare_rejections(&twice, &g[..2], &model()).expect("diverges");
        assert!(!f.detail.contains("more than once"), "{}", f.detail);
    }
}
