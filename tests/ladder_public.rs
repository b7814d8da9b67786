//! A ladder open to strangers (issue 47), attacked as a hostile owner or a
//! rogue worker would, through the real `arena serve` over HTTP on
//! 127.0.0.1:0: each test performs one attack and fails if it succeeds
//! (docs/security.md, "Open to the public").

use crate::common;

use common::ladder::{honest_game, Claimed, Honest, Server};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

/// A ladder of kisolo in `dir` with `[ladder]` settings `ladder` (TOML
/// lines).
fn new_server(dir: &Path, ladder: &str) -> Server {
    Server::new(
        dir,
        "name = \"public-ladder\"\nseed = 7\nvariants = [\"kisolo\"]",
        ladder,
    )
}

/// A tar header block: `name`, type `kind`, declaring `size` bytes.
fn header(name: &str, kind: u8, size: u64) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0000000");
    h[116..123].copy_from_slice(b"0000000");
    h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h
}

/// A header bomb: a bot.toml, then a header of type `kind` (`x` pax,
/// `L` GNU long name, `K` GNU long link, `g` pax global) declaring `size`
/// bytes and followed by them (zeros: about a thousandth of that once
/// compressed), then a file it would describe.
fn header_bomb(kind: u8, size: u64) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let toml = b"name = \"bomb\"\ncommand = [\"python3\", \"bot.py\"]\n";
    gz.write_all(&header("bot.toml", b'0', toml.len() as u64))
        .unwrap();
    let mut data = toml.to_vec();
    data.resize(512, 0);
    gz.write_all(&data).unwrap();
    gz.write_all(&header("././@LongLink", kind, size)).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut left = size.div_ceil(512) * 512;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        gz.write_all(&zeros[..n]).unwrap();
        left -= n as u64;
    }
    gz.write_all(&header("bot.py", b'0', 0)).unwrap();
    gz.write_all(&[0u8; 1024]).unwrap();
    gz.finish().unwrap()
}

/// The peak resident memory of process `pid` so far (VmHWM), in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

#[test]
fn tar_header_bombs_are_refused_before_they_are_read_and_the_server_stays_small() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "");
    let alice = server.add_user("alice");
    server.start();
    let pid = server.pid().unwrap();
    let before = peak_memory(pid);
    // Each declares 1 GiB: read whole, as the tar crate reads such
    // headers, it would take the server's memory 1 GiB up.
    for (kind, what) in [
        (b'x', "pax extended header"),
        (b'L', "GNU long-name header"),
        (b'K', "GNU long-link header"),
        (b'g', "pax global header"),
    ] {
        let bomb = header_bomb(kind, 1 << 30);
        assert!(bomb.len() < 16 << 20, "{} bytes", bomb.len());
        let (status, body) = server.call("POST", "/api/bots", Some(&alice), &bomb);
        assert_eq!(status, 413, "{what}: {body}");
        assert!(body.contains(what) && body.contains("64 KiB"), "{body}");
    }
    let grew = peak_memory(pid).saturating_sub(before);
    assert!(
        grew < 64 << 20,
        "the server's peak memory grew by {} MiB",
        grew >> 20
    );
    // Nothing of the bombs is left behind.
    let incoming = tmp.path().join("results/incoming");
    let left: Vec<_> = std::fs::read_dir(&incoming)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// Sends a request head for `path` with `token` announcing `length` bytes
/// of body, then `body` (part of it, or none): the open connection.
fn send_head(
    server: &Server,
    path: &str,
    token: &str,
    length: u64,
    body: &[u8],
) -> std::net::TcpStream {
    let addr = server.url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let instance = common::ladder::instance_for(token);
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\narena-worker-instance: {instance}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    s
}

/// The answer on `s` (the server closes the connection after it; an
/// error's JSON ends its line, and is taken at once).
fn answer(s: &mut std::net::TcpStream) -> String {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"\n") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).to_string()
}

/// While uploads to `path` hold every slot (their bodies half sent, one
/// from each of `holders`: one sender holds at most its share), one more
/// (from `probe`) is refused from its head alone: 503 with `Retry-After`.
/// Once they are gone, an upload is taken again.
fn assert_gate(server: &Server, path: &str, holders: &[&str], probe: &str) {
    // The holders are taken in their own time, and one may be refused by a
    // probe that came first: new holders, then a probe, until it is refused.
    let mut held = Vec::new();
    let refused = server.wait(
        "an upload past the bound refused",
        Duration::from_millis(200),
        || {
            held = holders
                .iter()
                .map(|t| send_head(server, path, t, 1 << 20, b"\x1f\x8b half a body"))
                .collect();
            std::thread::sleep(Duration::from_millis(300));
            // Taken (a slot was free): it waits for its body; give up.
            let mut s = send_head(server, path, probe, 1 << 20, b"");
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            answer(&mut s)
        },
        |a| a.starts_with("HTTP/1.1 503"),
    );
    assert!(refused.starts_with("HTTP/1.1 503"), "{path}: {refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 5"),
        "{refused}"
    );
    assert!(refused.contains("try again"), "{refused}");
    drop(held);
    let taken = server.wait(
        "an upload taken once the slots are free",
        Duration::from_millis(200),
        || answer(&mut send_head(server, path, probe, 11, b"not a gzip!")),
        |a| !a.starts_with("HTTP/1.1 503"),
    );
    assert!(taken.starts_with("HTTP/1.1 4"), "{path}: {taken}");
}

#[test]
fn uploads_past_the_bound_get_503_and_retry_after_before_their_body_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "uploads_at_once = 2\ngame_uploads_at_once = 2");
    let owners = ["alice", "bob", "carol"].map(|o| server.add_user(o));
    let workers = ["w1", "w2", "w3"].map(|w| server.add("--add-worker", w));
    server.start();
    assert_gate(&server, "/api/bots", &[&owners[0], &owners[1]], &owners[2]);
    assert_gate(
        &server,
        "/api/worker/games/1",
        &[&workers[0], &workers[1]],
        &workers[2],
    );
}

