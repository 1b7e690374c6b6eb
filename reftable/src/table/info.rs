//! What a table's header and footer say: its version, hash, update indexes and where its
//! sections (refs, objs, logs) and their indexes are.

use crate::codec::format::{header_size, BlockType, Footer};
use crate::error::{Error, Result};
use crate::hash::HashId;

/// Where one section of a table is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Section {
    /// Whether the table has this section.
    pub present: bool,
    /// File offset of the section's first block.
    pub offset: u64,
    /// File offset of the root level of the section's index, 0 without an index.
    pub index_offset: u64,
}

/// What a table's header and footer say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableInfo {
    /// Format version (1 or 2).
    pub version: u8,
    /// The hash of the object ids.
    pub hash: HashId,
    /// Block size from the header (0 means unaligned).
    pub block_size: u32,
    /// Smallest update index of the ref records.
    pub min_update_index: u64,
    /// Largest update index of the records.
    pub max_update_index: u64,
    /// File size.
    pub size: u64,
    /// File offset of the footer (the end of the blocks).
    pub footer_offset: u64,
    /// The ref section.
    pub refs: Section,
    /// The obj section.
    pub objs: Section,
    /// Length of the abbreviated object ids in obj records.
    pub obj_id_len: u8,
    /// The log section.
    pub logs: Section,
    /// The stored CRC-32 of the footer.
    pub footer_crc: u32,
}

impl TableInfo {
    /// Header size of this table.
    pub fn header_size(&self) -> usize {
        header_size(self.version)
    }

    /// The section holding records of block type `t` (index blocks belong to the
    /// section they index).
    pub fn section(&self, t: BlockType) -> Option<&Section> {
        match t {
            BlockType::Ref => Some(&self.refs),
            BlockType::Log => Some(&self.logs),
            BlockType::Obj => Some(&self.objs),
            BlockType::Index => None,
        }
    }
}

/// A format error at `offset` of a table.
pub(super) fn corrupt(offset: u64, msg: impl Into<String>) -> Error {
    Error::format(msg).at_offset(offset)
}

/// Check a table's header and footer and work out where its sections are.
pub(crate) fn parse_info(data: &[u8]) -> Result<TableInfo> {
    let footer = Footer::decode(data)?;
    let header = footer.header;
    let hsize = header.size();
    let footer_offset = data.len() - footer.size();
    let first_type = if hsize < footer_offset {
        BlockType::from_byte(data[hsize])
    } else {
        None
    };
    if footer.obj_offset > 0 && footer.obj_id_len == 0 {
        return Err(corrupt(
            (footer_offset + hsize + 8) as u64,
            "obj section present with an object id length of 0",
        ));
    }
    Ok(TableInfo {
        version: header.version,
        hash: header.hash,
        block_size: header.block_size,
        min_update_index: header.min_update_index,
        max_update_index: header.max_update_index,
        size: data.len() as u64,
        footer_offset: footer_offset as u64,
        refs: Section {
            present: first_type == Some(BlockType::Ref),
            offset: 0,
            index_offset: footer.ref_index_offset,
        },
        objs: Section {
            present: footer.obj_offset > 0,
            offset: footer.obj_offset,
            index_offset: footer.obj_index_offset,
        },
        obj_id_len: footer.obj_id_len,
        logs: Section {
            present: first_type == Some(BlockType::Log) || footer.log_offset > 0,
            offset: footer.log_offset,
            index_offset: footer.log_index_offset,
        },
        footer_crc: footer.crc,
    })
}

#[cfg(test)]
mod tests {
    use crate::codec::format::Footer;
    use crate::table::testing::{refs, write};
    use crate::table::Table;
    use crate::WriteOptions;

    /// A footer announcing an obj section with an id length of 0, at the offset of the
    /// footer's obj field.
    #[test]
    fn an_obj_section_needs_an_id_length() {
        let t = write(&refs(3), &[], WriteOptions::default());
        let mut bytes = t.bytes().to_vec();
        let n = bytes.len();
        let f = Footer::decode(&bytes).unwrap();
        let field = n - f.size() + f.header.size() + 8;
        bytes[field..field + 8].copy_from_slice(&(5u64 << 5).to_be_bytes());
        let crc = crc32fast::hash(&bytes[n - f.size()..n - 4]);
        bytes[n - 4..].copy_from_slice(&crc.to_be_bytes());
        let e = Table::from_bytes("t.ref", bytes).unwrap_err();
        assert_eq!(e.offset(), Some(field as u64), "{e}");
        assert!(e.message().contains("object id length of 0"), "{e}");
    }
}
