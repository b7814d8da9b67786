//! Standard output for the commands whose output is their product.

/// Writes `text` to standard output, for the commands whose output is
/// their product (a table, JSON, a path): a reader that went away (`|
/// head`) ends nothing but the output; any other write error (a full
/// disk, `> /dev/full`) is an error naming `what` was being written, not
/// a panic nor a success.
pub(crate) fn emit(text: &str, what: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context(format!("writing {what} to standard output")))
        }
        _ => Ok(()),
    }
}