/// One owner cannot hold the intake shut: their second upload while the
/// first is being received is refused (429, the other owners' slot left
/// free), and an upload whose body stops coming is refused (408) after
/// `BODY_QUIET` (30 s), its slot freed. A worker holds at most half of
/// the game uploads' slots. (Before: one owner's two stalled uploads held
/// both slots for as long as the connections stayed open.)
#[test]
fn one_sender_cannot_hold_the_upload_slots_and_a_stalled_body_frees_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "uploads_at_once = 2\ngame_uploads_at_once = 4");
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    let worker = server.add("--add-worker", "w1");
    server.start();
    // Alice's second upload: refused while the first is held. (The first
    // is taken in its own time, and under load the second may come
    // first: a new pair until the second is refused.)
    let mut stalled = None;
    let second = server.wait(
        "alice's second upload refused",
        Duration::from_millis(200),
        || {
            let first = send_head(
                &server,
                "/api/bots",
                &alice,
                1 << 20,
                b"\x1f\x8b half a body",
            );
            let sent = std::time::Instant::now();
            std::thread::sleep(Duration::from_millis(300));
            let mut s = send_head(&server, "/api/bots", &alice, 1 << 20, b"");
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            stalled = Some((first, sent));
            answer(&mut s)
        },
        |a| a.starts_with("HTTP/1.1 429"),
    );
    let (mut stalled, started) = stalled.expect("an upload sent");
    assert!(
        second.contains("an upload of yours is being received already"),
        "{second}"
    );
    assert!(
        second.to_ascii_lowercase().contains("retry-after: 5"),
        "{second}"
    );
    // Bob's is taken (and refused for what it is, not for want of a slot).
    let bobs = answer(&mut send_head(
        &server,
        "/api/bots",
        &bob,
        11,
        b"not a gzip!",
    ));
    assert!(bobs.starts_with("HTTP/1.1 400"), "{bobs}");
    // The stalled body is refused once quiet for 30 s, and its slot is free.
    let timed_out = answer(&mut stalled);
    assert!(timed_out.starts_with("HTTP/1.1 408"), "{timed_out}");
    assert!(
        timed_out.contains("no byte of it came for 30 s"),
        "{timed_out}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(29),
        "{:?}",
        started.elapsed()
    );
    let again = answer(&mut send_head(
        &server,
        "/api/bots",
        &alice,
        11,
        b"not a gzip!",
    ));
    assert!(again.starts_with("HTTP/1.1 400"), "{again}");
    // A worker: two of the four game upload slots, no third (new holders
    // until the third is refused, as above).
    let mut held = Vec::new();
    let third = server.wait(
        "a worker's third upload at once refused",
        Duration::from_millis(200),
        || {
            held = (0..2)
                .map(|_| send_head(&server, "/api/worker/games/1", &worker, 1 << 20, b"{"))
                .collect();
            std::thread::sleep(Duration::from_millis(300));
            let mut s = send_head(&server, "/api/worker/games/1", &worker, 1 << 20, b"");
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            answer(&mut s)
        },
        |a| a.starts_with("HTTP/1.1 429"),
    );
    assert!(third.contains("2 uploads of games of yours"), "{third}");
    drop(held);
}

/// `GET /health` on connection `s`, whole answer (5 s to read it).
fn health(mut s: std::net::TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// A flood of connections that send half a request head and then
/// nothing cannot stop the server: it keeps at most half its file
/// descriptors for connections (the rest wait in the kernel's queue),
/// closes each whose head is not whole 30 s after it opened (or after
/// 60 s without a byte), and answers again. (Before,
/// with every descriptor taken, its heartbeat read the host's name as
/// `localhost`, found no claim of its own on the store and stopped the
/// server: one client, no token, 20,000 connections.)
#[test]
fn a_flood_of_idle_connections_cannot_stop_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "");
    server.nofile = Some(200);
    server.start();
    let addr: std::net::SocketAddr = server.url.trim_start_matches("http://").parse().unwrap();
    // Connections until the kernel's queue is full too (a connect that
    // times out).
    let mut flood = Vec::new();
    while flood.len() < 300 {
        let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
            break;
        };
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n").unwrap();
        flood.push(s);
    }
    let started = std::time::Instant::now();
    assert!(flood.len() > 200, "{} connections", flood.len());
    // Past the heartbeat's staleness (30 s), the server holds its claim.
    std::thread::sleep(Duration::from_secs(40));
    assert!(server.exited().is_none(), "{}", server.log());
    // The first connection, idle since its half head, is closed by the
    // server: its head not whole after 30 s (408), or no byte for 60 s.
    let first = &mut flood[0];
    first
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut b = [0u8; 64];
    match first.read(&mut b) {
        Ok(0) | Err(_) => {}
        Ok(n) => {
            let said = String::from_utf8_lossy(&b[..n]).into_owned();
            assert!(said.starts_with("HTTP/1.1 408"), "{said}");
            let _ = first.read_to_end(&mut Vec::new());
        }
    }
    let idle = started.elapsed();
    assert!(idle < Duration::from_secs(100), "closed after {idle:?}");
    // The flood gone, the server answers at once.
    drop(flood);
    let health = server.wait(
        "the server answering after the flood",
        Duration::from_millis(500),
        || health(std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap()),
        |h| h.contains("\"in_flight\""),
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(server.exited().is_none(), "{}", server.log());
    assert!(!server.log().contains("taken over"), "{}", server.log());
}

/// Slowloris: connections with no token that send one header line now
/// and then never send a whole head; "no byte for 60 s" never fires for
/// them. Each head must be whole within `request_head_seconds` of its
/// first byte (408 and closed), and one address holds at most
/// `connections_per_address` connections (the next: 503 and closed), so
/// the server keeps answering. (Before, 10,000 of them held half its file
/// descriptors and /health timed out.)
#[test]
fn trickling_request_heads_are_cut_off_and_one_address_holds_few_connections() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(
        tmp.path(),
        "request_head_seconds = 4\nconnections_per_address = 6",
    );
    server.start();
    let addr: std::net::SocketAddr = server.url.trim_start_matches("http://").parse().unwrap();
    let connect = || {
        let s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        s
    };
    // Three trickling connections: a header line every 500 ms, for up to
    // 60 s; each must be answered 408 (or closed) long before that.
    let mut trickling: Vec<(std::net::TcpStream, String, bool)> = (0..3)
        .map(|_| {
            let mut s = connect();
            s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n").unwrap();
            (s, String::new(), false)
        })
        .collect();
    let started = std::time::Instant::now();
    while trickling.iter().any(|t| !t.2) && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(500));
        for (s, got, closed) in trickling.iter_mut().filter(|t| !t.2) {
            let _ = s.write_all(b"X-Trickle: 1\r\n");
            let mut b = [0u8; 4096];
            match s.read(&mut b) {
                Ok(0) => *closed = true,
                Ok(n) => got.push_str(&String::from_utf8_lossy(&b[..n])),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => *closed = true,
            }
        }
    }
    for (_, got, closed) in &trickling {
        assert!(*closed, "a trickling head still open after 60 s: {got:?}");
        assert!(
            got.is_empty()
                || got.starts_with("HTTP/1.1 408") && got.contains("request_head_seconds"),
            "{got:?}"
        );
    }
    assert!(
        trickling.iter().any(|t| t.1.starts_with("HTTP/1.1 408")),
        "no 408 said"
    );
    // Six connections held from this address: the seventh is answered
    // 503 at once (tried again if the six were cut off meanwhile: each
    // has 4 s for its head).
    let mut said = String::new();
    for _ in 0..5 {
        let held: Vec<_> = (0..6).map(|_| connect()).collect();
        let mut seventh = connect();
        seventh
            .set_read_timeout(Some(Duration::from_secs(3)))
            .unwrap();
        said.clear();
        let _ = seventh.read_to_string(&mut said);
        drop(held);
        if said.starts_with("HTTP/1.1 503") {
            break;
        }
    }
    assert!(said.starts_with("HTTP/1.1 503"), "{said:?}");
    assert!(said.contains("connections_per_address"), "{said}");
    // The server answers as ever.
    let health = server.wait(
        "the server answering",
        Duration::from_millis(500),
        || health(connect()),
        |h| h.contains("\"in_flight\""),
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
}

