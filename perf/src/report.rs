//! The complexity report: JSON (machine-readable, also the CI baseline), Markdown (for
//! people), a hand-written log-log SVG, and the comparison against a committed baseline.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::fit::exponent_over_sizes;
use crate::scenarios::{Config, Point, Scenario};

/// A whole report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Report {
    /// What produced it (command line).
    pub command: String,
    /// `git --version` of the git measured, if any.
    pub git_version: Option<String>,
    /// Remarks printed with the report (machine, noise).
    pub notes: Vec<String>,
    /// One series per scenario and implementation.
    pub results: Vec<Series>,
}

/// One scenario on one implementation over all sizes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Series {
    /// Scenario name ([`Scenario::name`]; `…/no-auto-compaction` for that variant).
    pub scenario: String,
    /// `ours`, `ours-suppress-deletions` or `git`.
    pub implementation: String,
    /// Whether auto-compaction ran after each transaction.
    pub auto_compaction: bool,
    /// The sizes measured.
    pub sizes: Vec<usize>,
    /// Operations measured at each size.
    pub ops: Vec<u64>,
    /// Records decoded by the measured operations (`None` for git).
    pub records_decoded: Option<Vec<u64>>,
    /// Of those, records decoded by the operations' seeks alone.
    pub seek_records_decoded: Option<Vec<u64>>,
    /// Blocks read by the measured operations.
    pub blocks_read: Option<Vec<u64>>,
    /// Records written by compaction during the measured operations.
    pub entries_written: Option<Vec<u64>>,
    /// Wall time of the measured operations (whole `update-ref` process for git).
    pub seconds: Vec<f64>,
    /// Growth exponent: fitted on `records_decoded` where there are counters, else on
    /// `seconds`.
    pub exponent: Option<f64>,
    /// Growth exponent of `seconds` (informational: noisy on shared machines).
    pub exponent_seconds: Option<f64>,
    /// Growth exponent of the records decoded past the seeks.
    pub exponent_scan: Option<f64>,
    /// Every counter at each size, exactly: each [`reftable::table::Stats`] field of the measured
    /// operations, `seek.<field>` for their seeks alone, and `tables` (tables in the stack
    /// after the run). The CI baseline holds these exactly. Empty for git.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Vec<u64>>,
}

impl Series {
    /// A series of our implementation from measured points.
    pub fn from_points(scenario: Scenario, cfg: Config, points: &[Point]) -> Series {
        let sizes: Vec<usize> = points.iter().map(|p| p.n).collect();
        let records: Vec<u64> = points.iter().map(|p| p.stats.records_decoded).collect();
        let seek: Vec<u64> = points.iter().map(|p| p.seek.records_decoded).collect();
        let seconds: Vec<f64> = points.iter().map(|p| p.seconds).collect();
        let scan: Vec<f64> = records
            .iter()
            .zip(&seek)
            .map(|(r, s)| r.saturating_sub(*s) as f64)
            .collect();
        let f = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        let name = if scenario.is_p1401() && !cfg.auto_compaction {
            format!("{}/no-auto-compaction", scenario.name())
        } else {
            scenario.name().to_string()
        };
        let mut counters: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for p in points {
            for (field, v) in p.stats.counters() {
                counters.entry(field.to_string()).or_default().push(v);
            }
            for (field, v) in p.seek.counters() {
                counters.entry(format!("seek.{field}")).or_default().push(v);
            }
            counters
                .entry("tables".to_string())
                .or_default()
                .push(p.tables as u64);
        }
        Series {
            counters,
            scenario: name,
            implementation: cfg.implementation().to_string(),
            auto_compaction: cfg.auto_compaction,
            exponent: exponent_over_sizes(&sizes, &f(&records)),
            exponent_seconds: exponent_over_sizes(&sizes, &seconds),
            exponent_scan: if scenario == Scenario::AutoCompaction {
                None
            } else {
                exponent_over_sizes(&sizes, &scan)
            },
            ops: points.iter().map(|p| p.ops).collect(),
            records_decoded: Some(records),
            seek_records_decoded: Some(seek),
            blocks_read: Some(points.iter().map(|p| p.stats.blocks_read).collect()),
            entries_written: Some(points.iter().map(|p| p.entries_written).collect()),
            seconds,
            sizes,
        }
    }

