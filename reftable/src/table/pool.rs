//! The big buffers a merged iterator hands from table iterator to table iterator: a fresh
//! 16 MiB buffer per table costs 4,096 page faults, one handed on costs none.

use crate::codec::record::Record;

/// At most one inflate buffer and one record with a big value, let go by one table
/// iterator and kept for the next one that needs them (see `TableIter::recycle_with`).
#[derive(Debug, Default)]
pub(crate) struct Pool<R: Record> {
    /// A let-go inflate buffer (the biggest one seen).
    pub(crate) buf: Vec<u8>,
    /// A let-go record whose value buffers a decode can reuse.
    pub(crate) rec: Option<R>,
}

impl<R: Record> Pool<R> {
    /// Keep `b` if it is bigger than the buffer kept so far.
    pub(crate) fn keep_buf(&mut self, b: Vec<u8>) {
        if b.capacity() > self.buf.capacity() {
            self.buf = b;
        }
    }
}