/// A copy of the repository's bot `random-rust` named `name`, in `dir`.
fn random_bot(dir: &Path, name: &str) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-rust/bot.toml");
    let to = dir.join("upload").join(name);
    std::fs::create_dir_all(&to).unwrap();
    let text = std::fs::read_to_string(src).unwrap();
    let text = text.replace("name = \"random-rust\"", &format!("name = \"{name}\""));
    std::fs::write(to.join("bot.toml"), text).unwrap();
    to
}

/// A worker's registration saying `cores` and `jobs`.
fn registration(cores: i64, jobs: i64) -> String {
    serde_json::json!({
        "host": "rogue", "cores": cores, "jobs": jobs, "arena_version": "0.1.0",
        "rules_version": mancala_arena::engine::RULES_VERSION,
        "record_format": mancala_arena::referee::record::FORMAT,
        "sandbox": ["namespaces"], "variants": ["kisolo"],
    })
    .to_string()
}

/// A POST of `body` to `path` with `token`, answered within a minute (or
/// the test fails): (status, answer).
fn post_within(server: &Server, path: &str, token: &str, body: &str) -> (u16, String) {
    let mut s = send_head(server, path, token, body.len() as u64, body.as_bytes());
    let a = answer(&mut s);
    let status = a
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{path}: no answer within a minute: {a:?}\n{}", server.log()));
    (status, a)
}