    /// A git series (wall time only).
    pub fn git(scenario: &str, sizes: Vec<usize>, seconds: Vec<f64>) -> Series {
        let e = exponent_over_sizes(&sizes, &seconds);
        Series {
            scenario: scenario.to_string(),
            implementation: "git".to_string(),
            auto_compaction: true,
            ops: sizes.iter().map(|&n| n as u64).collect(),
            exponent: e,
            exponent_seconds: e,
            sizes,
            seconds,
            ..Series::default()
        }
    }

    fn per_op(&self, v: &Option<Vec<u64>>, i: usize) -> Option<f64> {
        let v = v.as_ref()?;
        Some(*v.get(i)? as f64 / (*self.ops.get(i)?).max(1) as f64)
    }

    fn seconds_at(&self, n: usize) -> Option<f64> {
        let i = self.sizes.iter().position(|&s| s == n)?;
        self.seconds.get(i).copied()
    }
}

impl Report {
    /// The series of `scenario` on `implementation`.
    pub fn find(&self, scenario: &str, implementation: &str) -> Option<&Series> {
        self.results
            .iter()
            .find(|s| s.scenario == scenario && s.implementation == implementation)
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes") + "\n"
    }

    /// Parse a report (or baseline) from JSON.
    pub fn from_json(s: &str) -> Result<Report, String> {
        serde_json::from_str(s).map_err(|e| format!("report JSON: {e}"))
    }

    /// The Markdown report.
    pub fn to_markdown(&self) -> String {
        let mut m = String::new();
        self.write_preamble(&mut m);
        self.write_summary(&mut m);
        self.write_exponents(&mut m);
        for sc in ["p1401-recreate", "p1401-asymmetric"] {
            self.write_p1401_seconds(&mut m, sc);
        }
        m
    }

    /// The title, the command, the git measured and the notes.
    fn write_preamble(&self, m: &mut String) {
        let _ = writeln!(m, "# Complexity report: tombstones, p1401, compaction\n");
        let _ = writeln!(m, "Generated by `{}`.", self.command);
        if let Some(v) = &self.git_version {
            let _ = writeln!(m, "git measured: `{v}`.");
        }
        let _ = writeln!(m);
        for n in &self.notes {
            let _ = writeln!(m, "- {n}");
        }
    }

    /// The summary: git against ours on each p1401 scenario, and how to read the numbers.
    fn write_summary(&self, m: &mut String) {
        let _ = writeln!(m, "\n## Summary\n");
        for sc in ["p1401-recreate", "p1401-asymmetric"] {
            let (Some(o), Some(g)) = (self.find(sc, "ours"), self.find(sc, "git")) else {
                continue;
            };
            write_comparison(m, sc, o, g);
        }
        let _ = writeln!(
            m,
            "\nReading the numbers (details in `perf/README.md`):\n\n\
             - Records decoded *past the seeks* are constant per operation for our \
             implementation in every scenario (`scan` exponent 1.00 on p1401, 0.00 on the \
             64-lookup batches): no operation scans tombstones past its bound. With \
             `suppress_deletions` (git 2.47's behaviour) they grow with n, as git's time does.\n\
             - Records decoded *by the seeks* grow logarithmically (one block per index \
             level, a binary search over restart points in each): p1401-recreate's exponent \
             slightly above 1 is that log factor. p1401-asymmetric's new names sort before \
             every old one, so its seeks stay at the same depth and it fits to 1.00.\n\
             - With `suppress_deletions` the same workloads are quadratic on counters and in \
             time, like git 2.47.3."
        );
    }

