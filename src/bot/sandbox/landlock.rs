//! Landlock, the second wall behind the mount view (issue 28, item 5): a
//! bot may reach the files under the paths it is given and nothing else,
//! may not bind or connect TCP (ABI 4+), and its abstract unix sockets and
//! signals stay within its own domain (ABI 6+).
//!
//! A [`Wall`] is prepared before the fork (paths as `CString`s, access
//! masks chosen for the kernel's ABI); [`Wall::restrict`] runs in the child
//! between fork and exec, after its root is in place, with raw system calls
//! on plain values: no allocation, no lock. That is why this is not the
//! `landlock` crate: its ruleset builder allocates and opens paths itself
//! (`PathFd::new` makes a `CString`, errors are boxed), which is not allowed
//! between fork and exec in a multi-threaded program such as the referee.
//!
//! The structures and constants are those of <linux/landlock.h>; the
//! kernel takes a larger `landlock_ruleset_attr` than it knows as long as
//! the fields it does not know are zero, so one struct serves every ABI.

use std::ffi::CString;

/// `struct landlock_ruleset_attr`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
#[derive(Debug, Clone, Copy)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

const CREATE_RULESET_VERSION: libc::c_uint = 1 << 0;
const RULE_PATH_BENEATH: libc::c_int = 1;

// LANDLOCK_ACCESS_FS_*.
const FS_EXECUTE: u64 = 1 << 0;
const FS_WRITE_FILE: u64 = 1 << 1;
const FS_READ_FILE: u64 = 1 << 2;
const FS_READ_DIR: u64 = 1 << 3;
/// ABI 1: from EXECUTE (bit 0) to MAKE_SYM (bit 12).
const FS_ABI1: u64 = (1 << 13) - 1;
/// ABI 2.
const FS_REFER: u64 = 1 << 13;
/// ABI 3.
const FS_TRUNCATE: u64 = 1 << 14;
/// ABI 5.
const FS_IOCTL_DEV: u64 = 1 << 15;
/// The rights that mean something on a file that is not a folder (the
/// kernel refuses a rule that gives a file any other).
const FS_FILE: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
/// Reading and running: what a read-only path gives.
const FS_READ: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;

// LANDLOCK_ACCESS_NET_* (ABI 4).
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;

// LANDLOCK_SCOPE_* (ABI 6).
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// The Landlock ABI this kernel offers: 0 where it has none (not built in,
/// or not enabled among the LSMs). Callable before the fork.
pub fn abi() -> u32 {
    // SAFETY: a NULL attribute with size 0 and the VERSION flag only asks
    // for the ABI number.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(r).unwrap_or(0)
}

/// What the bot may do under a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read, list and run.
    ReadOnly,
    /// Everything the ABI handles: also write, create, remove, rename,
    /// truncate, and device ioctls.
    ReadWrite,
}

/// One path, as it will appear inside the bot's new root.
#[derive(Debug, Clone)]
pub struct Rule {
    pub path: CString,
    pub access: Access,
}

impl Rule {
    pub fn new(path: CString, access: Access) -> Rule {
        Rule { path, access }
    }
}

/// A Landlock ruleset prepared before the fork and applied in the child by
/// [`Wall::restrict`].
#[derive(Debug, Clone)]
pub struct Wall {
    abi: u32,
    attr: RulesetAttr,
    rules: Vec<Rule>,
}

/// The file-system rights that `abi` handles.
fn fs_handled(abi: u32) -> u64 {
    let mut fs = FS_ABI1;
    if abi >= 2 {
        fs |= FS_REFER;
    }
    if abi >= 3 {
        fs |= FS_TRUNCATE;
    }
    if abi >= 5 {
        fs |= FS_IOCTL_DEV;
    }
    fs
}

impl Wall {
    /// A wall for this kernel's ABI ([`abi`]): the bot may reach what is
    /// under `rules` with their access, and no other file; TCP bind and
    /// connect are handled with no rule, so denied (ABI 4+); abstract unix
    /// sockets and signals are scoped to the bot's domain (ABI 6+).
    pub fn new(rules: Vec<Rule>) -> Wall {
        Wall::with_abi(abi(), rules)
    }