#[test]
fn a_worker_request_that_names_no_instance_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let w = server.add("--add-worker", "w");
    server.extra = vec!["--local-games".into(), "0".into()];
    server.start();
    let (status, a) = post_within(&server, "/api/worker/register", &w, &registration(2, 1));
    assert_eq!(status, 200, "{a}");
    // The same token without the header: it could take the token from
    // the worker that holds it.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    // A POST with the worker's token, naming `instance` if any: (status, answer).
    let post = |path: &str, instance: Option<&str>, body: &str| {
        let mut r = agent
            .post(&format!("{}{path}", server.url))
            .header("Authorization", &format!("Bearer {w}"));
        if let Some(i) = instance {
            r = r.header("arena-worker-instance", i);
        }
        let mut r = r.send(body.as_bytes()).unwrap();
        let text = r.body_mut().read_to_string().unwrap();
        (r.status().as_u16(), text)
    };
    for (path, body) in [
        ("/api/worker/claim", r#"{"max": 1}"#.to_string()),
        ("/api/worker/heartbeat", r#"{"leases": []}"#.to_string()),
        ("/api/worker/release", r#"{"leases": []}"#.to_string()),
        ("/api/worker/register", registration(2, 1)),
    ] {
        let (status, text) = post(path, None, &body);
        assert_eq!(status, 400, "{path}: {text}");
        assert!(
            text.contains("no `arena-worker-instance` header"),
            "{path}: {text}"
        );
    }
    let (status, a) = post_within(&server, "/api/worker/claim", &w, r#"{"max": 1}"#);
    assert_eq!(status, 200, "{a}");
    // Nor can another process on the token give back the holder's games.
    let (status, text) = post(
        "/api/worker/release",
        Some("another-process"),
        r#"{"leases": []}"#,
    );
    assert_eq!(status, 409, "{text}");
    assert!(
        text.contains("registered with this worker's token since"),
        "{text}"
    );
}

#[test]
fn a_worker_cannot_ask_for_more_games_than_its_cores_or_the_ladder_allows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "worker_jobs_max = 4");
    let alice = server.add_user("alice");
    let rogue = server.add("--add-worker", "rogue");
    server.extra = vec!["--local-games".into(), "0".into()];
    server.start();
    server.submit_ok(&alice, &random_bot(dir, "rand-a"));
    server.submit_ok(&alice, &random_bot(dir, "rand-b"));
    let register = "/api/worker/register";
    for (cores, jobs, says) in [
        (4, 100_000_000, "`jobs` 100000000"),
        (4, i64::MAX, "`jobs` 9223372036854775807"),
        (64, 8, "`worker_jobs_max` of 4"),
        (2, 3, "its 2 cores"),
        (4, 0, "`jobs` 0"),
        (4, -5, "`jobs` -5"),
        (-1, 1, "`cores` -1"),
        (i64::MAX, 1, "`cores`"),
        // More cores than any one machine has (65,536 was taken).
        (
            65_536,
            1,
            "`cores` 65536: a worker has from 1 to 1024 cores",
        ),
        (1025, 1, "`cores` 1025"),
    ] {
        let (status, a) = post_within(&server, register, &rogue, &registration(cores, jobs));
        assert_eq!(status, 400, "cores {cores}, jobs {jobs}: {a}");
        assert!(a.contains(says), "{a}");
    }
    // Refused, it cannot claim.
    let (status, a) = post_within(&server, "/api/worker/claim", &rogue, r#"{"max": 1000000}"#);
    assert_eq!(status, 409, "{a}");
    let (status, a) = post_within(&server, register, &rogue, &registration(2, 2));
    assert_eq!(status, 200, "{a}");
    // A claim of a million gives at most its 2, at once; the next none,
    // while those two are leased.
    let games = |a: &str| -> usize {
        let body = &a[a.find("\r\n\r\n").unwrap() + 4..];
        let v: serde_json::Value = serde_json::from_str(body.trim()).unwrap();
        v["games"].as_array().unwrap().len()
    };
    let claimed = server.wait(
        "the first games claimed",
        Duration::from_millis(500),
        || post_within(&server, "/api/worker/claim", &rogue, r#"{"max": 1000000}"#).1,
        |a| games(a) > 0,
    );
    assert!(games(&claimed) <= 2, "{claimed}");
    let mut held = games(&claimed);
    while held < 2 {
        let (_, a) = post_within(&server, "/api/worker/claim", &rogue, r#"{"max": 1000000}"#);
        held += games(&a);
    }
    assert_eq!(held, 2);
    let (status, a) = post_within(&server, "/api/worker/claim", &rogue, r#"{"max": 1000000}"#);
    assert_eq!((status, games(&a)), (200, 0), "{a}");
    // The server still answers everyone, and stops when told.
    let (status, _) = server.call("GET", "/health", None, b"");
    assert_eq!(status, 200);
    let code = server.terminate();
    assert!(code.success(), "{code:?}\n{}", server.log());
}

/// A copy of the shipped Python bot named `name` whose bot.toml asks for
/// `[limits]` `limits` (TOML lines) and which, before it says hello,
/// fills `hog_mb` MiB of memory (0: none).
fn python_bot(dir: &Path, name: &str, limits: &str, hog_mb: u64) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/random-python");
    let to = dir.join("upload").join(name);
    std::fs::create_dir_all(&to).unwrap();
    let code = std::fs::read_to_string(src.join("bot.py")).unwrap();
    let hog = format!(
        "HOG = bytearray({hog_mb} << 20)\nfor i in range(0, len(HOG), 4096):\n    HOG[i] = 1\n"
    );
    let code = code.replacen("\nimport json", &format!("\n{hog}import json"), 1);
    std::fs::write(to.join("bot.py"), code).unwrap();
    std::fs::write(
        to.join("bot.toml"),
        format!("name = \"{name}\"\ncommand = [\"python3\", \"bot.py\"]\n[limits]\n{limits}\n"),
    )
    .unwrap();
    to
}

/// The check report of the latest version of `bot`, once it is entered
/// or refused: (status, report).
fn verdict(server: &Server, bot: &str) -> (String, String) {
    let v = server.wait(
        &format!("{bot}'s verdict"),
        Duration::from_millis(500),
        || server.json(&format!("/api/bots/{bot}")),
        |v| {
            let s = v["versions"][0]["status"].as_str().unwrap_or("");
            s == "entered" || s == "refused"
        },
    );
    let version = &v["versions"][0];
    (
        version["status"].as_str().unwrap().to_string(),
        version["report"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn a_bot_toml_asks_for_less_than_the_ladders_limits_never_more() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // No [limits] in the ladder file: the defaults are the most.
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    // Asks for 8,000 MiB, 5,000 processes, 2 CPUs and 4,000 MiB of files,
    // and fills 1,500 MiB: within what it asked, over the ladder's 1,024.
    let greedy = python_bot(
        dir,
        "greedy",
        "memory_mb = 8000\nprocesses = 5000\ncpus = 2\nfile_size_mb = 4000",
        1500,
    );
    let _ = server.submit(&alice, &greedy);
    let (status, report) = verdict(&server, "greedy");
    assert_eq!(status, "refused", "{report}");
    for said in [
        "memory_mb = 1024 (the ladder's default: 1024; its bot.toml asks for 8000, more is never given)",
        "processes = 64 (the ladder's default: 64; its bot.toml asks for 5000",
        "cpus = 1 (the ladder's default: 1; its bot.toml asks for 2",
        "file_size_mb = 64 (the ladder's default: 64; its bot.toml asks for 4000",
    ] {
        assert!(report.contains(said), "{said}\n{report}");
    }
    // What the sandbox was given, as the launch had it.
    if report.contains("sandbox: on") {
        assert!(
            report.contains("limits: 1024 MiB memory, 64 processes, 1 CPU(s), 64 MiB files"),
            "{report}"
        );
    }
    // One asking for less gets less, and says so.
    let modest = python_bot(dir, "modest", "memory_mb = 256\nprocesses = 16", 0);
    server.submit_ok(&alice, &modest);
    let (status, report) = verdict(&server, "modest");
    assert_eq!(status, "entered", "{report}");
    assert!(
        report
            .contains("memory_mb = 256 (its bot.toml asks for less (the ladder's default: 1024))"),
        "{report}"
    );
    if report.contains("sandbox: on") {
        assert!(
            report.contains("limits: 256 MiB memory, 16 processes, 1 CPU(s), 64 MiB files"),
            "{report}"
        );
    }
}

/// An owner's bot that, before its hello, prints to stderr each mount of
/// its table whose source is not the path it is shown at (where a mask's
/// source lies on the host), and the host-wide counters it can read, then
/// exits: the check refuses it, and the end of its stderr is in the public
/// report. No host path may be in there: before issue 47, every mask's
/// source was the scratch folder, named after the checking process's pid.
#[test]
fn a_public_check_report_shows_no_host_path_from_the_bots_mount_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    server.start();
    let folder = dir.join("upload/peek");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("bot.py"),
        r#"import sys
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if f[3] not in ("/", f[4]):
        sys.stderr.write("LEAK root=%s at=%s\n" % (f[3], f[4]))
for p in ("/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr"):
    sys.stderr.write("COUNTER %s %s\n" % (p, open(p).read().strip()))
sys.exit(1)
"#,
    )
    .unwrap();
    std::fs::write(
        folder.join("bot.toml"),
        "name = \"peek\"\ncommand = [\"python3\", \"bot.py\"]\n",
    )
    .unwrap();
    let _ = server.submit(&alice, &folder);
    let (status, report) = verdict(&server, "peek");
    assert_eq!(status, "refused", "{report}");
    assert!(report.contains("COUNTER /proc/sys/fs/file-nr"), "{report}");
    assert!(
        !report.contains("arena-scratch"),
        "the report names the server's scratch folder:\n{report}"
    );
    if report.contains("sandbox: on") {
        // The masks' sources are a tmpfs of the bot's own; the counters
        // are its own constants.
        assert!(report.contains("LEAK root=/empty at=/"), "{report}");
        assert!(
            report.contains("COUNTER /proc/sys/fs/inode-nr 0\t0"),
            "{report}"
        );
    }
    let code = server.terminate();
    assert!(code.success(), "{code:?}\n{}", server.log());
}

/// An honest game of the ladders here (seed 7, no opening, the first
/// legal option), each decision said to take `us` microseconds.
fn honest(us: u64) -> Honest {
    Honest {
        seed: 7,
        max_plies: 300,
        us: Some(us),
        vary: false,
    }
}

#[test]
fn forged_row_fields_are_refused_and_the_export_always_rates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = Server::new(
        dir,
        "name = \"public-ladder\"\nseed = 7\nvariants = [\"kisolo\"]\nmax_plies = 300",
        "",
    );
    let alice = server.add_user("alice");
    let w = server.add("--add-worker", "w1");
    server.extra = vec!["--local-games".into(), "0".into()];
    server.start();
    server.submit_ok(&alice, &random_bot(dir, "rand-a"));
    server.submit_ok(&alice, &random_bot(dir, "rand-b"));
    let (status, a) = post_within(&server, "/api/worker/register", &w, &registration(2, 2));
    assert_eq!(status, 200, "{a}");
    let body_of = |a: &str| a[a.find("\r\n\r\n").unwrap() + 4..].trim().to_string();
    // Each refused upload ends its lease (its game goes back to the
    // queue): each is of a game claimed for it.
    let claim = || {
        let claimed = server.wait(
            "a game claimed",
            Duration::from_millis(500),
            || body_of(&post_within(&server, "/api/worker/claim", &w, r#"{"max": 1}"#).1),
            |b| b.contains("\"lease\""),
        );
        let c = Claimed::first_of(&claimed).unwrap();
        (c.game_id, c.lease, c.players)
    };
    let upload = |(gid, lease): (&str, &str), row: &serde_json::Value, lines: &[String]| {
        let body = serde_json::json!({
            "lease": lease, "row": row, "record": lines.join("\n") + "\n",
        })
        .to_string();
        post_within(&server, &format!("/api/worker/games/{gid}"), &w, &body)
    };
    // Each forgery of one field of an otherwise honest upload.
    let forged: Vec<(&str, serde_json::Value)> = vec![
        (
            "started_at",
            serde_json::json!("<img src=x onerror=alert(1)>"),
        ),
        ("started_at", serde_json::json!("2026-11-27 03:00:00")),
        ("started_at", serde_json::json!("2999-01-01T00:00:00.000Z")),
        ("duration_ms", serde_json::json!(u64::MAX)),
        ("duration_ms", serde_json::json!(1)),
        ("time0_ms", serde_json::json!(1e308)),
        ("time1_ms", serde_json::json!(-5.0)),
        ("time1_ms", serde_json::json!(0.0)),
        ("time2_ms", serde_json::json!(3.0)),
        ("version0", serde_json::json!("1.0\u{7}\u{1b}[2J")),
        ("version1", serde_json::json!("v".repeat(300))),
        // Spreadsheet formulas, as a hello's version may not begin.
        (
            "version0",
            serde_json::json!("=HYPERLINK(\"http://evil.example\",\"1.0\")"),
        ),
        ("version1", serde_json::json!("  +1+cmd|' /C calc'!A0")),
        ("version0", serde_json::json!("\u{a0}-2")),
        ("version1", serde_json::json!("@SUM(1)")),
        ("version2", serde_json::json!("9.9")),
        ("seat2", serde_json::json!("<script>")),
        ("group", serde_json::json!("game-1-again")),
        ("opening", serde_json::json!("A1 B2")),
    ];
    for (field, value) in &forged {
        let (gid, lease, players) = claim();
        let (row, lines) = honest_game(&gid, &players, &honest(1500));
        let mut bad = row.clone();
        bad[*field] = value.clone();
        let (status, a) = upload((&gid, &lease), &bad, &lines);
        assert_eq!(status, 422, "{field} = {value}: {a}\n{}", server.log());
        assert!(a.contains(field), "{field}: {a}");
        // The lease ended with the refusal: even the honest upload is
        // refused now, and the game is back in the queue.
        let (status, a) = upload((&gid, &lease), &row, &lines);
        assert_eq!(status, 410, "{field}: {a}");
    }
    // A decision said to take longer than the time control (5 s here).
    {
        let (gid, lease, players) = claim();
        let (slow_row, slow_lines) = honest_game(&gid, &players, &honest(60_000_000));
        let (status, a) = upload((&gid, &lease), &slow_row, &slow_lines);
        assert_eq!(status, 422, "{a}");
        assert!(a.contains("over the time control"), "{a}");
    }
    let (gid, lease, players) = claim();
    let (row, lines) = honest_game(&gid, &players, &honest(1500));
    let (status, a) = upload((&gid, &lease), &row, &lines);
    assert_eq!(status, 201, "{a}\n{}", server.log());
    // A second game, honest, to be rated when the first is left out.
    let claimed = server.wait(
        "a second game claimed",
        Duration::from_millis(500),
        || body_of(&post_within(&server, "/api/worker/claim", &w, r#"{"max": 1}"#).1),
        |b| b.contains("\"lease\""),
    );
    let second = Claimed::first_of(&claimed).unwrap();
    let gid2 = second.game_id.as_str();
    let (row2, lines2) = honest_game(gid2, &second.players, &honest(700));
    let body = serde_json::json!({
        "lease": second.lease, "row": row2, "record": lines2.join("\n") + "\n",
    })
    .to_string();
    let (status, a) = post_within(&server, &format!("/api/worker/games/{gid2}"), &w, &body);
    assert_eq!(status, 201, "{a}\n{}", server.log());
    // The export rates as `arena rate` does, and still does after a row
    // the checks would refuse is slipped into the store behind them: the
    // restarted server names it and leaves it out.
    let rate = |server: &Server, n: &str| {
        let (status, csv) = server.call("GET", "/api/games.csv", None, b"");
        assert_eq!(status, 200);
        let path = dir.join(format!("export-{n}.csv"));
        std::fs::write(&path, &csv).unwrap();
        let out = common::arena(dir, &["rate", path.to_str().unwrap()]);
        assert!(out.status.success(), "{}\n{csv}", common::text(&out));
        csv
    };
    assert!(rate(&server, "before").contains(&gid));
    server.kill();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let db = rt
        .block_on(mancala_arena::serve::store::Db::open(&server.db_url()))
        .unwrap();
    let mut bad = row.clone();
    bad["started_at"] = serde_json::json!("<img src=x onerror=alert(1)>");
    rt.block_on(
        sqlx::query("UPDATE games SET row_json = $1 WHERE id = $2")
            .bind(bad.to_string())
            .bind(gid.trim_start_matches("game-").parse::<i64>().unwrap())
            .execute(db.pool()),
    )
    .unwrap();
    drop(db);
    server.start();
    let log = server.log();
    assert!(
        log.contains("cannot be rated") && log.contains(&gid),
        "the bad row is not named at start-up:\n{log}"
    );
    let after = rate(&server, "after");
    assert!(
        !after.contains(&format!("{gid},")) && after.contains(gid2),
        "{after}"
    );
}

#[test]
fn sigterm_stops_the_server_at_once_whatever_its_requests_and_builds_are_doing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "");
    let alice = server.add_user("alice");
    let w = server.add("--add-worker", "w1");
    server.start();
    // A build that takes two minutes...
    let slow = dir.join("upload/slow");
    std::fs::create_dir_all(&slow).unwrap();
    std::fs::write(
        slow.join("bot.toml"),
        "name = \"slow\"\ncommand = [\"python3\", \"bot.py\"]\nbuild = [\"sleep\", \"117.25\"]\n",
    )
    .unwrap();
    std::fs::write(slow.join("bot.py"), "print('never')\n").unwrap();
    let (code, out) = {
        let s = &server;
        let submit = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
            .args(["submit", "--no-wait", "--server", &s.url, "--token", &alice])
            .arg(&slow)
            .output()
            .unwrap();
        (submit.status.code(), common::text(&submit))
    };
    assert_eq!(code, Some(0), "{out}");
    server.wait(
        "the slow build running",
        Duration::from_millis(200),
        || server.json("/api/bots/slow")["versions"][0]["status"].to_string(),
        |s| s.contains("building"),
    );
    // ...a live feed that never ends, an owner's upload and a worker's
    // game upload whose bodies never come...
    let addr = server.url.trim_start_matches("http://").to_string();
    let mut feed = std::net::TcpStream::connect(&addr).unwrap();
    feed.write_all(format!("GET /api/events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let mut first = [0u8; 12];
    feed.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let _upload = send_head(&server, "/api/bots", &alice, 1 << 20, b"\x1f\x8b");
    let _game = send_head(&server, "/api/worker/games/1", &w, 1 << 20, b"{");
    std::thread::sleep(Duration::from_millis(500));
    // ...and SIGTERM stops it all the same, in seconds, not minutes.
    let status = server.terminate_within(Duration::from_secs(30));
    assert!(
        status.is_some_and(|s| s.success()),
        "the server did not stop well within 30 s of SIGTERM ({status:?}):\n{}",
        server.log()
    );
    // The build went with it.
    let start = std::time::Instant::now();
    while !common::processes_with("117.25").is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the build outlived the server"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The store is released: a new server starts on it at once.
    server.start();
    let (status, _) = server.call("GET", "/health", None, b"");
    assert_eq!(status, 200);
}

/// Every lease of the store as `(id, state)`.
fn leases(server: &Server) -> Vec<(String, String)> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = mancala_arena::serve::store::Db::open(&server.db_url())
            .await
            .unwrap();
        sqlx::query_as("SELECT id, state FROM leases ORDER BY granted_at, id")
            .fetch_all(db.pool())
            .await
            .unwrap()
    })
}

/// A ladder of kisolo with at most 300 plies, played by workers only,
/// with leases of `lease_seconds`.
fn workers_ladder(dir: &Path, lease_seconds: u32) -> Server {
    let mut server = Server::new(
        dir,
        "name = \"public-ladder\"\nseed = 7\nvariants = [\"kisolo\"]\nmax_plies = 300",
        "",
    );
    server.extra = ["--local-games", "0", "--lease-seconds"]
        .map(String::from)
        .into_iter()
        .chain([lease_seconds.to_string()])
        .collect();
    server
}

/// [`workers_ladder`] whose server builds under `server-cache` of `dir`,
/// apart from a worker's cache.
fn workers_ladder_cached(dir: &Path, lease_seconds: u32) -> Server {
    let mut server = workers_ladder(dir, lease_seconds);
    server.env = vec![(
        "XDG_CACHE_HOME".into(),
        dir.join("server-cache").display().to_string(),
    )];
    server
}

/// A ladder of workers with 5 s leases and two random bots, a worker `w1`
/// registered with `jobs`, one of whose games is claimed; `away` then
/// keeps the server from reading any heartbeat for longer than the lease
/// (it is killed and started again, or stopped and continued), and the
/// game, played meanwhile, is uploaded: it must count. Returns the
/// server's log.
fn a_game_finished_while_the_server_was_away_counts(
    jobs: i64,
    away: impl FnOnce(&mut Server),
) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = workers_ladder(dir, 5);
    let alice = server.add_user("alice");
    let w = server.add("--add-worker", "w1");
    server.start();
    server.submit_ok(&alice, &random_bot(dir, "rand-a"));
    server.submit_ok(&alice, &random_bot(dir, "rand-b"));
    let (status, a) = post_within(&server, "/api/worker/register", &w, &registration(2, jobs));
    assert_eq!(status, 200, "{a}");
    let body_of = |a: &str| a[a.find("\r\n\r\n").unwrap() + 4..].trim().to_string();
    let claimed = server.wait(
        "a game claimed",
        Duration::from_millis(500),
        || body_of(&post_within(&server, "/api/worker/claim", &w, r#"{"max": 1}"#).1),
        |b| b.contains("\"lease\""),
    );
    let Claimed {
        game_id: gid,
        lease,
        players,
        ..
    } = Claimed::first_of(&claimed).unwrap();
    away(&mut server);
    // A claim does the queue's housekeeping, where leases expire.
    let _ = post_within(&server, "/api/worker/claim", &w, r#"{"max": 1}"#);
    let (row, lines) = honest_game(&gid, &players, &honest(900));
    let body = serde_json::json!({
        "lease": lease, "row": row, "record": lines.join("\n") + "\n",
    })
    .to_string();
    let (status, a) = post_within(&server, &format!("/api/worker/games/{gid}"), &w, &body);
    assert_eq!(
        status,
        201,
        "the game finished while the server was away was refused: {a}\n{}",
        server.log()
    );
    assert!(server.csv_games().contains(&gid), "{}", server.log());
    server.log()
}

#[test]
fn a_restarted_server_gives_leases_a_grace_so_a_game_finished_meanwhile_counts() {
    a_game_finished_while_the_server_was_away_counts(1, |server| {
        server.kill();
        std::thread::sleep(Duration::from_secs(7));
        server.start();
    });
}

/// A server stopped (SIGSTOP) for longer than a lease reads no heartbeat
/// meanwhile: once it runs again, the workers' leases get a lease time
/// more before any is taken for expired, as after a restart, and a game
/// a worker finished meanwhile counts. (Before, the first claim after
/// expired every worker's lease, and their games were played again.)
#[test]
fn a_server_stopped_for_longer_than_a_lease_gives_leases_a_grace() {
    let log = a_game_finished_while_the_server_was_away_counts(2, |server| {
        let pid = server.pid().unwrap() as i32;
        // SAFETY: signals the server this test spawned and has not reaped.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        std::thread::sleep(Duration::from_secs(7));
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
    });
    assert!(log.contains("the server was away for"), "{log}");
}

/// A copy of the shipped Python bot named `name` that thinks `think_s`
/// seconds before each decision.
fn slow_bot(dir: &Path, name: &str, think_s: f64) -> std::path::PathBuf {
    let to = python_bot(dir, name, "", 0);
    let code = std::fs::read_to_string(to.join("bot.py")).unwrap();
    let code = code.replacen(
        "    return random.choice(request[\"legal\"])",
        &format!("    __import__(\"time\").sleep({think_s})\n    return random.choice(request[\"legal\"])"),
        1,
    );
    std::fs::write(to.join("bot.py"), code).unwrap();
    to
}

#[test]
fn a_worker_stopped_with_sigterm_returns_its_leases_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = workers_ladder(dir, 120);
    let alice = server.add_user("alice");
    let token = server.add("--add-worker", "w1");
    server.start();
    server.submit_ok(&alice, &slow_bot(dir, "slow-a", 0.3));
    server.submit_ok(&alice, &slow_bot(dir, "slow-b", 0.3));
    let mut worker = server.worker(&token, "worker", &[]);
    let wdir = dir.join("worker");
    let active = |l: &Vec<(String, String)>| l.iter().any(|(_, s)| s == "active");
    let held = server.wait(
        "a game in the worker's hands",
        Duration::from_millis(100),
        || format!("{:?}", leases(&server)),
        |l| l.contains("\"active\""),
    );
    // SIGTERM, and the worker gives its lease back before it ends: the
    // game is in the queue again, long before the lease would expire.
    // SAFETY: signals the child this test spawned and has not reaped.
    unsafe { libc::kill(worker.0.id() as i32, libc::SIGTERM) };
    let status = worker.0.wait().unwrap();
    let out = std::fs::read_to_string(wdir.join("out.log")).unwrap_or_default();
    assert!(status.success(), "{status:?}\n{out}");
    let now = leases(&server);
    assert!(!active(&now), "held: {held}\nafter SIGTERM: {now:?}\n{out}");
    assert!(out.contains("returned to the server"), "{out}");
}

#[test]
fn a_worker_stopped_with_sigterm_during_a_build_stops_at_once_and_returns_its_leases() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = workers_ladder_cached(dir, 120);
    let alice = server.add_user("alice");
    let token = server.add("--add-worker", "w1");
    server.start();
    // A build that is quick in the server's check and takes five minutes
    // on the worker (its copy is built under the worker's cache).
    let slow = built_bot(
        dir,
        "slow-build",
        "import os\nif '/worker-cache/' in os.getcwd():\n    os.execvp('sleep', ['sleep', '297.25'])\n",
    );
    server.submit_ok(&alice, &slow);
    server.submit_ok(&alice, &random_bot(dir, "rand-a"));
    let cache = dir.join("worker-cache");
    let mut worker = server.worker_env(&token, "worker", &[], &[("XDG_CACHE_HOME", cache.clone())]);
    let wdir = dir.join("worker");
    server.wait(
        "the worker's build running, its games leased",
        Duration::from_millis(200),
        || {
            let building = !common::processes_with("297.25").is_empty();
            format!("{building} {:?}", leases(&server))
        },
        |s| s.starts_with("true") && s.contains("\"active\""),
    );
    // SAFETY: signals the child this test spawned and has not reaped.
    unsafe { libc::kill(worker.0.id() as i32, libc::SIGTERM) };
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = worker.0.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let out = std::fs::read_to_string(wdir.join("out.log")).unwrap_or_default();
            panic!("the worker did not stop within 60 s of SIGTERM during a build:\n{out}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = std::fs::read_to_string(wdir.join("out.log")).unwrap_or_default();
    assert!(status.success(), "{status:?}\n{out}");
    assert!(
        out.contains("the build of slow-build@1 stopped: the worker stops"),
        "the worker does not say why: {out}"
    );
    // The build went with it, and nothing of it is left in the cache.
    assert!(
        common::processes_with("297.25").is_empty(),
        "the build outlived the worker"
    );
    let builds = cache.join("mancala-arena/builds");
    let left: Vec<String> = std::fs::read_dir(&builds)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("slow-build"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the build cache: {left:?}");
    // Its games went back to the server at once.
    let now = leases(&server);
    assert!(
        !now.iter().any(|(_, s)| s == "active"),
        "after SIGTERM: {now:?}\n{out}"
    );
}

/// A bot named `name` whose build runs the Python `build` (in its folder,
/// `build.py`) before it plays as the shipped Python bot.
fn built_bot(dir: &Path, name: &str, build: &str) -> std::path::PathBuf {
    let to = python_bot(dir, name, "", 0);
    std::fs::write(to.join("build.py"), build).unwrap();
    std::fs::write(
        to.join("bot.toml"),
        format!("name = \"{name}\"\nbuild = [\"python3\", \"build.py\"]\ncommand = [\"python3\", \"bot.py\"]\n"),
    )
    .unwrap();
    to
}

/// Bytes and entries (files, folders, links) on disk under `path`.
fn disk(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (0, 0);
    };
    let mut sum = (meta.blocks() * 512, 1);
    if meta.is_dir() {
        for e in std::fs::read_dir(path).unwrap().flatten() {
            let (b, n) = disk(&e.path());
            sum = (sum.0 + b, sum.1 + n);
        }
    }
    sum
}

#[test]
fn a_build_over_its_disk_or_file_quota_is_refused_and_leaves_nothing_on_the_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "[sandbox]\nbuild_mb = 16\nbuild_files = 300");
    server.env = vec![(
        "XDG_CACHE_HOME".into(),
        dir.join("cache").display().to_string(),
    )];
    let alice = server.add_user("alice");
    server.start();
    // 20 files of 8 MiB (each under the 64 MiB file size limit), then
    // 5,000 empty files: were either kept, the disk would hold it.
    let big = built_bot(
        dir,
        "big",
        "for i in range(20):\n    open(f'f{i}.bin', 'wb').write(b'x' * (8 << 20))\n",
    );
    let many = built_bot(
        dir,
        "many",
        "import os\nos.makedirs('d', exist_ok=True)\nfor i in range(5000):\n    open(f'd/n{i}', 'w').close()\n",
    );
    for (bot, folder) in [("big", &big), ("many", &many)] {
        let (code, out) = server.submit(&alice, folder);
        assert_eq!(code, 1, "{bot}: {out}");
        let (status, report) = verdict(&server, bot);
        assert_eq!(status, "refused", "{report}");
        assert!(
            report.contains("over the build's quota of 16 MiB and 300 files")
                && report.contains("kept by the kernel"),
            "{bot}: {report}"
        );
        // Nothing of it is left on the disk: no built copy, no folder of
        // its build, beyond the upload itself.
        let (bytes, files) = disk(dir);
        assert!(bytes < 16 << 20, "{bot}: {} MiB on the disk", bytes >> 20);
        let (cache_bytes, cache_files) = disk(&dir.join("cache"));
        assert!(
            cache_bytes < 1 << 20 && cache_files < 20,
            "{bot}: the builds' cache holds {cache_bytes} bytes in {cache_files} entries"
        );
        assert!(files < 300, "{bot}: {files} entries");
    }
    // A build within the quota is entered, from its built copy.
    let small = built_bot(dir, "small", "open('built.txt', 'w').write('ok')\n");
    server.submit_ok(&alice, &small);
    let (_, report) = verdict(&server, "small");
    assert!(
        report.contains("build limits: 16 MiB and 300 files and folders (a tmpfs of that size and inodes, kept by the kernel), 300 s"),
        "{report}"
    );
    let copies: Vec<_> = std::fs::read_dir(dir.join("cache/mancala-arena/builds"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("built.txt").is_file())
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
}

#[test]
fn a_slow_build_of_one_owner_does_not_hold_up_anothers_upload() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = new_server(dir, "builds_at_once = 2");
    server.env = vec![(
        "XDG_CACHE_HOME".into(),
        dir.join("cache").display().to_string(),
    )];
    let alice = server.add_user("alice");
    let bob = server.add_user("bob");
    server.start();
    // Alice uploads two bots whose builds sleep for minutes.
    let slow = |name: &str, secs: &str| {
        let to = python_bot(dir, name, "", 0);
        std::fs::write(
            to.join("bot.toml"),
            format!("name = \"{name}\"\ncommand = [\"python3\", \"bot.py\"]\nbuild = [\"sleep\", \"{secs}\"]\n"),
        )
        .unwrap();
        to
    };
    let no_wait = |token: &str, folder: &Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
            .args([
                "submit",
                "--no-wait",
                "--server",
                &server.url,
                "--token",
                token,
            ])
            .arg(folder)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::text(&out));
    };
    no_wait(&alice, &slow("slow-a", "291.25"));
    server.wait(
        "slow-a building",
        Duration::from_millis(200),
        || server.json("/api/bots/slow-a")["versions"][0]["status"].to_string(),
        |s| s.contains("building"),
    );
    no_wait(&alice, &slow("slow-b", "292.25"));
    // Her second upload waits, told its place, though a slot is free: it
    // is kept for another owner.
    let detail = server.wait(
        "slow-b told its place",
        Duration::from_millis(200),
        || server.json("/api/bots/slow-b")["versions"][0]["detail"].to_string(),
        |d| d.contains("place 1 in the queue"),
    );
    assert!(detail.contains("2 builds and checks at once"), "{detail}");
    // `arena submit` of a third says its place while it waits.
    let third = slow("slow-c", "293.25");
    let mut waiting = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["submit", "--server", &server.url, "--token", &alice])
        .arg(&third)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (said, lines) = std::sync::mpsc::channel();
    let stdout = waiting.stdout.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = said.send(line);
        }
    });
    // Bob's upload is built, checked and entered meanwhile.
    server.submit_ok(&bob, &random_bot(dir, "bobs"));
    let status = |bot: &str| {
        server.json(&format!("/api/bots/{bot}"))["versions"][0]["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("bobs"), "entered");
    assert_eq!(status("slow-a"), "building", "{}", server.log());
    assert_eq!(status("slow-b"), "queued");
    assert!(!common::processes_with("291.25").is_empty());
    // The waiting submit says its place (within a minute).
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !out
        .iter()
        .any(|l: &String| l.contains("slow-c version 1: queued: place 2 in the queue"))
    {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => out.push(line),
            Err(_) => panic!("arena submit did not say its place:\n{}", out.join("\n")),
        }
    }
    let _ = server.terminate_within(Duration::from_secs(30));
    let _ = waiting.kill();
    let _ = waiting.wait();
}

