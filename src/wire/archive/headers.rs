//! The tar headers that describe the next entry (pax extended headers, GNU
//! long names and long links) and pax global headers, read by
//! [`super::unpack`] itself with their size bounded before a byte of them
//! is read. (The `tar` crate reads such a header whole into memory,
//! whatever size it declares: a 2 MB gzip upload whose pax header declared
//! 2 GB took the server's memory to 2.3 GB, issue 47.) The archive is
//! read raw ([`tar::Entries::raw`]), and the names these headers give are
//! applied here, as the crate would have: a GNU long name first, then a
//! pax `path`, then the header's own name (and so for links).

use super::limits::{ArchiveError, Limits, Unpacking, MIB};
use std::io::Read;

/// The most bytes of one pax or GNU long-name header: a path is at most
/// [`Limits::path_bytes`] anyway; a pax header of a file with its
/// extended attributes stays far below.
pub const HEADER_BYTES: u64 = 64 * 1024;

/// The most bytes of such headers in one archive, all together.
pub const HEADERS_TOTAL: u64 = 4 * MIB;

/// The most bytes the tar stream (the gzip stream decompressed) may hold
/// under `limits`: the files' contents, each entry's header block and
/// padding, up to three describing headers per entry, and the end. A tar
/// that is larger is refused as it streams, whatever its entries declare
/// (directories and links with a declared size are skipped, not written,
/// so their bytes count only here).
pub fn stream_limit(limits: &Limits) -> u64 {
    let per_entry = 2 * 512 + 3 * 1024;
    limits
        .unpacked_bytes
        .saturating_add((limits.files as u64).saturating_mul(per_entry))
        .saturating_add(HEADERS_TOTAL)
        .saturating_add(MIB)
}

/// The describing headers read since the last entry.
#[derive(Default)]
pub struct Pending {
    long_name: Option<Vec<u8>>,
    long_link: Option<Vec<u8>>,
    pax: Option<Vec<u8>>,
    /// Bytes of such headers read in the whole archive.
    total: u64,
}

/// An entry's path and link target, as its headers give them.
pub struct Names {
    pub path: Vec<u8>,
    pub link: Option<Vec<u8>>,
}

impl Pending {
    /// Takes `entry` (the `index`-th of the archive, from 1) when it is a
    /// describing header: its size checked first, then its bytes kept for
    /// the next entry. `Ok(true)` when it was one (the caller goes on to
    /// the next entry).
    pub fn take<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        index: usize,
    ) -> Result<bool, Unpacking> {
        use tar::EntryType as T;
        let (kind, slot) = match entry.header().entry_type() {
            T::GNULongName => ("a GNU long-name header", &mut self.long_name),
            T::GNULongLink => ("a GNU long-link header", &mut self.long_link),
            T::XHeader => ("a pax extended header", &mut self.pax),
            T::XGlobalHeader => ("a pax global header", &mut None),
            _ => return Ok(false),
        };
        let declared = entry.size();
        let limit = HEADER_BYTES.min(HEADERS_TOTAL - self.total);
        if declared > limit {
            return Err(ArchiveError::HeaderTooLarge {
                index,
                kind,
                declared,
                limit,
            }
            .into());
        }
        if slot.is_some() {
            return Err(corrupt(format!(
                "entry {index}: two of {kind} for the same entry"
            )));
        }
        let mut bytes = Vec::with_capacity(declared as usize);
        entry
            .take(declared)
            .read_to_end(&mut bytes)
            .map_err(Unpacking::Read)?;
        self.total += bytes.len() as u64;
        // A global header only carries metadata (`git archive` writes one).
        if entry.header().entry_type() != T::XGlobalHeader {
            *slot = Some(bytes);
        }
        Ok(true)
    }

    /// The names of `entry`, an entry that is not a describing header, by
    /// what was read before it; then forgets that.
    pub fn names<R: Read>(
        &mut self,
        entry: &tar::Entry<'_, R>,
        index: usize,
    ) -> Result<Names, Unpacking> {
        let mut path = self.long_name.take().map(trim_nul);
        let mut link = self.long_link.take().map(trim_nul);
        if let Some(pax) = self.pax.take() {
            for ext in tar::PaxExtensions::new(&pax) {
                let ext = ext.map_err(|_| {
                    corrupt(format!(
                        "entry {index}: its pax extended header does not read"
                    ))
                })?;
                match ext.key_bytes() {
                    b"path" if path.is_none() => path = Some(ext.value_bytes().to_vec()),
                    b"linkpath" if link.is_none() => link = Some(ext.value_bytes().to_vec()),
                    b"size" => {
                        let declared = entry.header().entry_size().ok();
                        let pax_size = std::str::from_utf8(ext.value_bytes())
                            .ok()
                            .and_then(|v| v.parse::<u64>().ok());
                        if pax_size.is_none() || pax_size != declared {
                            return Err(corrupt(format!(
                                "entry {index}: its pax size is not its header's"
                            )));
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(Names {
            path: path.unwrap_or_else(|| entry.path_bytes().into_owned()),
            link: link.or_else(|| entry.link_name_bytes().map(|l| l.into_owned())),
        })
    }

    /// Whether headers wait for an entry (at the archive's end: damaged).
    pub fn waiting(&self) -> bool {
        self.long_name.is_some() || self.long_link.is_some() || self.pax.is_some()
    }
}

fn trim_nul(mut v: Vec<u8>) -> Vec<u8> {
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

fn corrupt(detail: String) -> Unpacking {
    Unpacking::Refused(ArchiveError::Corrupt { detail })
}