    /// As [`Wall::new`], but using at most ABI `at_most` (for a test, or to
    /// leave a newer ABI's restrictions out); never more than the kernel's.
    pub fn with_abi(at_most: u32, rules: Vec<Rule>) -> Wall {
        let abi = at_most.min(abi());
        let attr = if abi == 0 {
            RulesetAttr::default()
        } else {
            RulesetAttr {
                handled_access_fs: fs_handled(abi),
                handled_access_net: if abi >= 4 {
                    NET_BIND_TCP | NET_CONNECT_TCP
                } else {
                    0
                },
                scoped: if abi >= 6 {
                    SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
                } else {
                    0
                },
            }
        };
        Wall { abi, attr, rules }
    }

    /// The same wall with `dir` writable too (a build's own folder).
    pub fn writable(mut self, dir: Option<&std::path::Path>) -> std::io::Result<Wall> {
        if let Some(dir) = dir {
            use std::os::unix::ffi::OsStrExt;
            let path = CString::new(dir.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
            self.rules.push(Rule::new(path, Access::ReadWrite));
        }
        Ok(self)
    }

    /// The same wall with TCP left alone (a build the league lets use the
    /// network).
    pub fn with_network(mut self) -> Wall {
        self.attr.handled_access_net = 0;
        self
    }

    /// The ABI [`Wall::restrict`] will use: 0 when Landlock is missing.
    pub fn abi(&self) -> u32 {
        self.abi
    }

    /// What this wall puts in force, for a bot's log (see [`describe`]),
    /// with its writable paths named.
    pub fn describe(&self) -> String {
        let writable: Vec<String> = self
            .rules
            .iter()
            .filter(|r| r.access == Access::ReadWrite)
            .map(|r| r.path.to_string_lossy().into_owned())
            .collect();
        describe_with(self.abi, &writable)
    }

    /// Restricts the calling thread, and what it will exec, to this wall:
    /// creates the ruleset, adds each path (`open(O_PATH)`, add, close; a
    /// path that does not exist is left out: nothing is reachable through
    /// it), then `PR_SET_NO_NEW_PRIVS` and `landlock_restrict_self`.
    /// `Ok(abi)` with the ABI in force (`Ok(0)`: Landlock is missing and
    /// nothing was done), or the errno of the call that failed.
    ///
    /// # Safety
    /// Meant for the child between fork and exec, after its root is in
    /// place: only system calls on memory made before the fork
    /// (async-signal-safe). Landlock calls must come before a seccomp
    /// filter that denies them ([`super::seccomp`] does).
    pub unsafe fn restrict(&self) -> Result<u32, i32> {
        if self.abi == 0 {
            return Ok(0);
        }
        // SAFETY: `self.attr` is a plain value of the size given.
        let ruleset = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &self.attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0 as libc::c_uint,
            )
        };
        if ruleset < 0 {
            return Err(errno());
        }
        let ruleset = ruleset as libc::c_int;
        let fail = |e: i32| {
            // SAFETY: closing the ruleset descriptor we opened.
            unsafe { libc::close(ruleset) };
            Err(e)
        };
        let handled = self.attr.handled_access_fs;
        for rule in &self.rules {
            // SAFETY: a NUL-terminated path made before the fork.
            let fd = unsafe { libc::open(rule.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            if fd < 0 {
                let e = errno();
                if e == libc::ENOENT {
                    continue;
                }
                return fail(e);
            }
            // SAFETY: fstat into a zeroed plain struct on the stack.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `fd` is ours; `st` is a valid out-pointer.
            if unsafe { libc::fstat(fd, &mut st) } != 0 {
                let e = errno();
                // SAFETY: closing our own descriptor.
                unsafe { libc::close(fd) };
                return fail(e);
            }
            let wanted = match rule.access {
                Access::ReadOnly => FS_READ,
                Access::ReadWrite => handled,
            };
            let mut allowed = wanted & handled;
            if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                allowed &= FS_FILE;
            }
            let beneath = PathBeneathAttr {
                allowed_access: allowed,
                parent_fd: fd,
            };
            // SAFETY: a plain value for the call; the kernel copies it.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    RULE_PATH_BENEATH,
                    &beneath as *const PathBeneathAttr,
                    0 as libc::c_uint,
                )
            };
            let e = errno();
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            if r != 0 {
                return fail(e);
            }
        }
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return fail(errno());
        }
        // SAFETY: our ruleset descriptor, no flags.
        let r =
            unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as libc::c_uint) };
        if r != 0 {
            return fail(errno());
        }
        // SAFETY: the ruleset is in force; its descriptor is no longer needed.
        unsafe { libc::close(ruleset) };
        Ok(self.abi)
    }
}

