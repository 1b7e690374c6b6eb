//! Growth exponents: the least-squares slope of `ln y` against `ln n`, and the bound checks
//! the complexity tests and the CI report apply to them.

use crate::scenarios::Growth;

/// The least-squares slope of `ln y` over `ln x`: `y ≈ c · x^slope`. Points with a
/// non-positive coordinate are left out; `None` with fewer than two usable points.
///
/// ```
/// let xs = [1000.0, 2000.0, 4000.0];
/// let ys = [3.0e6, 12.0e6, 48.0e6];
/// assert!((perf::fit::exponent(&xs, &ys).unwrap() - 2.0).abs() < 1e-9);
/// ```
pub fn exponent(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = xs
        .iter()
        .zip(ys)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0 && x.is_finite() && y.is_finite())
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let k = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    Some(sxy / sxx)
}

/// The growth exponent of `ys` over integer sizes.
pub fn exponent_over_sizes(sizes: &[usize], ys: &[f64]) -> Option<f64> {
    let xs: Vec<f64> = sizes.iter().map(|&n| n as f64).collect();
    exponent(&xs, ys)
}

/// Largest fitted exponent a per-operation counter may have for each [`Growth`].
///
/// Constant work fits to 0 (small wobbles as block boundaries move stay far below 0.15).
/// Logarithmic work grows like `log n`: from 1,000 to 64,000 that is a factor 16 / 10, an
/// exponent of 0.11 for pure `log n`; 0.3 leaves room for an index level being added. Work
/// linear in `n` per operation (the planted `suppress_deletions` regression) fits to 1.
pub fn max_exponent(g: Growth) -> f64 {
    match g {
        Growth::Constant => 0.15,
        Growth::Logarithmic => 0.3,
    }
}

/// Largest factor by which a per-operation counter may grow over one doubling of `n`.
pub fn max_step_ratio(g: Growth) -> f64 {
    match g {
        Growth::Constant => 1.25,
        Growth::Logarithmic => 1.5,
    }
}

/// Check that a per-operation counter (`per_op[i]` measured at `sizes[i]`) grows no faster
/// than `g`: its fitted exponent stays below [`max_exponent`] and no doubling multiplies it
/// by more than [`max_step_ratio`]. The error says which limit broke, with the numbers.
///
/// ```
/// use perf::{fit::check_growth, scenarios::Growth};
/// let sizes = [1000, 2000, 4000, 8000];
/// assert!(check_growth("seek", &sizes, &[20.0, 21.0, 22.0, 22.0], Growth::Constant).is_ok());
/// assert!(check_growth("seek", &sizes, &[500.0, 1000.0, 2000.0, 4000.0], Growth::Logarithmic).is_err());
/// // Nothing (or less than one unit) at every size is constant; a sub-unit bump at one
/// // size is a boundary.
/// assert!(check_growth("scan", &sizes, &[0.0; 4], Growth::Constant).is_ok());
/// assert!(check_growth("scan", &sizes, &[0.6, 0.0, 0.0, 0.0], Growth::Constant).is_ok());
/// assert!(check_growth("blocks", &sizes, &[2.0, 2.6, 2.0, 2.0], Growth::Constant).is_ok());
/// assert!(check_growth("blocks", &sizes, &[2.0, 4.0, 2.0, 2.0], Growth::Constant).is_err());
/// ```
pub fn check_growth(what: &str, sizes: &[usize], per_op: &[f64], g: Growth) -> Result<f64, String> {
    // Less than one unit of work per operation at every size (say, nothing decoded past a
    // point lookup, or a fraction of a record where a table's cached index makes the
    // measured seeks cheaper than the separately counted ones) is constant work; a log-log
    // fit cannot take zeros.
    if sizes.len() >= 2 && per_op.iter().all(|v| *v < 1.0) {
        return Ok(0.0);
    }
    let e = exponent_over_sizes(sizes, per_op)
        .ok_or_else(|| format!("{what}: too few points to fit"))?;
    let table = || {
        sizes
            .iter()
            .zip(per_op)
            .map(|(n, v)| format!("{n}: {v:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if e > max_exponent(g) {
        return Err(format!(
            "{what}: per-op growth exponent {e:.3} exceeds {:.2} ({g:?} bound); per op: {}",
            max_exponent(g),
            table()
        ));
    }
    for w in sizes.windows(2).zip(per_op.windows(2)) {
        let ((n0, n1), (v0, v1)) = ((w.0[0], w.0[1]), (w.1[0], w.1[1]));
        let doublings = (n1 as f64 / n0 as f64).log2().max(1.0);
        // A step of less than one unit per operation (one block, one record) is where a
        // boundary falls at one size, not growth: at a level of 2 blocks per lookup the
        // relative step would otherwise flag a single extra block read in a few lookups.
        if v0 > 0.0 && v1 / v0 > max_step_ratio(g).powf(doublings) && v1 - v0 >= 1.0 {
            return Err(format!(
                "{what}: per-op value grew {:.2}x from n={n0} to n={n1}, more than {:.2}x per \
                 doubling ({g:?} bound); per op: {}",
                v1 / v0,
                max_step_ratio(g),
                table()
            ));
        }
    }
    Ok(e)
}

/// `n · log2 n`, git's bound on the entries auto-compaction writes for `n` single-ref
/// additions (`t_reftable_stack_auto_compaction`).
pub fn n_log2_n(n: usize) -> f64 {
    let n = n as f64;
    n * n.log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_and_constant() {
        let sizes = [1000, 2000, 4000, 8000, 16000];
        let lin: Vec<f64> = sizes.iter().map(|&n| 3.0 * n as f64).collect();
        assert!((exponent_over_sizes(&sizes, &lin).unwrap() - 1.0).abs() < 1e-9);
        let c = [7.0; 5];
        assert!(exponent_over_sizes(&sizes, &c).unwrap().abs() < 1e-9);
        assert!(exponent(&[1.0], &[1.0]).is_none());
    }

    #[test]
    fn step_ratio_catches_a_late_jump() {
        let sizes = [1000, 2000, 4000, 8000, 16000, 32000, 64000];
        let per_op = [10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 40.0];
        assert!(check_growth("x", &sizes, &per_op, Growth::Logarithmic).is_err());
    }
}
