//! The encoding layer, for tools that look inside tables: varints, the file layout (header,
//! footer, block types), records and their key compression, and blocks (reading and
//! building). Everyday use needs none of this: [`Table`](crate::Table),
//! [`MergedTable`](crate::MergedTable), [`Stack`](crate::Stack) and
//! [`RefDb`](crate::RefDb) read and write through it.
//!
//! Read bottom up: [`varint`] → [`format`](mod@format) → [`fields`] → [`ref_view`] → [`record`] → [`block`] (and [`block_writer`]).

pub mod block;
pub mod block_writer;
pub mod fields;
pub mod format;
pub mod record;
pub mod ref_view;
pub mod varint;
