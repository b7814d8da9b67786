//! What went wrong talking to a bot process, in words that say what to do.

use super::sandbox::child::{is_isolate_error, VIEW_FAILED};
use std::path::PathBuf;
use std::process::ExitStatus;

/// What went wrong talking to a bot process.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("cannot start `{command}`: {}", spawn_why(.command, .source))]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    /// The folder the command is to run in does not exist (a league
    /// file's `cwd`, say): not the program's fault, nor the machine's.
    #[error("cannot start `{command}`: its working folder {} does not exist (the bot's `cwd`: create it, or correct the path)", .dir.display())]
    NoFolder { command: String, dir: PathBuf },
    /// The program is a script whose first line (`#!`) names an
    /// interpreter that cannot be run: `on_host` when it exists outside
    /// the bot's sandbox (so the sandbox does not show it); `crlf` when
    /// the line ends with `\r` (Windows line endings), which the system
    /// takes as the name's last character, whatever the interpreter.
    #[error("cannot start `{command}`: {}", interpreter_why(.interpreter, *.on_host, *.crlf))]
    Interpreter {
        command: String,
        interpreter: String,
        on_host: bool,
        crlf: bool,
    },
    #[error("cannot open the stderr log {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no line before the deadline")]
    Timeout,
    /// The process exited (or closed its stdout, `status` then unknown).
    #[error("the bot exited ({})", describe_status(.status))]
    Exited { status: Option<ExitStatus> },
    /// Writing to the bot failed because nothing reads its stdin any more
    /// (it closed stdin or exited): EPIPE. `status` when already known;
    /// `output_closed`: its stdout was closed too.
    #[error("the bot closed its stdin ({})", describe_status(.status))]
    InputClosed {
        status: Option<ExitStatus>,
        output_closed: bool,
    },
    /// While a line was awaited, the bot closed its stdin, seen as it
    /// happened: `unread`, with what was written to it still unread in
    /// the pipe (a request it will never see, so never answer); else
    /// having read it all, given up on by [`BotProcess::read_reply`] (it
    /// can be sent nothing more). `status` when it exited meanwhile.
    ///
    /// [`BotProcess::read_reply`]: super::BotProcess::read_reply
    #[error("the bot closed its stdin ({})", describe_status(.status))]
    InputGone {
        status: Option<ExitStatus>,
        unread: bool,
    },
    /// A line longer than the limit; `start` holds its first bytes.
    #[error("line longer than {limit} bytes")]
    LineTooLong { limit: usize, start: Vec<u8> },
    /// The sandbox could not be set up (no user namespaces, say).
    #[error("cannot start `{command}` in its sandbox: {}", sandbox_why(.source))]
    Sandbox {
        command: String,
        source: std::io::Error,
    },
    /// The command cannot run in the sandbox as written (a bot.toml's
    /// argument names a file the bot would not see); the message says
    /// where it is written and why.
    #[error("{0}")]
    Refused(String),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl BotError {
    /// True when the failure is the machine's, not the bot's: out of
    /// descriptors (EMFILE, ENFILE), processes or memory (EAGAIN, ENOMEM),
    /// disk (ENOSPC, EDQUOT, EIO; EFBIG: the referee's own `ulimit -f`),
    /// or a stderr log that cannot be opened. Such a
    /// failure must never be charged to the bot.
    pub fn is_harness(&self) -> bool {
        let harness = |e: &std::io::Error| {
            matches!(
                e.raw_os_error(),
                Some(
                    libc::EMFILE
                        | libc::ENFILE
                        | libc::EAGAIN
                        | libc::ENOMEM
                        | libc::ENOSPC
                        | libc::EDQUOT
                        | libc::EFBIG
                        | libc::EIO
                )
            )
        };
        match self {
            BotError::Log { .. } | BotError::Sandbox { .. } => true,
            BotError::Spawn { source, .. } => harness(source),
            BotError::Io(e) => harness(e),
            _ => false,
        }
    }
}

