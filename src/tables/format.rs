//! A layer's file (docs/tables.md, "Files"): a 64-byte header, then one
//! little-endian `u16` value per index. Written to a temporary name and
//! renamed, so a file under its own name is always complete.

use crate::engine::{Variant, RULES_VERSION};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"ARENATB\x01";
pub const HEADER: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a table of this build ({why})")]
    Bad { path: PathBuf, why: String },
}

/// The file of a layer under a tables folder: `DIR/VARIANT/LAYER.tbl`.
pub fn layer_path(dir: &Path, variant: Variant, layer_name: &str) -> PathBuf {
    dir.join(variant.name()).join(format!("{layer_name}.tbl"))
}

/// FNV-1a, 64 bits, of the value bytes.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn padded(s: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, b) in out.iter_mut().zip(s.bytes()) {
        *o = b;
    }
    out
}

/// Writes a layer's values (atomically: a temporary file renamed).
pub fn write_layer(
    path: &Path,
    variant: Variant,
    layer_name: &str,
    seeds: u32,
    values: &[u16],
) -> Result<(), FormatError> {
    let io = |source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut body = Vec::with_capacity(values.len() * 2);
    for v in values {
        body.extend_from_slice(&v.to_le_bytes());
    }
    let mut head = Vec::with_capacity(HEADER);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&padded(variant.name()));
    head.extend_from_slice(&padded(layer_name));
    head.extend_from_slice(&(values.len() as u64).to_le_bytes());
    head.extend_from_slice(&seeds.to_le_bytes());
    head.extend_from_slice(&RULES_VERSION.to_le_bytes());
    head.extend_from_slice(&checksum(&body).to_le_bytes());
    let tmp = path.with_extension("tbl.part");
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(&head).map_err(io)?;
    f.write_all(&body).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Reads a layer's values, checking the header against what is expected
/// and the checksum. `Ok(None)` when the file does not exist.
pub fn read_layer(
    path: &Path,
    variant: Variant,
    layer_name: &str,
    positions: u64,
) -> Result<Option<Vec<u16>>, FormatError> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(FormatError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|source| FormatError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let bad = |why: String| FormatError::Bad {
        path: path.to_path_buf(),
        why,
    };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(bad("no table header".into()));
    }
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
    if bytes[8..24] != padded(variant.name()) || bytes[24..40] != padded(layer_name) {
        return Err(bad(format!("expected the {variant} layer {layer_name}")));
    }
    if u64_at(40) != positions {
        return Err(bad(format!(
            "{} positions, expected {positions}",
            u64_at(40)
        )));
    }
    if u32_at(52) != RULES_VERSION {
        return Err(bad(format!(
            "rules version {}, this build plays {RULES_VERSION}",
            u32_at(52)
        )));
    }
    let body = &bytes[HEADER..];
    if body.len() as u64 != positions * 2 {
        return Err(bad(format!(
            "{} value bytes, expected {}",
            body.len(),
            positions * 2
        )));
    }
    if checksum(body) != u64_at(56) {
        return Err(bad("checksum mismatch (a damaged file)".into()));
    }
    Ok(Some(
        body.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_is_read_back_and_damage_is_caught() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = layer_path(dir.path(), Variant::Diffusion, "n03");
        let values = vec![0u16, 0x4001, 0x8002, 0xC000];
        write_layer(&path, Variant::Diffusion, "n03", 3, &values).expect("written");
        let back = read_layer(&path, Variant::Diffusion, "n03", 4).expect("read");
        assert_eq!(back, Some(values));
        assert!(read_layer(&path, Variant::Diffusion, "n04", 4).is_err());
        assert!(read_layer(&path, Variant::Diffusion, "n03", 5).is_err());
        let mut bytes = std::fs::read(&path).expect("bytes");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).expect("damaged");
        let err = read_layer(&path, Variant::Diffusion, "n03", 4).expect_err("damaged");
        assert!(err.to_string().contains("checksum"), "{err}");
        let missing = layer_path(dir.path(), Variant::Diffusion, "n09");
        assert!(matches!(
            read_layer(&missing, Variant::Diffusion, "n09", 1),
            Ok(None)
        ));
    }
}