/// The calling thread's errno, read without allocating.
fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// One sentence on what Landlock at `abi` puts in force, for logs, `arena
/// bots` and `check-bot` (writable paths unnamed: see [`Wall::describe`]).
pub fn describe(abi: u32) -> String {
    describe_with(abi, &[])
}

fn describe_with(abi: u32, writable: &[String]) -> String {
    if abi == 0 {
        return "Landlock not available in this kernel: the mount view alone limits files, \
                and the network namespace alone TCP"
            .to_string();
    }
    let files = if writable.is_empty() {
        "files read-only but the writable paths".to_string()
    } else {
        format!("files read-only but {}", writable.join(", "))
    };
    match abi {
        1..=3 => format!(
            "Landlock ABI {abi}: {files}; TCP is left to the network namespace (ABI 4 needed), \
             abstract unix sockets and signals are not scoped (ABI 6 needed)"
        ),
        4 | 5 => format!(
            "Landlock ABI {abi}: {files}; TCP bind and connect denied; abstract unix sockets \
             and signals are not scoped (ABI 6 needed)"
        ),
        _ => format!(
            "Landlock ABI {abi}: {files}; TCP bind and connect denied; abstract unix sockets \
             and signals scoped to the bot"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::path::Path;

    fn c(p: &Path) -> CString {
        CString::new(p.to_str().unwrap()).unwrap()
    }

    /// `/` read-only, `own` and /dev/null read-write.
    fn rules(own: &Path) -> Vec<Rule> {
        vec![
            Rule::new(c"/".into(), Access::ReadOnly),
            Rule::new(c(own), Access::ReadWrite),
            Rule::new(c"/dev/null".into(), Access::ReadWrite),
            Rule::new(c"/no/such/path".into(), Access::ReadWrite),
        ]
    }

    /// Runs `call` in a forked child, behind `wall` when given: `Ok(())`
    /// or the errno. `call` makes raw system calls on memory made before.
    fn probe(wall: Option<&Wall>, call: &dyn Fn() -> libc::c_long) -> Result<(), i32> {
        // SAFETY: the child makes only raw system calls and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: as above; 255: the wall could not be raised.
            unsafe {
                if let Some(w) = wall {
                    if w.restrict().is_err() {
                        libc::_exit(255);
                    }
                }
                let r = call();
                libc::_exit(if r < 0 { errno() } else { 0 });
            }
        }
        let mut status = 0;
        // SAFETY: our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "probe killed: {status:#x}");
        match libc::WEXITSTATUS(status) {
            0 => Ok(()),
            255 => panic!("landlock_restrict_self failed"),
            e => Err(e),
        }
    }

    fn create(path: &CString) -> impl Fn() -> libc::c_long + '_ {
        move || {
            // SAFETY: open with a path made before the fork.
            unsafe {
                libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o600,
                ) as libc::c_long
            }
        }
    }

    fn kernel_abi() -> Option<u32> {
        let abi = abi();
        println!("{}", describe(abi));
        if abi == 0 {
            println!("SKIPPED: this kernel has no Landlock");
            return None;
        }
        Some(abi)
    }

    #[test]
    fn descriptions_say_what_is_in_force() {
        assert!(describe(0).contains("not available"));
        assert!(describe(3).contains("ABI 4 needed"));
        assert!(describe(4).contains("TCP bind and connect denied"));
        assert!(describe(6).contains("signals scoped"));
        let w = Wall::with_abi(6, rules(Path::new("/tmp")));
        if w.abi() >= 6 {
            assert!(w.describe().contains("read-only but /tmp, /dev/null"));
        }
    }

    /// At every ABI the kernel has: a file in the walled child's own
    /// folder can be made, one in another folder cannot (EACCES), and it
    /// still reads under `/`. Without the wall both are made.
    #[test]
    fn a_walled_child_writes_in_its_own_folder_only() {
        let Some(kernel) = kernel_abi() else { return };
        for at in 1..=kernel {
            let own = tempfile::tempdir().unwrap();
            let other = tempfile::tempdir().unwrap();
            let wall = Wall::with_abi(at, rules(own.path()));
            assert_eq!(wall.abi(), at);
            let mine = c(&own.path().join("mine"));
            let theirs = c(&other.path().join("theirs"));
            assert_eq!(probe(Some(&wall), &create(&mine)), Ok(()), "ABI {at}");
            assert_eq!(
                probe(Some(&wall), &create(&theirs)),
                Err(libc::EACCES),
                "ABI {at}"
            );
            assert!(!other.path().join("theirs").exists());
            let readable = c"/etc/passwd";
            let read = || {
                // SAFETY: open of a constant path.
                unsafe { libc::open(readable.as_ptr(), libc::O_RDONLY) as libc::c_long }
            };
            assert_eq!(probe(Some(&wall), &read), Ok(()), "ABI {at}");
            // The same without the wall: the probe can tell.
            assert_eq!(probe(None, &create(&theirs)), Ok(()));
        }
    }

    /// A real program: `sh` behind the wall writes its own folder, is
    /// refused another, and writes /dev/null.
    #[test]
    fn a_shell_behind_the_wall() {
        let Some(_) = kernel_abi() else { return };
        let own = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let wall = Wall::new(rules(own.path()));
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args([
            "-c",
            r#"echo a > "$0/a"; echo own=$?; echo b > "$1/b"; echo other=$?; echo c > /dev/null; echo null=$?"#,
        ])
        .arg(own.path())
        .arg(other.path());
        let w = wall.clone();
        // SAFETY: restrict makes system calls on memory built before the
        // fork (async-signal-safe).
        unsafe {
            cmd.pre_exec(move || {
                w.restrict()
                    .map(|_| ())
                    .map_err(std::io::Error::from_raw_os_error)
            });
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        println!("{stdout}{stderr}");
        assert!(stdout.contains("own=0\n"), "{stdout}");
        assert!(!stdout.contains("other=0\n"), "{stdout}");
        assert!(stderr.contains("Permission denied"), "{stderr}");
        assert!(stdout.contains("null=0\n"), "{stdout}");
        assert!(own.path().join("a").exists());
        assert!(!other.path().join("b").exists());
    }

    /// From ABI 4: TCP connect is denied (EACCES) behind the wall, to a
    /// listener of the test on the loopback that the bare child reaches.
    #[test]
    fn tcp_connect_is_denied() {
        let Some(kernel) = kernel_abi() else { return };
        if kernel < 4 {
            println!("SKIPPED: Landlock ABI {kernel} does not handle TCP");
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let connect = || {
            // SAFETY: a socket and a sockaddr made before the fork.
            unsafe {
                let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                libc::connect(
                    s,
                    (&addr as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                ) as libc::c_long
            }
        };
        let own = tempfile::tempdir().unwrap();
        let wall = Wall::new(rules(own.path()));
        assert_eq!(probe(None, &connect), Ok(()));
        assert_eq!(probe(Some(&wall), &connect), Err(libc::EACCES));
    }

    /// From ABI 6: the walled child cannot signal a process outside its
    /// domain (its parent, the test), which the bare child can.
    #[test]
    fn signals_are_scoped() {
        let Some(kernel) = kernel_abi() else { return };
        if kernel < 6 {
            println!("SKIPPED: Landlock ABI {kernel} does not scope signals");
            return;
        }
        let signal_parent = || {
            // SAFETY: signal 0 only checks that a signal may be sent.
            unsafe { libc::kill(libc::getppid(), 0) as libc::c_long }
        };
        let own = tempfile::tempdir().unwrap();
        let wall = Wall::new(rules(own.path()));
        assert_eq!(probe(None, &signal_parent), Ok(()));
        assert_eq!(probe(Some(&wall), &signal_parent), Err(libc::EPERM));
    }
}