    /// The growth exponents section: what they mean, and a table row per series.
    fn write_exponents(&self, m: &mut String) {
        let _ = writeln!(m, "\n## Growth exponents\n");
        let _ = writeln!(
            m,
            "`exponent` is the least-squares slope of log(total) over log(n): 1 is linear in n, \
             2 quadratic. It is fitted on records decoded for our implementation and on wall \
             time for git (which has no counters). `scan` is the exponent of the records decoded \
             past the seek positions, `seconds` that of wall time. The lookup scenarios measure a \
             fixed batch of 64 operations at every n, so work constant per operation fits to 0 \
             there; the p1401 and auto-compaction scenarios measure n operations (one per ref), \
             so work constant per operation fits to 1.\n"
        );
        let _ = writeln!(
            m,
            "| scenario | implementation | sizes | exponent | scan | seconds | records/op (first → last) | blocks/op (first → last) |"
        );
        let _ = writeln!(m, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |");
        for s in &self.results {
            let last = s.sizes.len().saturating_sub(1);
            let pair = |v: &Option<Vec<u64>>| match (s.per_op(v, 0), s.per_op(v, last)) {
                (Some(a), Some(b)) => format!("{a:.1} → {b:.1}"),
                _ => "–".to_string(),
            };
            let _ = writeln!(
                m,
                "| {} | {} | {}–{} | {} | {} | {} | {} | {} |",
                s.scenario,
                s.implementation,
                s.sizes.first().unwrap_or(&0),
                s.sizes.last().unwrap_or(&0),
                exponent_text(s.exponent),
                exponent_text(s.exponent_scan),
                exponent_text(s.exponent_seconds),
                pair(&s.records_decoded),
                pair(&s.blocks_read)
            );
        }
    }

    /// The seconds of p1401 scenario `sc`'s measured transaction: a column per
    /// implementation measured, a row per size, with ours' records per operation and git's
    /// time over ours. Nothing when no implementation measured it.
    fn write_p1401_seconds(&self, m: &mut String, sc: &str) {
        let _ = writeln!(m, "\n## {sc}: seconds of the measured transaction\n");
        let impls: Vec<&Series> = [
            (sc.to_string(), "ours"),
            (format!("{sc}/no-auto-compaction"), "ours"),
            (sc.to_string(), "ours-suppress-deletions"),
            (sc.to_string(), "git"),
        ]
        .iter()
        .filter_map(|(s, i)| self.find(s, i))
        .collect();
        if impls.is_empty() {
            return;
        }
        let mut sizes: Vec<usize> = impls.iter().flat_map(|s| s.sizes.clone()).collect();
        sizes.sort_unstable();
        sizes.dedup();
        write_seconds_head(m, &impls);
        let ours = self.find(sc, "ours");
        let git = self.find(sc, "git");
        for n in sizes {
            write_seconds_row(m, n, &impls, ours, git);
        }
    }

    /// Compare every counter with a baseline, exactly: each difference (up or down) at each
    /// size of each series, a series or counter on one side only, and different sizes or
    /// operation counts. Counters are deterministic, so any difference is a change in the
    /// work done; one that is intended updates the baseline in the same commit. git series
    /// are skipped (they carry wall time only).
    pub fn differences(&self, baseline: &Report) -> Vec<String> {
        let mut out = Vec::new();
        let ours = |r: &Report| -> Vec<(String, String)> {
            r.results
                .iter()
                .filter(|s| s.implementation != "git")
                .map(|s| (s.scenario.clone(), s.implementation.clone()))
                .collect()
        };
        for (scenario, imp) in ours(baseline) {
            if self.find(&scenario, &imp).is_none() {
                out.push(format!("{scenario} / {imp}: in the baseline, not measured"));
            }
        }
        for cur in self.results.iter().filter(|s| s.implementation != "git") {
            let label = format!("{} / {}", cur.scenario, cur.implementation);
            let Some(base) = baseline.find(&cur.scenario, &cur.implementation) else {
                out.push(format!("{label}: measured, not in the baseline"));
                continue;
            };
            if cur.sizes != base.sizes || cur.ops != base.ops {
                out.push(format!(
                    "{label}: sizes/ops {:?}/{:?}, baseline {:?}/{:?}",
                    cur.sizes, cur.ops, base.sizes, base.ops
                ));
                continue;
            }
            let names: std::collections::BTreeSet<&String> =
                cur.counters.keys().chain(base.counters.keys()).collect();
            for name in names {
                match (cur.counters.get(name), base.counters.get(name)) {
                    (Some(c), Some(b)) => {
                        for ((n, c), b) in cur.sizes.iter().zip(c).zip(b) {
                            if c != b {
                                let delta = *c as i128 - *b as i128;
                                let pct = delta as f64 * 100.0 / (*b).max(1) as f64;
                                out.push(format!(
                                    "{label}: {name} at n={n}: {b} -> {c} ({delta:+}, {pct:+.2}%)"
                                ));
                            }
                        }
                    }
                    (Some(_), None) => {
                        out.push(format!("{label}: counter {name} is not in the baseline"))
                    }
                    (None, Some(_)) => out.push(format!("{label}: counter {name} is gone")),
                    (None, None) => {}
                }
            }
        }
        out
    }

    /// A log-log SVG: seconds of ours, ours with `suppress_deletions` and git on the p1401
    /// workloads (top), and records decoded per run for ours and the suppress mode (bottom).
    pub fn to_svg(&self) -> String {
        let scenarios = ["p1401-recreate", "p1401-asymmetric"];
        let (pw, ph) = (460.0, 320.0);
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="11">"#,
            2.0 * pw,
            2.0 * ph + 30.0,
            2.0 * pw,
            2.0 * ph + 30.0
        );
        let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="18" text-anchor="middle" font-size="14">reftable-rs vs git: re-creating refs after mass deletion (log-log)</text>"#,
            pw
        );
        let colors = [
            ("ours", "#1f77b4"),
            ("ours-suppress-deletions", "#ff7f0e"),
            ("git", "#d62728"),
        ];
        for (col, sc) in scenarios.iter().enumerate() {
            let mut time_lines = Vec::new();
            let mut rec_lines = Vec::new();
            for (imp, color) in colors {
                if let Some(s) = self.find(sc, imp) {
                    // One plotted line: the implementation's values over the sizes, labelled
                    // with its fitted slope.
                    let line = |exponent: Option<f64>, values: Vec<f64>| Line {
                        label: match exponent {
                            Some(e) => format!("{imp} (slope {e:.2})"),
                            None => imp.to_string(),
                        },
                        color,
                        points: s.sizes.iter().map(|&n| n as f64).zip(values).collect(),
                    };
                    time_lines.push(line(s.exponent_seconds, s.seconds.clone()));
                    if let Some(r) = &s.records_decoded {
                        rec_lines.push(line(s.exponent, r.iter().map(|&x| x as f64).collect()));
                    }
                }
            }
            let x0 = col as f64 * pw;
            panel(
                &mut svg,
                x0,
                30.0,
                pw,
                ph,
                &format!("{sc}: seconds"),
                &time_lines,
            );
            panel(
                &mut svg,
                x0,
                30.0 + ph,
                pw,
                ph,
                &format!("{sc}: records decoded"),
                &rec_lines,
            );
        }
        svg.push_str("</svg>\n");
        svg
    }
}

pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) color: &'static str,
    pub(crate) points: Vec<(f64, f64)>,
}

pub(crate) fn panel(
    svg: &mut String,
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    title: &str,
    lines: &[Line],
) {
    let (ml, mr, mt, mb) = (62.0, 30.0, 26.0, 40.0);
    let pts: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|l| l.points.iter().copied())
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .collect();
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>"#,
        x0 + w / 2.0,
        y0 + 16.0,
        xml(title)
    );
    if pts.is_empty() {
        return;
    }
    let lx = |v: f64| v.log10();
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in &pts {
        xmin = xmin.min(lx(*x));
        xmax = xmax.max(lx(*x));
        ymin = ymin.min(lx(*y));
        ymax = ymax.max(lx(*y));
    }
    let (xmin, xmax) = (xmin.floor(), xmax.ceil().max(xmin.floor() + 1.0));
    let (ymin, ymax) = (ymin.floor(), ymax.ceil().max(ymin.floor() + 1.0));
    let (pl, pr, pt, pb) = (x0 + ml, x0 + w - mr, y0 + mt, y0 + h - mb);
    let sx = |v: f64| pl + (lx(v) - xmin) / (xmax - xmin) * (pr - pl);
    let sy = |v: f64| pb - (lx(v) - ymin) / (ymax - ymin) * (pb - pt);
    let _ = writeln!(
        svg,
        r##"<rect x="{pl}" y="{pt}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        pr - pl,
        pb - pt
    );
    let mut e = xmin as i32;
    while e as f64 <= xmax {
        let x = sx(10f64.powi(e));
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{pt}" x2="{x:.1}" y2="{pb}" stroke="#ddd"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            pb + 14.0,
            pow10(e)
        );
        e += 1;
    }
    let mut e = ymin as i32;
    while e as f64 <= ymax {
        let y = sy(10f64.powi(e));
        let _ = writeln!(
            svg,
            r##"<line x1="{pl}" y1="{y:.1}" x2="{pr}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            pl - 4.0,
            y + 4.0,
            pow10(e)
        );
        e += 1;
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">refs (n)</text>"#,
        (pl + pr) / 2.0,
        pb + 30.0
    );
    for (i, l) in lines.iter().enumerate() {
        let path: Vec<String> = l
            .points
            .iter()
            .filter(|(x, y)| *x > 0.0 && *y > 0.0)
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
            path.join(" "),
            l.color
        );
        for p in &path {
            let (x, y) = p.split_once(',').expect("x,y");
            let _ = writeln!(
                svg,
                r#"<circle cx="{x}" cy="{y}" r="2.5" fill="{}"/>"#,
                l.color
            );
        }
        let ly = pt + 14.0 + 14.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            pl + 8.0,
            pl + 26.0,
            l.color,
            pl + 30.0,
            ly + 4.0,
            xml(&l.label)
        );
    }
}