/// Why a command did not start: for a bare program name that does not
/// exist, that it is not on `PATH` (a missing compiler, say).
fn spawn_why(command: &str, e: &std::io::Error) -> String {
    let program = command.split(' ').next().unwrap_or_default();
    match e.kind() {
        std::io::ErrorKind::NotFound if !program.contains('/') => format!(
            "`{program}` was not found on PATH ({e}); install it, or name it by its path (`./{program}` for a file in the bot's folder)"
        ),
        // A path: the file is not there (a script whose interpreter is
        // missing is told apart before).
        std::io::ErrorKind::NotFound => format!(
            "`{program}` does not exist ({e}); a relative path is taken from the bot's working folder"
        ),
        std::io::ErrorKind::PermissionDenied if e.raw_os_error() == Some(libc::EACCES) => format!(
            "{e}: if `{program}` is a file of yours, make it executable (chmod +x), or run it through its interpreter (command = [\"python3\", \"bot.py\"])"
        ),
        _ if e.raw_os_error() == Some(libc::ELOOP) => format!(
            "{e}: `{program}` is a symbolic link that leads back to itself, or its path goes through more than 40 of them (`ls -l` each link on the way): point it at the program's file"
        ),
        _ => e.to_string(),
    }
}

/// Why a script's interpreter (its `#!` line) did not run, and what to do.
fn interpreter_why(interpreter: &str, on_host: bool, crlf: bool) -> String {
    if crlf {
        return format!("its first line names the interpreter `{interpreter}\\r`: {CRLF_LINE}");
    }
    match on_host {
        true => format!("its first line names the interpreter `{interpreter}`, which the bot's sandbox does not show (docs/security.md says what a bot sees): name one it sees, or run the script through it (command = [\"python3\", \"bot.py\"])"),
        false => format!("its first line names the interpreter `{interpreter}`, which does not exist: install it, correct the `#!` line, or run the script through an interpreter (command = [\"python3\", \"bot.py\"])"),
    }
}

/// The file `program` (relative to `cwd`) names, when it names one by a
/// path; `None` for a bare name (looked up on `PATH`).
fn program_path(program: &str, cwd: Option<&std::path::Path>) -> Option<PathBuf> {
    if !program.contains('/') {
        return None;
    }
    Some(match cwd {
        Some(dir) => dir.join(program),
        None => PathBuf::from(program),
    })
}

/// The first bytes (at most 256) of the regular file `program` (relative
/// to `cwd`) names by a path.
fn program_head(program: &str, cwd: Option<&std::path::Path>) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(program_path(program, cwd)?).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = vec![0u8; 256];
    let n = f.read(&mut head).ok()?;
    head.truncate(n);
    Some(head)
}

/// Why a program named by a path, that `ls` shows, is "not found" by
/// exec (ENOENT), when its file says: a symbolic link to nothing, or an
/// executable (ELF) whose loader (its `PT_INTERP`, the dynamic linker it
/// was built against: musl's on Alpine, a 32-bit one) this system lacks.
/// `None` when neither (the file is not there at all, say).
pub(crate) fn not_found_why(program: &str, cwd: Option<&std::path::Path>) -> Option<String> {
    let path = program_path(program, cwd)?;
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() && !path.exists() {
        let target = std::fs::read_link(&path).ok()?;
        return Some(format!(
            "`{program}` is a symbolic link to {}, which does not exist (`ls -l {program}`): point it at the program's file, or name the file itself",
            target.display()
        ));
    }
    let loader = elf_loader(&path)?;
    Some(format!(
        "`{program}` is an executable built to be run by the loader {loader} (its dynamic linker), which this system does not have: it was built on another system (musl's loader on Alpine, a 32-bit one); build it here, or link it statically"
    ))
}

/// The loader (`PT_INTERP`) the ELF executable at `path` names, when it
/// names one that does not exist.
fn elf_loader(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut data = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(1 << 20)
        .read_to_end(&mut data)
        .ok()?;
    if !data.starts_with(b"\x7fELF") || data.len() < 64 {
        return None;
    }
    let big = data[5] == 2;
    let at = |off: usize, len: usize| -> Option<u64> {
        let b = data.get(off..off.checked_add(len)?)?;
        Some(b.iter().enumerate().fold(0u64, |n, (i, &x)| {
            let shift = 8 * if big { len - 1 - i } else { i };
            n | u64::from(x) << shift
        }))
    };
    // The header's and a program header's layouts, 64- or 32-bit.
    let (phoff, phentsize, phnum, offset, filesz) = match data[4] {
        2 => (at(32, 8)?, at(54, 2)?, at(56, 2)?, (8, 8), (32, 8)),
        _ => (at(28, 4)?, at(42, 2)?, at(44, 2)?, (4, 4), (16, 4)),
    };
    for k in 0..phnum {
        let ph = usize::try_from(phoff.checked_add(k.checked_mul(phentsize)?)?).ok()?;
        if at(ph, 4)? != 3 {
            continue; // not PT_INTERP
        }
        let start = usize::try_from(at(ph + offset.0, offset.1)?).ok()?;
        let len = usize::try_from(at(ph + filesz.0, filesz.1)?).ok()?;
        let name = data.get(start..start.checked_add(len)?)?;
        let name = String::from_utf8_lossy(name.split(|&b| b == 0).next()?).into_owned();
        return (!std::path::Path::new(&name).exists()).then_some(name);
    }
    None
}

