//! Work taken in turn by a number of threads, the lanes: every mode that runs cases or
//! trials side by side takes them this way. [`take_in_turn`] hands out numbers 0, 1, 2, …
//! until a lane's work or the caller's condition stops it; [`map_in_lanes`] runs a function
//! on every item of a list and gives the results in the list's order (a report does not
//! depend on which thread ran what), and [`before_deadline`] the same for the items taken
//! before a deadline.

use std::sync::atomic::{AtomicU64, Ordering};
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

/// `lanes` threads (at least one) taking the numbers 0, 1, 2, … in turn. A lane asks `go()`
/// before it takes a number (a lane that `go()` stops takes none more), runs
/// `work(lane, number)`, and stops when that returns false. Returns how many numbers were
/// taken: each lane takes one past the last it works on when `work` ends it.
pub fn take_in_turn(
    lanes: usize,
    go: impl Fn() -> bool + Sync,
    work: impl Fn(usize, u64) -> bool + Sync,
) -> u64 {
    let next = AtomicU64::new(0);
    std::thread::scope(|s| {
        for lane in 0..lanes.max(1) {
            let (next, go, work) = (&next, &go, &work);
            s.spawn(move || {
                while go() {
                    if !work(lane, next.fetch_add(1, Ordering::SeqCst)) {
                        break;
                    }
                }
            });
        }
    });
    next.into_inner()
}

/// `f(i, item)` for every item, on `lanes` threads (at least one); the results in order.
pub fn map_in_lanes<T: Sync, R: Send>(
    items: &[T],
    lanes: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let lanes = lanes.clamp(1, items.len().max(1));
    take_in_turn(
        lanes,
        || true,
        |_, i| {
            let i = i as usize;
            let Some(item) = items.get(i) else {
                return false;
            };
            let r = f(i, item);
            results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            true
        },
    );
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
    fn each_number_is_taken_once_and_counted() {
        let seen = Mutex::new(Vec::new());
        let taken = take_in_turn(
            3,
            || true,
            |lane, i| {
                assert!(lane < 3);
                if i >= 20 {
                    return false;
                }
                seen.lock().unwrap().push(i);
                true
            },
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, (0..20).collect::<Vec<u64>>());
        // Each lane took one number past the end before it stopped.
        assert_eq!(taken, 23);
        assert_eq!(take_in_turn(2, || false, |_, _| true), 0);
    }

    #[test]
    fn nothing_is_run_past_the_deadline() {
        let items: Vec<u32> = (0..10).collect();
        let past = Some(Instant::now());
        assert!(before_deadline(&items, 2, past, |_, x| *x).is_empty());
        assert_eq!(before_deadline(&items, 2, None, |_, x| *x), items);
    }
}
