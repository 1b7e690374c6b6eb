//! git versions as `git version` prints them, and ranges of them (`>= 2.50.0, < 2.55.0`).
//!
//! A version is its leading dot-separated numbers: `2.47.3` is `[2, 47, 3]`, a build from a
//! checkout between releases such as `2.55.0.618.g1a3e64c6c4` is `[2, 55, 0, 618]` (618
//! commits after v2.55.0), and `2.55.GIT` (a build from a tarball of master) is `[2, 55]`.
//! Missing components count as 0, so `2.55` = `2.55.0` and `2.55.0.618` > `2.55.0`.

use std::cmp::Ordering;
use std::fmt;

/// A parsed git version. Versions compare by their numbers only (`2.55.GIT` = `2.55.0`).
#[derive(Clone, Debug)]
pub struct GitVersion {
    parts: Vec<u32>,
    text: String,
}

impl GitVersion {
    /// Parse `git version`'s output or the bare version (`2.47.3`, `git version 2.47.3`,
    /// `2.45.2.windows.1`, `2.55.0.618.g1a3e64c6c4`, `2.55.0-rc1`). `None` without a number.
    pub fn parse(s: &str) -> Option<GitVersion> {
        let text = s
            .trim()
            .trim_start_matches("git version ")
            .trim()
            .to_string();
        let mut parts = Vec::new();
        for piece in text.split(['.', '-']) {
            // `rc1` ends the numbers: 2.55.0-rc1 is before 2.55.0, but a gate only cares
            // about releases and their descendants, so it reads as 2.55.0.
            match piece.parse::<u32>() {
                Ok(n) => parts.push(n),
                Err(_) => break,
            }
        }
        if parts.is_empty() {
            return None;
        }
        Some(GitVersion { parts, text })
    }

    /// The version as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Major and minor (`(2, 47)`).
    pub fn major_minor(&self) -> (u32, u32) {
        (self.part(0), self.part(1))
    }

    fn part(&self, i: usize) -> u32 {
        self.parts.get(i).copied().unwrap_or(0)
    }
}

impl PartialEq for GitVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for GitVersion {}

impl Ord for GitVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        (0..n)
            .map(|i| self.part(i).cmp(&other.part(i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for GitVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for GitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One bound of a range.
#[derive(Clone, Debug)]
enum Bound {
    AtLeast(GitVersion),
    Below(GitVersion),
    AtMost(GitVersion),
    Above(GitVersion),
    Exactly(GitVersion),
}

/// A set of versions: bounds joined by commas, all of which must hold (`>= 2.50.0, < 2.55.0`);
/// `*` (or an empty string) is every version.
#[derive(Clone, Debug)]
pub struct VersionRange {
    bounds: Vec<Bound>,
    text: String,
}

impl VersionRange {
    /// Parse a range; the error says which bound is malformed.
    pub fn parse(s: &str) -> Result<VersionRange, String> {
        let text = s.trim().to_string();
        let mut bounds = Vec::new();
        if text.is_empty() || text == "*" {
            return Ok(VersionRange { bounds, text });
        }
        for raw in text.split(',') {
            let b = raw.trim();
            let (op, rest) = [">=", "<=", ">", "<", "="]
                .iter()
                .find_map(|op| b.strip_prefix(op).map(|r| (*op, r)))
                .ok_or_else(|| format!("version bound {b:?} wants >=, >, <=, < or ="))?;
            let v = GitVersion::parse(rest)
                .ok_or_else(|| format!("version bound {b:?}: no version after {op}"))?;
            bounds.push(match op {
                ">=" => Bound::AtLeast(v),
                ">" => Bound::Above(v),
                "<=" => Bound::AtMost(v),
                "<" => Bound::Below(v),
                _ => Bound::Exactly(v),
            });
        }
        Ok(VersionRange { bounds, text })
    }

    /// Whether `v` is in the range.
    pub fn contains(&self, v: &GitVersion) -> bool {
        self.bounds.iter().all(|b| match b {
            Bound::AtLeast(x) => v >= x,
            Bound::Above(x) => v > x,
            Bound::AtMost(x) => v <= x,
            Bound::Below(x) => v < x,
            Bound::Exactly(x) => v == x,
        })
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.text.is_empty() {
            "*"
        } else {
            &self.text
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> GitVersion {
        GitVersion::parse(s).unwrap()
    }

    #[test]
    fn parses_what_git_prints() {
        assert_eq!(v("git version 2.47.3\n").as_str(), "2.47.3");
        assert_eq!(v("2.47.3").major_minor(), (2, 47));
        assert!(v("2.55.0.618.g1a3e64c6c4") > v("2.55.0"));
        assert!(v("2.55.0.618.g1a3e64c6c4") < v("2.55.1"));
        assert_eq!(v("2.55.GIT"), v("2.55.0"));
        assert_eq!(v("2.45.2.windows.1"), v("2.45.2"));
        assert!(v("2.9.0") < v("2.10.0"));
        assert!(GitVersion::parse("git version").is_none());
    }

    #[test]
    fn ranges() {
        let r = VersionRange::parse(">= 2.50.0, < 2.55").unwrap();
        assert!(!r.contains(&v("2.47.3")));
        assert!(r.contains(&v("2.50.0")));
        assert!(r.contains(&v("2.54.9")));
        assert!(!r.contains(&v("2.55.0")));
        assert!(!r.contains(&v("2.55.0.618.g1a3e64c6c4")));
        assert!(VersionRange::parse("*").unwrap().contains(&v("2.45.0")));
        assert!(VersionRange::parse("> 2.55.0")
            .unwrap()
            .contains(&v("2.55.0.618.gabc")));
        assert!(VersionRange::parse("= 2.47.3")
            .unwrap()
            .contains(&v("2.47.3")));
        assert!(VersionRange::parse("~2.5").is_err());
        assert!(VersionRange::parse(">= x").is_err());
    }
}