/// What a `#!` line ending with `\r` is told (a script saved with
/// Windows line endings).
const CRLF_LINE: &str = "the line ends with a carriage return (`\\r`, a Windows line ending), which the system takes as the last character of the interpreter's name: save the file with Unix line endings (`\\n` alone: `dos2unix FILE`, or the editor's line-ending setting)";

/// The `#!` line of the script `program` (relative to `cwd`), without its
/// `#!` and its `\n`; `None` when the program is no such script.
fn shebang(program: &str, cwd: Option<&std::path::Path>) -> Option<Vec<u8>> {
    let head = program_head(program, cwd)?;
    let line = head.strip_prefix(b"#!")?;
    line.split(|&b| b == b'\n').next().map(<[u8]>::to_vec)
}

/// The interpreter a script's first line names (`#!/usr/bin/env python3`:
/// `/usr/bin/env`), when `program` (relative to `cwd`) is such a script;
/// with whether that line ends with `\r` (Windows line endings).
pub(crate) fn script_interpreter(
    program: &str,
    cwd: Option<&std::path::Path>,
) -> Option<(String, bool)> {
    let line = shebang(program, cwd)?;
    let text = String::from_utf8_lossy(&line);
    let interpreter = text.split_whitespace().next()?.to_string();
    Some((interpreter, line.ends_with(b"\r")))
}

/// For a program that was started and failed at once (before its hello),
/// what about its file says why, when something does: a file without a
/// `#!` line (and not a binary), which exec refuses, and the system then
/// runs with `/bin/sh` instead (glibc's `execvp`), failing on anything but
/// a shell script in the shell's words (`import: not found`), not the
/// file's; a `#!` line behind a byte-order mark (the same, though the
/// line is there); a `#!` line ending with `\r`, whose interpreter
/// (`env`) is run and fails to find `python3\r`; a program built for
/// another machine or system (run by `/bin/sh` too, as garbage). What to
/// do, said of `program` (relative to `cwd`); `None` for any other
/// program.
pub fn failed_start_note(program: &str, cwd: Option<&std::path::Path>) -> Option<String> {
    let head = program_head(program, cwd)?;
    if let Some(line) = shebang(program, cwd) {
        return line.ends_with(b"\r").then(|| {
            format!(
                "its program {program} begins with the line `#!{}`: {CRLF_LINE}",
                crate::protocol::truncate(&line, 80)
            )
        });
    }
    if let Some(what) = foreign_binary(&head) {
        return Some(format!(
            "its program {program} is {what}, which this machine ({} Linux) cannot run: build it for this machine (on it, or cross-compiled for {} Linux)",
            std::env::consts::ARCH,
            std::env::consts::ARCH
        ));
    }
    if head.starts_with(b"\x7fELF") {
        return None;
    }
    if head.starts_with(b"\xEF\xBB\xBF#!") {
        return Some(format!(
            "its program {program} begins with a byte-order mark (U+FEFF, the bytes EF BB BF) before its `#!` line, so the system does not see that line and ran the file with /bin/sh as a shell script: save it as UTF-8 without a byte-order mark"
        ));
    }
    Some(format!(
        "its program {program} has no `#!` line naming its interpreter, so the system ran it with /bin/sh as a shell script: begin it with one (`#!/usr/bin/env python3`), or run it through its interpreter (command = [\"python3\", \"bot.py\"])"
    ))
}

