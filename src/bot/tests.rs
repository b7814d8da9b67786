//! The bot runner against real `sh` processes.

use super::*;
use crate::host::process_alive;
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;

/// A launch as the tests need it: 64 KiB lines, an optional log.
fn spawn_with(
    cmd: BotCommand,
    log: Option<&Path>,
    limits: &Limits,
) -> Result<BotProcess, BotError> {
    let mut launch = Launch::new(cmd, limits.clone());
    launch.stderr_log = log.map(Path::to_path_buf);
    BotProcess::spawn(&launch)
}

fn limits() -> Limits {
    Limits::new(64 * 1024)
}

fn sh(script: &str) -> BotCommand {
    BotCommand::from_words(&["sh", "-c", script]).unwrap()
}

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

#[tokio::test]
async fn echo_round_trip() {
    let mut p = spawn_with(sh("cat"), None, &limits()).unwrap();
    p.send_line(b"hello\n", soon(5000)).await.unwrap();
    assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"hello");
    p.send_line(b"two\n", soon(5000)).await.unwrap();
    assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"two");
    let s = p.shutdown(Duration::from_millis(500)).await;
    assert_eq!(s.and_then(|s| s.code()), Some(0));
}

#[tokio::test]
async fn last_line_before_exit_is_kept() {
    the_last_line_before_an_exit_is_read_then_the_exit().await;
}

