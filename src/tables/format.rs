//! A layer's file (docs/tables.md, "Files"): a 64-byte header, then one
//! little-endian `u16` value per index. Written to a temporary name and
//! renamed, so a file under its own name is always complete.

use crate::engine::{Variant, RULES_VERSION};
use crate::files::NewFile;
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
    #[error("{path}: not a usable table file: {why}")]
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

/// Removes the temporary files in `folder` of builds that are no longer
/// running (killed while writing a layer): those of [`crate::files`], and
/// the `LAYER.tbl.PID.part` of older versions. Another build's, still
/// running, is left alone.
pub fn sweep_parts(folder: &Path) {
    crate::files::sweep_leftovers(folder, |target| target.ends_with(".tbl"));
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".part"))
            .and_then(|n| n.rsplit_once(".tbl."))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !crate::host::process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Checks, before a layer is solved, that its file can be written where
/// it goes (the folder made, its temporary file created and removed), so
/// a read-only folder is named before the work rather than after it.
pub fn check_writable(path: &Path) -> Result<(), FormatError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| FormatError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    NewFile::create(path)
        .map(drop)
        .map_err(|source| FormatError::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// Writes a layer's values into place ([`NewFile`]: a temporary file of
/// its own, renamed over the layer's; removed again when the write fails,
/// as on a full disk).
pub fn write_layer(
    path: &Path,
    variant: Variant,
    layer_name: &str,
    seeds: u32,
    values: &[u16],
) -> Result<(), FormatError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| FormatError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
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
    let written = (|| {
        let mut f = NewFile::create(path)?;
        f.write_all(&head)?;
        f.write_all(&body)?;
        f.commit()
    })();
    written.map_err(|source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The name in a header's 16-byte field (up to the first zero), for
/// messages.
fn field(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Reads a layer's values, checking the header against what is expected
/// and the checksum. `Ok(None)` when the file does not exist. Anything
/// but a regular file of the expected length (a folder, a device, a
/// truncated file) is refused before it is read.
pub fn read_layer(
    path: &Path,
    variant: Variant,
    layer_name: &str,
    positions: u64,
) -> Result<Option<Vec<u16>>, FormatError> {
    let io = |source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bad = |why: String| FormatError::Bad {
        path: path.to_path_buf(),
        why,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io(source)),
    };
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "a special file"
        };
        return Err(bad(format!("{what}, not a table file")));
    }
    let expected = (HEADER as u64).saturating_add(positions.saturating_mul(2));
    if meta.len() < HEADER as u64 {
        return Err(bad(format!(
            "{} bytes: shorter than the {HEADER}-byte header (an empty or cut file)",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(expected.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(bad("no table header (bytes 0..8 are not the magic)".into()));
    }
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
    if bytes[8..24] != padded(variant.name()) || bytes[24..40] != padded(layer_name) {
        return Err(bad(format!(
            "expected the {variant} layer {layer_name}, its header (bytes 8..40) says `{}` layer `{}`",
            field(&bytes[8..24]),
            field(&bytes[24..40])
        )));
    }
    if u64_at(40) != positions {
        return Err(bad(format!(
            "header bytes 40..48: {} positions, expected {positions}",
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
            "{} bytes long, expected {expected} ({} value bytes after the header, expected {}): a cut or padded file",
            meta.len().max(bytes.len() as u64),
            body.len(),
            positions * 2
        )));
    }
    if checksum(body) != u64_at(56) {
        return Err(bad(
            "checksum mismatch: the values (from byte 64) are damaged".into(),
        ));
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

    /// A folder, a device, an empty or cut file, another game's layer:
    /// each refused with what is wrong, never read whole (a symlink to
    /// /dev/zero would never end) and never a panic.
    #[test]
    fn odd_files_are_refused_with_what_is_wrong() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = layer_path(dir.path(), Variant::Diffusion, "n03");
        let values = vec![0u16, 0x4001, 0x8002, 0xC000];
        write_layer(&path, Variant::Diffusion, "n03", 3, &values).expect("written");
        let good = std::fs::read(&path).expect("bytes");
        let why = |p: &Path| {
            read_layer(p, Variant::Diffusion, "n03", 4)
                .expect_err("refused")
                .to_string()
        };
        std::fs::write(&path, &good[..good.len() - 3]).expect("cut");
        let e = why(&path);
        assert!(e.contains("69 bytes long, expected 72"), "{e}");
        std::fs::write(&path, b"").expect("emptied");
        assert!(
            why(&path).contains("0 bytes: shorter than"),
            "{}",
            why(&path)
        );
        std::fs::remove_file(&path).expect("removed");
        std::fs::create_dir(&path).expect("a folder in its place");
        assert!(
            why(&path).contains("a folder, not a table file"),
            "{}",
            why(&path)
        );
        std::fs::remove_dir(&path).expect("removed");
        std::os::unix::fs::symlink("/dev/zero", &path).expect("a symlink");
        assert!(why(&path).contains("a special file"), "{}", why(&path));
        std::fs::remove_file(&path).expect("removed");
        let other = layer_path(dir.path(), Variant::Hackaback, "w1-b01");
        write_layer(&other, Variant::Hackaback, "w1-b01", 2, &values).expect("written");
        std::fs::copy(&other, &path).expect("copied over");
        let e = why(&path);
        assert!(e.contains("says `hackaback` layer `w1-b01`"), "{e}");
        assert!(e.starts_with(&path.display().to_string()), "{e}");
    }

    /// Each build writes under a temporary name of its own, so two builds
    /// of one folder at once do not rename each other's file away; a killed
    /// build's leftover is swept, a running one's is not.
    #[test]
    fn the_temporary_file_is_this_process_s() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = layer_path(dir.path(), Variant::Diffusion, "n03");
        let folder = path.parent().expect("a parent").to_path_buf();
        std::fs::create_dir_all(&folder).expect("folder");
        // A leftover of another build under the old fixed name is not touched.
        let theirs = path.with_extension("tbl.part");
        std::fs::create_dir(&theirs).expect("another build's name taken");
        // Another build writing the same layer at once.
        let running = NewFile::create(&path).expect("another writer");
        write_layer(&path, Variant::Diffusion, "n03", 3, &[0x4001]).expect("written");
        assert!(theirs.is_dir());
        assert!(running.temp().exists());
        let dead = folder.join(format!("n04.tbl.{}.part", u32::MAX));
        std::fs::write(&dead, b"cut").expect("an older version's leftover");
        let dead_new = folder.join(format!(".n05.tbl.{}.0.tmp", u32::MAX));
        std::fs::write(&dead_new, b"cut").expect("a leftover");
        sweep_parts(&folder);
        assert!(!dead.exists() && !dead_new.exists());
        assert!(running.temp().exists());
        drop(running);
        let mut left: Vec<String> = std::fs::read_dir(&folder)
            .expect("listed")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["n03.tbl", "n03.tbl.part"]);
    }
}
