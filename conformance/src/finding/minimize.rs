//! Delta debugging (ddmin): a 1-minimal part of a list that still fails a test, for every
//! mode's minimizer.

/// ddmin over a list: returns a 1-minimal sublist for which `test` holds.
pub fn ddmin<T: Clone>(items: Vec<T>, test: &mut dyn FnMut(&[T]) -> bool) -> Vec<T> {
    let mut items = items;
    let mut n = 2usize;
    while items.len() >= 2 {
        let chunk = items.len().div_ceil(n);
        let mut reduced = false;
        // Try removing each chunk (testing the complement).
        let mut start = 0;
        while start < items.len() {
            let end = (start + chunk).min(items.len());
            let complement: Vec<T> = items[..start]
                .iter()
                .chain(&items[end..])
                .cloned()
                .collect();
            if !complement.is_empty() && test(&complement) {
                items = complement;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
            start = end;
        }
        if !reduced {
            if n >= items.len() {
                break;
            }
            n = (n * 2).min(items.len());
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::ddmin;

    #[test]
    fn ddmin_finds_the_culprits() {
        let items: Vec<u32> = (0..40).collect();
        let mut calls = 0;
        let out = ddmin(items, &mut |c| {
            calls += 1;
            c.contains(&7) && c.contains(&31)
        });
        assert_eq!(out, vec![7, 31]);
        assert!(calls < 200, "{calls} calls");
    }
}
