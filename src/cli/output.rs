//! Standard output for the commands whose output is their product, and
//! an error in the words the command line prints it with.

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

/// The error and its causes, each cause once: library errors often show
/// their source in their own message already.
pub(crate) fn error_message(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}