#[test]
fn a_workers_cache_stays_within_its_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut server = workers_ladder_cached(dir, 60);
    let alice = server.add_user("alice");
    let token = server.add("--add-worker", "w1");
    server.start();
    // Three bots whose built copies take 3 MiB each: any two of them
    // (one game) are over the worker's bound of 4 MiB.
    for name in ["fat-a", "fat-b", "fat-c"] {
        let folder = built_bot(
            dir,
            name,
            "open('data.bin', 'wb').write(b'x' * (3 << 20))\n",
        );
        server.submit_ok(&alice, &folder);
    }
    let wdir = dir.join("worker");
    let mut worker = server.worker_env(
        &token,
        "worker",
        &["--cache-mb", "4"],
        &[("XDG_CACHE_HOME", wdir.join("xdg"))],
    );
    let out = || std::fs::read_to_string(wdir.join("out.log")).unwrap_or_default();
    // What the bots take in the worker's cache: their bundles and built
    // copies.
    let taken = || disk(&wdir.join("cache/bundles")).0 + disk(&wdir.join("xdg")).0;
    server.wait(
        "three games played and bundles evicted",
        Duration::from_millis(300),
        || format!("{} games\n{}", server.csv_games().len(), out()),
        |s| {
            s.split(' ').next().unwrap().parse::<usize>().unwrap() >= 3
                && s.matches("evicted bundle").count() >= 2
        },
    );
    // SAFETY: signals the child this test spawned and has not reaped.
    unsafe { libc::kill(worker.0.id() as i32, libc::SIGTERM) };
    let status = worker.0.wait().unwrap();
    assert!(status.success(), "{status:?}\n{}", out());
    let bytes = taken();
    assert!(
        bytes <= 4 << 20,
        "the worker's bots take {} KiB, over its 4 MiB:\n{}",
        bytes >> 10,
        out()
    );
}

