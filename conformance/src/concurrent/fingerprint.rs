//! Fingerprints of ref states, so that a sample can be matched with the state after some
//! prefix of a long run's commit order without keeping every such state.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use reftable::ObjectId;

use crate::model::{MValue, Model};

/// A 128-bit fingerprint of a state's refs under `refs/` (name and id of each, in name
/// order), so that the state after every prefix of a long run need not be kept.
pub(crate) type Print = (u64, u64);

/// The fingerprint of `refs` (name and id bytes of each, in the order given).
fn print_of<'a>(refs: impl Iterator<Item = (&'a str, &'a [u8])>) -> Print {
    let mut a = std::collections::hash_map::DefaultHasher::new();
    let mut b = std::collections::hash_map::DefaultHasher::new();
    b.write_u64(0x9e37_79b9_7f4a_7c15);
    for (name, id) in refs {
        for h in [&mut a, &mut b] {
            name.hash(h);
            id.hash(h);
        }
    }
    (a.finish(), b.finish())
}

/// The fingerprint of the model's refs under `refs/` that point at objects (what the
/// readers list).
pub(crate) fn model_print(m: &Model) -> Print {
    print_of(
        m.refs
            .iter()
            .filter(|(n, _)| n.starts_with("refs/"))
            .filter_map(|(n, v)| match v {
                MValue::Oid(id) => Some((n.as_str(), id.as_bytes())),
                MValue::Symref(_) => None,
            }),
    )
}

/// The fingerprint of a sample (hex ids; a malformed one never matches a state).
pub(crate) fn sample_print(refs: &BTreeMap<String, String>) -> Print {
    let ids: Vec<(&str, Vec<u8>)> = refs
        .iter()
        .map(|(n, h)| {
            let id = ObjectId::from_hex(h)
                .map_or_else(|| h.as_bytes().to_vec(), |i| i.as_bytes().to_vec());
            (n.as_str(), id)
        })
        .collect();
    print_of(ids.iter().map(|(n, id)| (*n, id.as_slice())))
}
