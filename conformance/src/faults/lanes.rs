//! Independent trials run side by side: the fault points of one migration are each tried on
//! a copy of their own, so `lanes` threads take them in turn, and the results come back in
//! the points' order (a report does not depend on which thread ran what). A faults run's
//! cases already run one per core; this keeps the cores busy when one case's migration
//! outlasts the others (a case of 300 refs has 400 trials where another has 50).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// [`map_in_lanes`] of the items taken before `deadline`: an item taken after it is not
/// run, and the results end before the first such item (what a report lists is a prefix of
/// the points, as when they ran one by one).
pub fn before_deadline<T: Sync, R: Send>(
    items: &[T],
    lanes: usize,
    deadline: Option<Instant>,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    map_in_lanes(items, lanes, |i, item| {
        (!crate::budget::past(deadline)).then(|| f(i, item))
    })
    .into_iter()
    .map_while(|r| r)
    .collect()
}

/// `f(i, item)` for every item, on `lanes` threads (at least one); the results in order.
pub fn map_in_lanes<T: Sync, R: Send>(
    items: &[T],
    lanes: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..lanes.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { return };
                let r = f(i, item);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results
        .into_iter()
        .map(|r| r.expect("every item is taken once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_the_lanes() {
        let items: Vec<u32> = (0..50).collect();
        for lanes in [0, 1, 2, 7, 80] {
            let got = map_in_lanes(&items, lanes, |i, x| (i, x * 2));
            let want: Vec<(usize, u32)> = items.iter().map(|x| (*x as usize, x * 2)).collect();
            assert_eq!(got, want, "{lanes} lanes");
        }
        assert!(map_in_lanes(&[] as &[u32], 2, |_, x| *x).is_empty());
    }

    #[test]
    fn nothing_is_run_past_the_deadline() {
        let items: Vec<u32> = (0..10).collect();
        let past = Some(Instant::now());
        assert!(before_deadline(&items, 2, past, |_, x| *x).is_empty());
        assert_eq!(before_deadline(&items, 2, None, |_, x| *x), items);
    }
}
