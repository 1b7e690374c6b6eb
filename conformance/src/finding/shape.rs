//! A finding's detail as a signature: its first words with object ids and numbers left
//! out, so that findings of one cause in different cases (other ids, other counts) group
//! together while different ref names, which may be different causes, stay apart.

/// The detail's first eight words, each cut to 48 characters; a word that is a third or
/// more digits (an object id, a count, an offset) becomes `_`, other words lose their
/// digits; repeated words are kept once.
pub fn detail_shape(detail: &str) -> String {
    let mut words: Vec<String> = (detail.split_whitespace())
        .take(8)
        .map(|w| {
            let w: String = w.chars().take(48).collect();
            let digits = w.chars().filter(char::is_ascii_digit).count();
            if digits * 3 >= w.chars().count() {
                "_".to_string()
            } else {
                w.chars().filter(|c| !c.is_ascii_digit()).collect()
            }
        })
        .collect();
    words.dedup();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_counts_leave_the_shape() {
        let a = detail_shape("ref refs/heads/a: 1234abcd vs 99 entries");
        let b = detail_shape("ref refs/heads/a: 5678ef01 vs 12 entries");
        assert_eq!(a, b);
        assert_ne!(a, detail_shape("ref refs/heads/b: 5678ef01 vs 12 entries"));
    }
}