/// A rogue worker's batch of a million small games (each
/// `["", "", [ROW]]`, 16 MiB), or one game whose seat's stderr has more
/// than a million lines: each refused as it is read past its bound (1,024
/// games; 1,048,576 lines), and the server's peak memory stays near the
/// body's size. Before, the whole batch was parsed on one of the runtime's
/// threads before its games were counted: 8 MiB of such games took
/// 166 MB, 64 MiB 760 MB, and four such uploads at a time cut the
/// server's games from 246/s to 16/s.
#[test]
fn a_batch_of_a_million_small_games_is_refused_as_it_is_read_and_the_server_stays_small() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "");
    let w = server.add("--add-worker", "w");
    server.extra = vec!["--local-games".into(), "0".into()];
    server.start();
    let (status, a) = server.call("POST", "/api/worker/register", Some(&w), registration(2, 1));
    assert_eq!(status, 200, "{a}");
    let pid = server.pid().unwrap();
    let before = peak_memory(pid);
    let row = r#"["","",2,"","","","",0,0,null,"",null,0,0,0]"#;
    let game = format!(r#"["","",{row}]"#);
    let n = (16 << 20) / (game.len() + 1);
    let body = format!(r#"{{"games":[{}]}}"#, vec![game.as_str(); n].join(","));
    let (status, b) = server.call("POST", "/api/worker/games", Some(&w), &body);
    assert_eq!(status, 400, "{b}");
    assert!(b.contains("more than 1024 entries: at most 1024"), "{b}");
    let lines = vec![r#"[1,""]"#; (1 << 20) + 1].join(",");
    let body = format!(
        r#"{{"lease":"x","record":"","row":{row},"stderr":[{{"seat":0,"lines":[{lines}]}}]}}"#
    );
    let (status, b) = server.call("POST", "/api/worker/games/1", Some(&w), &body);
    assert_eq!(status, 400, "{b}");
    assert!(b.contains("more than 1048576 entries"), "{b}");
    let grew = peak_memory(pid).saturating_sub(before);
    assert!(
        grew < 128 << 20,
        "the server's peak memory grew by {} MiB",
        grew >> 20
    );
}

/// An owner's upload cannot give its test a budget past the organiser's:
/// asked for 100,000,000 games (with bounds no test reaches, `elo1` near
/// 0 and `alpha` 1e-300), a test took 77% of the ladder's games for good,
/// past `maintenance_games_per_hour`, and its owner could not stop it.
#[test]
fn an_uploads_test_plays_at_most_the_ladders_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "test_max_games = 500");
    let alice = server.add_user("alice");
    server.start();
    let ask = |query: &str| server.call("POST", &format!("/api/bots?{query}"), Some(&alice), b"x");
    for q in [
        "test=yes&elo1=1e-320&alpha=1e-300&max_games=100000000",
        "test=yes&max_games=501",
    ] {
        let (status, b) = ask(q);
        assert_eq!(status, 400, "{q}: {b}");
        assert!(
            b.contains("give a whole number from 2 to 500, the ladder's test_max_games"),
            "{q}: {b}"
        );
    }
    // Within it, the upload goes on to its body (not a bot: refused for that).
    let (status, b) = ask("test=yes&max_games=500");
    assert_ne!(status, 200, "{b}");
    assert!(!b.contains("test_max_games"), "{b}");
}