/// A bot that writes a line and exits 3: the line is read, then the exit
/// with its status.
async fn the_last_line_before_an_exit_is_read_then_the_exit() {
    let mut p = spawn_with(sh("echo bye; exit 3"), None, &limits()).unwrap();
    assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"bye");
    match p.read_line(soon(5000)).await {
        Err(BotError::Exited { status }) => {
            assert_eq!(status.and_then(|s| s.code()), Some(3))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn long_line_is_refused() {
    let limits = Limits {
        max_line: 100,
        ..limits()
    };
    let mut p = spawn_with(
        sh("head -c 1000000 /dev/zero | tr '\\0' x; sleep 100"),
        None,
        &limits,
    )
    .unwrap();
    match p.read_line(soon(10_000)).await {
        Err(BotError::LineTooLong { limit, start }) => {
            assert_eq!(limit, 100);
            assert!(start.iter().all(|&b| b == b'x'));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn silent_bot_times_out_and_group_dies() {
    let mut p = spawn_with(sh("sleep 100 & sleep 100"), None, &limits()).unwrap();
    let pid = p.pid();
    assert!(matches!(
        p.read_line(soon(50)).await,
        Err(BotError::Timeout)
    ));
    assert!(group_alive(pid));
    p.shutdown(Duration::from_millis(50)).await;
    wait_group_gone(pid).await;
}

#[tokio::test]
async fn drop_kills_the_group() {
    let p = spawn_with(sh("sleep 100 & sleep 100"), None, &limits()).unwrap();
    let pid = p.pid();
    drop(p);
    wait_group_gone(pid).await;
}

#[tokio::test]
async fn stderr_goes_to_capped_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bot.log");
    let limits = Limits {
        stderr_cap: 1000,
        ..limits()
    };
    let mut p = spawn_with(
        sh("head -c 100000 /dev/zero >&2; echo done"),
        Some(&log),
        &limits,
    )
    .unwrap();
    assert_eq!(p.read_line(soon(10_000)).await.unwrap(), b"done");
    p.shutdown(Duration::from_millis(500)).await;
    let len = std::fs::metadata(&log).unwrap().len();
    assert!((1000..1200).contains(&len), "log length {len}");
}

/// Blank lines do not move the deadline: with a thousand blank lines and
/// then a reply already waiting, a read whose deadline has passed times out
/// instead of skipping to the reply (a flooding bot could otherwise answer
/// whenever it liked: the pipe always has data, so the timer never wins).
#[tokio::test]
async fn blank_lines_do_not_move_the_deadline() {
    // One write of under 4 KiB: it arrives whole, after "go".
    let script = format!("printf 'go\\n{}late\\n'; sleep 100", "\\n".repeat(1000));
    let mut p = spawn_with(sh(&script), None, &limits()).unwrap();
    assert_eq!(p.read_line(soon(10_000)).await.unwrap(), b"go");
    match p.read_line(Instant::now()).await {
        Err(BotError::Timeout) => {}
        other => panic!("{other:?}"),
    }
}

/// The line limit counts the message, not its ending: LF and CRLF alike.
#[tokio::test]
async fn the_line_limit_excludes_the_crlf_ending() {
    let limits = Limits {
        max_line: 100,
        ..limits()
    };
    let script = format!(
        "printf '{x}\\r\\n{x}\\n{x}x\\r\\n'; sleep 100",
        x = "x".repeat(100)
    );
    let mut p = spawn_with(sh(&script), None, &limits).unwrap();
    let mut crlf = "x".repeat(100).into_bytes();
    crlf.push(b'\r');
    assert_eq!(p.read_line(soon(10_000)).await.unwrap(), &crlf[..]);
    assert_eq!(
        p.read_line(soon(10_000)).await.unwrap(),
        "x".repeat(100).as_bytes()
    );
    match p.read_line(soon(10_000)).await {
        Err(BotError::LineTooLong { limit: 100, .. }) => {}
        other => panic!("{other:?}"),
    }
}

/// Processes launched with one stderr budget share it: restarts do not
/// renew it.
#[tokio::test]
async fn a_stderr_budget_is_shared_by_every_process_of_a_bot() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bot.log");
    let budget = StderrBudget::new(1500);
    for _ in 0..3 {
        let mut launch =
            Launch::new(sh("head -c 1000 /dev/zero >&2; echo done"), limits()).log_to(&log);
        launch.stderr_budget = Some(budget.clone());
        let mut p = BotProcess::spawn(&launch).unwrap();
        assert_eq!(p.read_line(soon(10_000)).await.unwrap(), b"done");
        p.shutdown(Duration::from_millis(500)).await;
    }
    let text = std::fs::read(&log).unwrap();
    let zeros = text.iter().filter(|&&b| b == 0).count();
    assert_eq!(zeros, 1500, "kept bytes across three processes");
    let notes = String::from_utf8_lossy(&text)
        .matches("stderr budget for the league is spent")
        .count();
    assert_eq!(notes, 2, "one note per process that was cut");
}

#[tokio::test]
async fn blank_lines_are_skipped() {
    let mut p = spawn_with(
        sh("printf '\\n \\r\\n\\t\\nx\\r\\n'; sleep 100"),
        None,
        &limits(),
    )
    .unwrap();
    assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"x\r");
}

#[tokio::test]
async fn stray_output_is_seen_without_waiting() {
    // Two lines in one write: the second is already buffered after the
    // first is read; blank lines alone are not stray.
    let mut p = spawn_with(
        sh("read a; printf 'one\\ntwo\\n'; read b; printf '\\n\\r\\n'; read c; exec sleep 100"),
        None,
        &limits(),
    )
    .unwrap();
    p.send_line(b"go\n", soon(5000)).await.unwrap();
    assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"one");
    assert_eq!(p.stray_output().unwrap(), Some(b"two\n".to_vec()));
    assert_eq!(p.stray_output().unwrap(), None);
    p.send_line(b"go\n", soon(5000)).await.unwrap();
    // Wait for the blank lines to arrive: a read skips them and times out.
    assert!(matches!(
        p.read_line(soon(100)).await,
        Err(BotError::Timeout)
    ));
    assert_eq!(p.stray_output().unwrap(), None);
    assert!(!p.has_exited());
}

#[tokio::test]
async fn closed_stdout_and_exit_are_noticed() {
    let mut p = spawn_with(sh("exec 1>&-; read a; exit 0"), None, &limits()).unwrap();
    // The read sees end of file at once, although the process still runs.
    match p.read_line(soon(5000)).await {
        Err(BotError::Exited { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(p.stray_output(), Err(BotError::Exited { .. })));
    let q = spawn_with(sh("exit 0"), None, &limits()).unwrap();
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while !q.has_exited() {
        assert!(std::time::Instant::now() < end, "exit not noticed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_bot_that_does_not_read_cannot_block_a_write() {
    let mut p = spawn_with(sh("exec sleep 100"), None, &limits()).unwrap();
    // Far more than a pipe holds (64 KiB).
    let mut big = vec![b'x'; 1 << 20];
    big.push(b'\n');
    let t = std::time::Instant::now();
    assert!(matches!(
        p.send_line(&big, soon(100)).await,
        Err(BotError::Timeout)
    ));
    assert!(t.elapsed() < Duration::from_secs(3));
    let pid = p.pid();
    p.shutdown(Duration::from_millis(50)).await;
    wait_group_gone(pid).await;
}

#[tokio::test]
async fn a_closed_stdin_is_a_broken_pipe_not_a_signal() {
    let mut p = spawn_with(sh("exec 0<&-; exec sleep 100"), None, &limits()).unwrap();
    // Until the shell has closed it, writes may still land in the pipe.
    let end = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match p.send_line(b"x\n", soon(1000)).await {
            Ok(()) => {}
            Err(BotError::InputClosed { .. }) => break,
            Err(e) => panic!("{e:?}"),
        }
        assert!(std::time::Instant::now() < end, "EPIPE never seen");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_descendant_that_leaves_the_group_is_killed_too() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "setsid sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 100' & exec sleep 100",
        pidfile.display()
    );
    // Outside the sandbox: the pid it writes is the host's.
    let launch = Launch::new(sh(&script), limits()).sandboxed(Sandbox::Off);
    let mut p = BotProcess::spawn(&launch).unwrap();
    let token = p.token().to_string();
    let end = std::time::Instant::now() + Duration::from_secs(5);
    let escaped: u32 = loop {
        if let Ok(s) = std::fs::read_to_string(&pidfile) {
            break s.trim().parse().unwrap();
        }
        assert!(std::time::Instant::now() < end, "no grandchild");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(process_alive(escaped));
    wait_token_seen(&token).await;
    let pid = p.pid();
    p.shutdown(Duration::from_millis(50)).await;
    wait_group_gone(pid).await;
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while process_alive(escaped) || token_alive(&token) {
        assert!(std::time::Instant::now() < end, "escaped grandchild alive");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// In the sandbox a descendant that leaves the group dies with the bot too,
/// without the token's scan: the bot's namespace's init exits when the bot
/// dies, and the kernel ends the namespace's other processes then.
#[tokio::test]
async fn a_sandboxed_descendant_that_leaves_the_group_dies_with_the_bot() {
    let script = "setsid sh -c 'exec sleep 100' & echo ready; exec sleep 100";
    let mut p = spawn_with(sh(script), None, &limits()).unwrap();
    assert_eq!(p.read_line(soon(10_000)).await.unwrap(), b"ready");
    let token = p.token().to_string();
    wait_token_seen(&token).await;
    let pid = p.pid();
    p.shutdown(Duration::from_millis(50)).await;
    wait_group_gone(pid).await;
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while token_alive(&token) {
        assert!(
            std::time::Instant::now() < end,
            "a descendant outlived the bot"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits (with a deadline) until a process with `token` is seen: a process
/// in the middle of an exec can show an empty environment for a moment.
async fn wait_token_seen(token: &str) {
    let end = Instant::now() + Duration::from_secs(10);
    while !token_alive(token) {
        assert!(Instant::now() < end, "no process carries the token {token}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits (with a deadline, not a fixed sleep) until the group is gone.
pub(crate) async fn wait_group_gone(pid: u32) {
    let end = Instant::now() + Duration::from_secs(5);
    while group_alive(pid) {
        assert!(Instant::now() < end, "process group {pid} still alive");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Scratch folders of referees that no longer live (killed with SIGKILL)
/// are swept; those of live referees, ours included, are not.
#[test]
fn leftovers_of_dead_referees_are_swept() {
    let tmp = std::env::temp_dir();
    let dead = tmp.join("arena-scratch-4194000-1");
    let ours = tmp.join(format!("arena-scratch-{}-999999", std::process::id()));
    std::fs::create_dir_all(dead.join("inside")).unwrap();
    std::fs::create_dir_all(&ours).unwrap();
    sweep_leftovers();
    assert!(!dead.exists());
    assert!(ours.exists());
    std::fs::remove_dir(&ours).unwrap();
}

/// A bot spawned from a thread pinned to one CPU (as a league's workers
/// are) cannot widen its affinity beyond that CPU: its cpuset holds it.
/// (Needs cgroups and two CPUs; else says why it did not run.)
#[test]
fn a_pinned_bot_cannot_widen_its_cpus() {
    let cpus = crate::host::allowed_cpus().unwrap_or_default();
    if cpus.len() < 2 || !sandbox::cgroup::mechanism().starts_with("cgroup") {
        eprintln!("not run: needs cgroups and two CPUs");
        return;
    }
    let cpu = cpus[1];
    let widen = format!(
        "import os\ntry:\n    os.sched_setaffinity(0, {{{}}})\nexcept OSError:\n    pass\nprint(sorted(os.sched_getaffinity(0)), flush=True)\n",
        cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
    );
    let seen = std::thread::spawn(move || {
        crate::host::pin_current_thread(cpu);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let cmd = BotCommand::from_words(&["python3", "-c", &widen]).unwrap();
            let mut p = spawn_with(cmd, None, &limits()).unwrap();
            let line = p.read_line(soon(20_000)).await.unwrap().to_vec();
            p.kill();
            String::from_utf8(line).unwrap()
        })
    })
    .join()
    .unwrap();
    assert_eq!(seen, format!("[{cpu}]"));
}

/// A captured stderr: each line keeps the mark set when it was written,
/// even when the drain task has not run between the reply and the next
/// mark (what a bot writes before its reply is read under the old mark);
/// the log gets every byte too, in order.
#[tokio::test]
async fn captured_stderr_lines_keep_the_mark_they_were_written_under() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bot.log");
    // Per line read: a stderr line naming it, then the reply.
    let script = "while read l; do echo \"log $l\" >&2; echo \"ok $l\"; done";
    let mut launch = Launch::new(sh(script), limits());
    launch.stderr_log = Some(log.clone());
    launch.capture = Some(1 << 16);
    let mut p = BotProcess::spawn(&launch).unwrap();
    for mark in 1..=20u32 {
        p.mark_stderr(mark);
        p.send_line(format!("{mark}\n").as_bytes(), soon(5000))
            .await
            .unwrap();
        let want = format!("ok {mark}");
        assert_eq!(p.read_line(soon(5000)).await.unwrap(), want.as_bytes());
    }
    let c = p.take_stderr().unwrap();
    let got: Vec<(u32, String)> = c.lines.into_iter().map(|l| (l.mark, l.text)).collect();
    let want: Vec<(u32, String)> = (1..=20).map(|m| (m, format!("log {m}"))).collect();
    assert_eq!(got, want);
    assert_eq!(c.dropped, 0);
    assert_eq!(p.take_stderr().unwrap(), Captured::default());
    p.shutdown(Duration::from_millis(500)).await;
    let text = std::fs::read_to_string(&log).unwrap();
    let expected: String = (1..=20).map(|m| format!("log {m}\n")).collect();
    assert_eq!(text, expected);
}

/// Without a capture, nothing is kept in memory.
#[tokio::test]
async fn an_uncaptured_stderr_gives_nothing_to_take() {
    let mut p = spawn_with(sh("echo x >&2; echo done"), None, &limits()).unwrap();
    assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"done");
    p.mark_stderr(3);
    assert_eq!(p.take_stderr(), None);
    p.shutdown(Duration::from_millis(500)).await;
}

/// A reply waited for in place (`stdout.rs`, as on a league worker's
/// thread) is the same reply as through the runtime: at once, after the
/// in-place wait has handed over, in two writes with a pause between,
/// the last line before an exit, and a silent bot's timeout at its
/// deadline, not at the end of the in-place wait.
#[test]
fn a_reply_waited_for_in_place_is_read_as_through_the_runtime() {
    let t = std::thread::spawn(|| {
        wait_in_place_on_this_thread();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let script = "read a; echo \"$a\"; read b; sleep 0.05; echo \"$b\"; \
                          read c; printf 'half'; sleep 0.05; echo ' whole'; \
                          read d; sleep 5";
            let mut p = spawn_with(sh(script), None, &limits()).unwrap();
            p.send_line(b"now\n", soon(5000)).await.unwrap();
            assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"now");
            p.send_line(b"later\n", soon(5000)).await.unwrap();
            assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"later");
            p.send_line(b"split\n", soon(5000)).await.unwrap();
            assert_eq!(p.read_line(soon(5000)).await.unwrap(), b"half whole");
            p.send_line(b"silent\n", soon(5000)).await.unwrap();
            let asked = Instant::now();
            assert!(matches!(
                p.read_line(soon(300)).await,
                Err(BotError::Timeout)
            ));
            assert!(asked.elapsed() >= Duration::from_millis(290));
            drop(p);
            the_last_line_before_an_exit_is_read_then_the_exit().await;
        });
    });
    t.join().unwrap();
}

/// A script found, whose `#!` line names an interpreter that is not
/// there, is said to be that (not "no such file" of a file that exists);
/// the interpreter's name is read relative to the bot's folder.
#[tokio::test]
async fn a_script_whose_interpreter_is_missing_names_it() {
    let dir = std::env::temp_dir().join(format!("arena-shebang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("bot.sh");
    std::fs::write(&script, "#!/nonexistent/interp -u\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd = BotCommand::from_words(&["./bot.sh"]).unwrap();
    cmd.cwd = Some(dir.clone());
    let e = spawn_with(cmd, None, &limits()).map(|_| ()).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        matches!(&e, BotError::Interpreter { interpreter, on_host: false, .. } if interpreter == "/nonexistent/interp"),
        "{e:?}"
    );
    assert!(!e.is_harness());
    assert!(
        e.to_string()
            .contains("names the interpreter `/nonexistent/interp`, which does not exist"),
        "{e}"
    );
}

/// A bot that closes its stdin with a line of ours still unread in it
/// (and stays, its stdout open) is seen at once: the line it awaits from
/// it will never come.
#[tokio::test]
async fn a_stdin_closed_on_an_unread_line_is_seen_at_once() {
    let mut p = spawn_with(sh("sleep 0.3; exec 0<&-; exec sleep 100"), None, &limits()).unwrap();
    p.send_line(b"request\n", soon(1000)).await.unwrap();
    let t = std::time::Instant::now();
    match p.read_line(soon(60_000)).await {
        Err(BotError::InputGone {
            status: None,
            unread: true,
        }) => {}
        other => panic!("{other:?}"),
    }
    // Not its deadline (60 s), however loaded the machine.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    p.shutdown(Duration::from_millis(50)).await;
}

/// One that read all it was sent before closing its stdin may still
/// write a line (a hello, its last words): `read_line` waits for it;
/// `read_reply` gives up at once (it can be sent nothing more).
#[tokio::test]
async fn a_stdin_closed_after_reading_all_is_given_up_only_on_a_reply() {
    let script = "read x; exec 0<&-; sleep 0.3; echo \"got $x\"; exec sleep 100";
    let mut p = spawn_with(sh(script), None, &limits()).unwrap();
    p.send_line(b"request\n", soon(1000)).await.unwrap();
    assert_eq!(p.read_line(soon(10_000)).await.unwrap(), b"got request");
    p.shutdown(Duration::from_millis(50)).await;

    let mut p = spawn_with(sh(script), None, &limits()).unwrap();
    p.send_line(b"request\n", soon(1000)).await.unwrap();
    // Not its line, which comes 0.3 s after the close.
    match p.read_reply(soon(10_000)).await {
        Err(BotError::InputGone {
            status: None,
            unread: false,
        }) => {}
        other => panic!("{other:?}"),
    }
    p.shutdown(Duration::from_millis(50)).await;
}

/// A write that meets a closed stdin waits a second for the bot's exit
/// (an interpreter on its way out), but not when its stdout is closed
/// too: then it is said so at once.
#[tokio::test]
async fn a_write_to_a_bot_that_closed_both_pipes_fails_at_once() {
    let mut p = spawn_with(sh("exec 0<&- 1>&-; exec sleep 100"), None, &limits()).unwrap();
    let end = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let t = std::time::Instant::now();
        match p.send_line(b"x\n", soon(5000)).await {
            Ok(()) => {}
            Err(BotError::InputClosed {
                status: None,
                output_closed: true,
            }) => {
                // Its grace is OUTPUT_CLOSED_GRACE, not the whole
                // INPUT_CLOSED_GRACE (room left for a loaded machine).
                assert!(
                    t.elapsed() < super::lines::INPUT_CLOSED_GRACE * 9 / 10,
                    "{:?}",
                    t.elapsed()
                );
                break;
            }
            Err(e) => panic!("{e:?}"),
        }
        assert!(std::time::Instant::now() < end, "EPIPE never seen");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    p.shutdown(Duration::from_millis(50)).await;
}
