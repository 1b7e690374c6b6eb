//! Who made a change and when: the identity a reflog entry records ([`Signature`]) and its
//! time zone ([`TzOffset`]), one type for the table records, the ref database's committer and
//! the files backend's reflog lines.

use std::fmt;

/// A time zone as git records it in an ident: `±HHMM`, kept as git's tables store it, the
/// digits read as a decimal number (`+0530` is 530, `-0700` is -700).
///
/// Any 16-bit value round-trips, since a table may hold what a hand-made ident said (git
/// copies `+9999` as it is); [`minutes`](Self::minutes) answers only for a real `HHMM`.
///
/// ```
/// use reftable::TzOffset;
///
/// let tz = TzOffset::parse(b"-0730").unwrap();
/// assert_eq!(tz.hhmm(), -730);
/// assert_eq!(tz.minutes(), Some(-450));
/// assert_eq!(tz.to_string(), "-0730");
/// assert_eq!(TzOffset::from_minutes(330), Some(TzOffset::from_hhmm(530)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TzOffset(i16);

impl TzOffset {
    /// `+0000`.
    pub const UTC: Self = Self(0);

    /// The zone whose `±HHMM` digits, read as a decimal number, are `value` (`-0700` → -700).
    pub const fn from_hhmm(value: i16) -> Self {
        Self(value)
    }

    /// The `±HHMM` digits read as a decimal number: the two bytes a log record stores.
    pub const fn hhmm(self) -> i16 {
        self.0
    }

    /// The zone `minutes` east of UTC, or `None` when it has no `HHMM` form (99:59 at most).
    pub fn from_minutes(minutes: i32) -> Option<Self> {
        let (h, m) = (minutes.abs() / 60, minutes.abs() % 60);
        let hhmm = i16::try_from(h * 100 + m).ok().filter(|_| h < 100)?;
        Some(Self(if minutes < 0 { -hhmm } else { hhmm }))
    }

    /// Minutes east of UTC, or `None` when the minutes digits are 60 or more.
    pub fn minutes(self) -> Option<i32> {
        let v = i32::from(self.0);
        let (h, m) = (v.abs() / 100, v.abs() % 100);
        (m < 60).then_some(v.signum() * (h * 60 + m))
    }

    /// Parse the five bytes of an ident's zone, `+HHMM` or `-HHMM`, as git's reflog lines
    /// hold it.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let [sign @ (b'+' | b'-'), digits @ ..] = text else {
            return None;
        };
        if digits.len() != 4 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let magnitude = digits
            .iter()
            .fold(0i16, |n, d| n * 10 + i16::from(d - b'0'));
        Some(Self(if *sign == b'-' { -magnitude } else { magnitude }))
    }
}

/// `+HHMM` or `-HHMM`, as git writes it in an ident.
impl fmt::Display for TzOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { '-' } else { '+' };
        write!(f, "{sign}{:04}", self.0.unsigned_abs())
    }
}

/// An identity and a moment: the committer of a reflog entry (name, email, seconds since the
/// epoch, zone), as git's tables store it.
///
/// ```
/// use reftable::{Signature, TzOffset};
///
/// let me = Signature::new("C O Mitter", "c@example.com", 1_700_000_000, TzOffset::from_hhmm(100));
/// assert_eq!(me.email, b"c@example.com");
/// assert_eq!(me.tz_offset.to_string(), "+0100");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Signature {
    /// Name.
    pub name: Vec<u8>,
    /// Email, without `<>`.
    pub email: Vec<u8>,
    /// Seconds since the epoch.
    pub time: u64,
    /// Time zone.
    pub tz_offset: TzOffset,
}

impl Signature {
    /// A signature of these parts.
    pub fn new(
        name: impl Into<Vec<u8>>,
        email: impl Into<Vec<u8>>,
        time: u64,
        tz_offset: TzOffset,
    ) -> Self {
        Self {
            name: name.into(),
            email: email.into(),
            time,
            tz_offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_parse_print_and_convert() {
        for (text, hhmm, minutes) in [
            ("+0000", 0, Some(0)),
            ("-0000", 0, Some(0)),
            ("+0530", 530, Some(330)),
            ("-1200", -1200, Some(-720)),
            ("+9959", 9959, Some(5999)),
            ("+0099", 99, None),
        ] {
            let tz = TzOffset::parse(text.as_bytes()).unwrap();
            assert_eq!((tz.hhmm(), tz.minutes()), (hhmm, minutes), "{text}");
            // A zone prints with `-` only when it is west of UTC (git's `date_string`): a
            // `-0000` read back is UTC and prints `+0000`, as git's files backend writes it.
            assert_eq!(tz.to_string(), text.replace("-0000", "+0000"), "{text}");
            if let Some(m) = minutes {
                assert_eq!(TzOffset::from_minutes(m), Some(tz), "{text}");
            }
        }
        assert_eq!(TzOffset::UTC.to_string(), "+0000");
        assert_eq!(TzOffset::from_hhmm(-5).to_string(), "-0005");
        assert_eq!(TzOffset::from_hhmm(i16::MIN).to_string(), "-32768");
        assert_eq!(TzOffset::from_minutes(6000), None);
        for bad in ["0530", "+053", "+05:3", "+05300", "*0530", ""] {
            assert_eq!(TzOffset::parse(bad.as_bytes()), None, "{bad}");
        }
    }
}