/// Live feeds are bounded: each listener holds about 100 KB of the
/// server's memory for as long as it stays (1,500 silent listeners took
/// it from 64 MB to 225 MB, and 4,000 to 502 MB); past `feeds_at_once`
/// one more is answered 503 with `Retry-After`, and a place is free again
/// once a listener leaves.
#[test]
fn live_feeds_past_feeds_at_once_are_refused_until_one_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = new_server(tmp.path(), "feeds_at_once = 2");
    server.start();
    let addr = server.url.trim_start_matches("http://").to_string();
    let listen = || {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let head = format!(
            "GET /api/events HTTP/1.1\r\nHost: {addr}\r\nLast-Event-ID: 99999999999999999\r\n\r\n"
        );
        s.write_all(head.as_bytes()).unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 1];
        while !got.ends_with(b"\r\n\r\n") && s.read(&mut b).unwrap_or(0) == 1 {
            got.push(b[0]);
        }
        (String::from_utf8_lossy(&got).to_string(), s)
    };
    let (a, first) = listen();
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    let (b, _second) = listen();
    assert!(b.starts_with("HTTP/1.1 200"), "{b}");
    let (c, _) = listen();
    assert!(c.starts_with("HTTP/1.1 503"), "{c}");
    assert!(c.to_ascii_lowercase().contains("retry-after:"), "{c}");
    drop(first);
    let d = server.wait(
        "a live feed taken once one left",
        Duration::from_millis(200),
        || listen().0,
        |d| d.starts_with("HTTP/1.1 200"),
    );
    assert!(d.starts_with("HTTP/1.1 200"), "{d}");
}