/// An exponent with two decimals, or a dash when there is none.
fn exponent_text(e: Option<f64>) -> String {
    e.map_or("–".to_string(), |e| format!("{e:.2}"))
}

/// The summary line of p1401 scenario `sc`: git's seconds over ours at the largest size both
/// measured, and the exponents of each.
fn write_comparison(m: &mut String, sc: &str, o: &Series, g: &Series) {
    let common = g.sizes.iter().rev().find(|n| o.sizes.contains(n));
    if let Some(&n) = common {
        let (gs, os) = (
            g.seconds_at(n).unwrap_or(0.0),
            o.seconds_at(n).unwrap_or(0.0),
        );
        // The slope of git's last doubling: less diluted by fixed costs than the fit.
        let k = g.sizes.len();
        let last = (k >= 2)
            .then(|| crate::fit::exponent_over_sizes(&g.sizes[k - 2..], &g.seconds[k - 2..]))
            .flatten();
        let _ = writeln!(
            m,
            "- **{sc}** at n = {n}: git {gs:.2} s, ours {os:.3} s: git takes **{:.0}×** as \
             long. Exponents: ours {} on records decoded ({} past the seeks), git {} on \
             seconds ({} over its last doubling).",
            if os > 0.0 { gs / os } else { f64::NAN },
            exponent_text(o.exponent),
            exponent_text(o.exponent_scan),
            exponent_text(g.exponent),
            exponent_text(last)
        );
    }
}

/// The two header lines of a seconds table: a column per implementation in `impls`, then
/// ours' records per operation and git's time over ours.
fn write_seconds_head(m: &mut String, impls: &[&Series]) {
    let _ = write!(m, "| n |");
    for s in impls {
        let label = if s.scenario.ends_with("no-auto-compaction") {
            format!("{} (no auto-compaction)", s.implementation)
        } else {
            s.implementation.clone()
        };
        let _ = write!(m, " {label} s |");
    }
    let _ = writeln!(m, " ours records/op | git / ours |");
    let _ = write!(m, "| ---: |");
    for _ in impls {
        let _ = write!(m, " ---: |");
    }
    let _ = writeln!(m, " ---: | ---: |");
}

/// The row of size `n` of a seconds table: each implementation's seconds (empty where it
/// has none), ours' records per operation and git's time over ours.
fn write_seconds_row(
    m: &mut String,
    n: usize,
    impls: &[&Series],
    ours: Option<&Series>,
    git: Option<&Series>,
) {
    let _ = write!(m, "| {n} |");
    for s in impls {
        match s.seconds_at(n) {
            Some(t) => {
                let _ = write!(m, " {t:.4} |");
            }
            None => {
                let _ = write!(m, " |");
            }
        }
    }
    let rec = ours.and_then(|o| {
        let i = o.sizes.iter().position(|&s| s == n)?;
        o.per_op(&o.records_decoded, i)
    });
    let ratio = match (
        git.and_then(|g| g.seconds_at(n)),
        ours.and_then(|o| o.seconds_at(n)),
    ) {
        (Some(g), Some(o)) if o > 0.0 => format!("{:.0}×", g / o),
        _ => String::new(),
    };
    let _ = writeln!(
        m,
        " {} | {ratio} |",
        rec.map_or(String::new(), |r| format!("{r:.1}"))
    );
}

fn pow10(e: i32) -> String {
    if (0..=6).contains(&e) {
        format!("{}", 10u64.pow(e as u32))
    } else {
        format!("1e{e}")
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