/// What a program's first bytes `head` say it is, when that is a program
/// this machine cannot run: an ELF executable for another processor, a
/// macOS (Mach-O) or Windows (PE) program. `None` for anything else.
fn foreign_binary(head: &[u8]) -> Option<String> {
    const MACH_O: [[u8; 4]; 5] = [
        [0xCF, 0xFA, 0xED, 0xFE],
        [0xCE, 0xFA, 0xED, 0xFE],
        [0xFE, 0xED, 0xFA, 0xCF],
        [0xFE, 0xED, 0xFA, 0xCE],
        [0xCA, 0xFE, 0xBA, 0xBE],
    ];
    if MACH_O.iter().any(|m| head.starts_with(m)) {
        return Some("a macOS program (Mach-O)".into());
    }
    if head.starts_with(b"MZ") {
        return Some("a Windows program (PE, an .exe)".into());
    }
    if !head.starts_with(b"\x7fELF") || head.len() < 20 {
        return None;
    }
    let machine = match head[5] {
        2 => u16::from_be_bytes([head[18], head[19]]),
        _ => u16::from_le_bytes([head[18], head[19]]),
    };
    let arch = match machine {
        3 => "x86",
        8 => "mips",
        20 => "powerpc",
        21 => "powerpc64",
        22 => "s390x",
        40 => "arm",
        62 => "x86_64",
        183 => "aarch64",
        243 => "riscv64",
        258 => "loongarch64",
        _ => "",
    };
    // A 32-bit program of the same family may run (where its libraries
    // are installed): its failure is told otherwise.
    let host = std::env::consts::ARCH;
    if arch == host || matches!((arch, host), ("x86", "x86_64") | ("arm", "aarch64")) {
        return None;
    }
    Some(match arch {
        "" => format!("an executable (ELF) for another processor (machine number {machine})"),
        arch => format!("an executable (ELF) for {arch}"),
    })
}

/// The folder `program` (relative to `cwd`) names, when it names one: a
/// bot.toml's or a league's `command = ["./src"]` where the program is a
/// file inside it. `None` for a bare name (looked up on `PATH`).
pub(crate) fn program_folder(program: &str, cwd: Option<&std::path::Path>) -> Option<PathBuf> {
    program_path(program, cwd).filter(|path| path.is_dir())
}

/// The error of a command whose program is the folder `folder` (exec's
/// own, EACCES, would send the bot's author looking for a missing execute
/// bit).
pub(crate) fn folder_not_program(folder: &std::path::Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "{} is a folder, not a program: name the program file in it (command = [\"./bot\"]), or its interpreter and script (command = [\"python3\", \"bot.py\"])",
            folder.display()
        ),
    )
}

/// Why a sandbox could not be set up, and what to do.
fn sandbox_why(e: &std::io::Error) -> String {
    const OFF: &str = "or run without it: `sandbox = \"off\"` in the league file, `--sandbox off` on the command line (docs/security.md)";
    if e.raw_os_error() == Some(VIEW_FAILED) {
        format!("its root (the folders it may see) could not be built; the bot's stderr log names the step that failed (a folder that cannot be mounted, say); {OFF}")
    } else if is_isolate_error(e) {
        format!("no user namespace can be made here. The sandbox needs them (Linux: sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone = 1 where it exists; in a container, allow unshare and mount); {OFF}")
    } else {
        format!("{e}; {OFF}")
    }
}

/// "status 3", "signal 9, SIGKILL", "unknown status".
pub fn describe_status(status: &Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("status {c}"),
            (None, Some(sig)) => match signal_name(sig) {
                Some(name) => format!("signal {sig}, {name}"),
                None => format!("signal {sig}"),
            },
            _ => "unknown status".into(),
        },
        None => "stdout closed".into(),
    }
}

/// The name of a signal a bot's process may die of (the kernel's, as
/// `kill -l` says them), so that "signal 11" reads as the crash it is.
fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL: an illegal instruction",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT: the program aborted (a failed assertion, an uncaught exception)",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE: an arithmetic error (a division by zero)",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV: a segmentation fault",
        libc::SIGPIPE => "SIGPIPE: it wrote to a closed pipe",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU: its CPU time limit",
        libc::SIGXFSZ => "SIGXFSZ: its file size limit",
        libc::SIGSYS => "SIGSYS: a bad system call",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    /// A signal is said by its number and its name.
    #[test]
    fn a_signal_is_named() {
        use std::os::unix::process::ExitStatusExt;
        let killed = Some(std::process::ExitStatus::from_raw(libc::SIGSEGV));
        assert_eq!(
            super::describe_status(&killed),
            "signal 11, SIGSEGV: a segmentation fault"
        );
        let exited = Some(std::process::ExitStatus::from_raw(3 << 8));
        assert_eq!(super::describe_status(&exited), "status 3");
    }
}
