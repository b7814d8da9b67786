//! A ladder served by the real `arena serve`, for the ladder's
//! integration tests (tests/ladder_serve.rs, tests/ladder_workers.rs):
//! its ladder file, its tokens, the server process and requests to it.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const ARENA: &str = env!("CARGO_BIN_EXE_arena");

/// A ladder being served, stopped (SIGKILL) when dropped.
pub struct Server {
    pub dir: PathBuf,
    pub file: PathBuf,
    child: Option<Child>,
    pub url: String,
    /// `--db URL`, when not the default SQLite file in its results folder.
    pub db: Option<String>,
    /// More arguments of `arena serve` (`--pages-only`, `--local-games 0`).
    pub extra: Vec<String>,
    /// Variables set for `arena serve` (`XDG_CACHE_HOME`: where builds go).
    pub env: Vec<(String, String)>,
    /// The open files `arena serve` may have (soft and hard limit), when
    /// not the test's own.
    pub nofile: Option<u64>,
}

impl Server {
    /// `dir/ladder.toml`: the top-level lines `top` (name, seed, variants),
    /// the results in `results/`, generous start-up and decision times (a
    /// loaded machine), and `[ladder]` with 2 games in flight, a refit
    /// every second, no maintenance rate (the tests' ladders play as fast
    /// as their slots allow once their bots are placed, as before issue
    /// 48; the rate itself is tested in `serve::schedule`) and the lines
    /// `ladder`.
    pub fn new(dir: &Path, top: &str, ladder: &str) -> Server {
        let file = dir.join("ladder.toml");
        std::fs::write(
            &file,
            format!(
                "{top}\noutput = \"results\"\n\
                 [time_control]\nstartup_ms = 20000\ndecision_ms = 5000\n\
                 [ladder]\ngames_in_flight = 2\nrefit_seconds = 1\n\
                 maintenance_games_per_hour = 100000000\n{ladder}\n"
            ),
        )
        .unwrap();
        Server {
            dir: dir.to_path_buf(),
            file,
            child: None,
            url: String::new(),
            db: None,
            extra: Vec::new(),
            env: Vec::new(),
            nofile: None,
        }
    }

    /// `--db URL` when the store is not the SQLite file.
    fn db_args(&self) -> Vec<String> {
        match &self.db {
            Some(url) => vec!["--db".into(), url.clone()],
            None => Vec::new(),
        }
    }

    /// The store's URL.
    pub fn db_url(&self) -> String {
        match &self.db {
            Some(url) => url.clone(),
            None => format!("sqlite:{}", self.dir.join("results/ladder.db").display()),
        }
    }

    /// `arena serve FILE FLAG NAME` (`--add-user` or `--add-worker`): the
    /// token it prints.
    pub fn add(&self, flag: &str, name: &str) -> String {
        let mut args = vec!["serve", self.file.to_str().unwrap(), flag, name];
        let db = self.db_args();
        args.extend(db.iter().map(String::as_str));
        let out = super::arena(&self.dir, &args);
        assert!(out.status.success(), "{}", super::text(&out));
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let token = text.lines().last().unwrap().trim().to_string();
        assert_eq!(token.len(), 64, "{text}");
        token
    }

    /// `arena serve FILE --add-user NAME`: the token it prints.
    pub fn add_user(&self, name: &str) -> String {
        self.add("--add-user", name)
    }

    /// Starts `arena serve ladder.toml` in the ladder's folder on
    /// loopback, and waits for its address.
    pub fn start(&mut self) {
        let dir = self.dir.clone();
        self.start_at(&dir, "ladder.toml", "127.0.0.1:0");
    }

    /// Starts `arena serve FILE --bind BIND` in folder `cwd`, with the
    /// store's and the extra arguments, and waits for its address.
    pub fn start_at(&mut self, cwd: &Path, file: &str, bind: &str) {
        let mut command = Command::new(ARENA);
        if let Some(n) = self.nofile {
            use std::os::unix::process::CommandExt;
            let limit = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            // SAFETY: setrlimit on the child between fork and exec reads
            // one plain struct; nothing is allocated.
            unsafe {
                command.pre_exec(move || match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                });
            }
        }
        // Builds in the test's folder, not in the user's cache (a build
        // cut off by a stop was left there).
        if !self.env.iter().any(|(k, _)| k == "XDG_CACHE_HOME") {
            command.env("XDG_CACHE_HOME", self.dir.join("xdg-cache"));
        }
        let mut child = command
            .args(["serve", file, "--bind", bind])
            .args(self.db_args())
            .args(&self.extra)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file(&self.dir.join("serve.log"))))
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while out.read(&mut b).unwrap_or(0) == 1 && b[0] != b'\n' {
            line.push(b[0]);
        }
        let line = String::from_utf8_lossy(&line).to_string();
        self.url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}: {}", self.log()))
            .to_string();
        // Keep reading its stdout so that it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        self.child = Some(child);
    }

    /// Whether the server has exited (its status then).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// The server's log so far (its stderr, over its restarts).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("serve.log")).unwrap_or_default()
    }

    /// The server process's id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// kill -9.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, and the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut c = self.child.take().unwrap();
        // SAFETY: signals the child this guard spawned and has not reaped.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        c.wait().unwrap()
    }

    /// SIGTERM, and the exit status if it exits within `within` (else it
    /// is killed, and `None`).
    pub fn terminate_within(
        &mut self,
        within: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        let mut c = self.child.take().unwrap();
        // SAFETY: signals the child this guard spawned and has not reaped.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let start = std::time::Instant::now();
        while start.elapsed() < within {
            if let Ok(Some(status)) = c.try_wait() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = c.kill();
        let _ = c.wait();
        None
    }

    /// `arena submit` of `folder` with `token`: its exit code and output.
    pub fn submit(&self, token: &str, folder: &Path) -> (i32, String) {
        self.submit_with(token, folder, &[])
    }

    /// `arena submit` of `folder` with `token` and more arguments `args`
    /// (`--test`, `--no-test`, ...): its exit code and output.
    pub fn submit_with(&self, token: &str, folder: &Path, args: &[&str]) -> (i32, String) {
        let out = Command::new(ARENA)
            .args(["submit", "--server", &self.url, "--token", token])
            .args(args)
            .arg(folder)
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), super::text(&out))
    }

    /// `arena submit`, which must succeed.
    pub fn submit_ok(&self, token: &str, folder: &Path) {
        self.submit_ok_with(token, folder, &[]);
    }

    /// `arena submit` with more arguments `args`, which must succeed.
    pub fn submit_ok_with(&self, token: &str, folder: &Path, args: &[&str]) {
        let (code, out) = self.submit_with(token, folder, args);
        assert_eq!(code, 0, "{out}\n{}", self.log());
    }

    /// A request (GET, DELETE, POST or PATCH) with `body` for the last
    /// two: (status, body).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: impl AsRef<[u8]>,
    ) -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}{path}", self.url);
        let auth = token.map(|t| format!("Bearer {t}"));
        // A worker's request names its instance, as `arena worker` does.
        let instance = path
            .starts_with("/api/worker/")
            .then(|| token.map(instance_for))
            .flatten();
        let mut resp = match method {
            "GET" | "DELETE" => {
                let mut r = if method == "GET" {
                    agent.get(&url)
                } else {
                    agent.delete(&url)
                };
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                if let Some(i) = &instance {
                    r = r.header(INSTANCE, i);
                }
                r.call().unwrap()
            }
            _ => {
                let mut r = if method == "POST" {
                    agent.post(&url)
                } else {
                    agent.patch(&url)
                };
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                if let Some(i) = &instance {
                    r = r.header(INSTANCE, i);
                }
                r.send(body.as_ref()).unwrap()
            }
        };
        let status = resp.status().as_u16();
        (status, resp.body_mut().read_to_string().unwrap_or_default())
    }

    /// `GET path`, which must answer 200, as JSON.
    pub fn json(&self, path: &str) -> serde_json::Value {
        let (status, body) = self.call("GET", path, None, b"");
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// Polls `get` every `every` until `ok` holds of what it gives, and
    /// returns that; fails after 3 minutes, saying `what`, the last value
    /// and the server's log.
    pub fn wait<T: std::fmt::Display>(
        &self,
        what: &str,
        every: std::time::Duration,
        mut get: impl FnMut() -> T,
        ok: impl Fn(&T) -> bool,
    ) -> T {
        let start = std::time::Instant::now();
        loop {
            let v = get();
            if ok(&v) {
                return v;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(180),
                "{what}: not after 3 minutes; last:\n{v}\n{}",
                self.log()
            );
            std::thread::sleep(every);
        }
    }

    /// The game ids of `/api/games.csv`, in its order.
    pub fn csv_games(&self) -> Vec<String> {
        let (_, csv) = self.call("GET", "/api/games.csv", None, b"");
        csv.lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap().to_string())
            .collect()
    }

    /// `arena worker -j 1` of this ladder with `token`, in the folder
    /// `dir/name` (its cache there, its output in `out.log` and
    /// `err.log`), with the more arguments `args`.
    pub fn worker(&self, token: &str, name: &str, args: &[&str]) -> Worker {
        self.worker_env(token, name, args, &[])
    }

    /// [`Server::worker`] with the variables `env` set.
    pub fn worker_env(
        &self,
        token: &str,
        name: &str,
        args: &[&str],
        env: &[(&str, PathBuf)],
    ) -> Worker {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        Command::new(ARENA)
            .args(["worker", "--server", &self.url, "--token", token])
            .args(["-j", "1"])
            .args(args)
            .arg("--cache")
            .arg(dir.join("cache"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log_file(&dir.join("out.log"))))
            .stderr(Stdio::from(log_file(&dir.join("err.log"))))
            .spawn()
            .map(Worker)
            .unwrap()
    }
}

/// The header in which a worker names itself.
pub const INSTANCE: &str = "arena-worker-instance";

/// The instance id a test's worker requests with `token` name: one per
/// token, as one `arena worker` on its cache.
pub fn instance_for(token: &str) -> String {
    let id: String = token
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(16)
        .collect();
    format!("test-{id}")
}

/// An `arena worker`, stopped (SIGKILL) when dropped.
pub struct Worker(pub Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `path` opened to append to (a log kept over restarts).
pub fn log_file(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
}

/// A copy of the repository's bot folder `bots/FROM` in `dir/upload/NAME`,
/// its `bot.toml` naming it `name`, with `edit` applied to each file's
/// text (a file that is not text is copied as it is).
pub fn bot_copy(dir: &Path, from: &str, name: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bots")
        .join(from);
    let to = dir.join("upload").join(name);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        if !e.path().is_file() {
            continue;
        }
        match std::fs::read_to_string(e.path()) {
            Ok(text) => {
                let text =
                    text.replace(&format!("name = \"{from}\""), &format!("name = \"{name}\""));
                std::fs::write(to.join(e.file_name()), edit(text)).unwrap();
            }
            Err(_) => {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }
    to
}

/// How [`honest_game`] plays: the ladder's `seed` and `max_plies`, each
/// decision said to take `us` microseconds (with the row's times,
/// versions and start; none when `None`), and the second legal option
/// every third ply when `vary` (the first otherwise).
pub struct Honest {
    pub seed: u64,
    pub max_plies: u32,
    pub us: Option<u64>,
    pub vary: bool,
}

/// A legal game of Kisolo between `players` of ladder game `game_id`
/// (no opening), played through the engine as `how` says, as a worker
/// uploads it: its row and record lines.
pub fn honest_game(
    game_id: &str,
    players: &[String],
    how: &Honest,
) -> (serde_json::Value, Vec<String>) {
    use mancala_arena::engine::{Game, Settings, Variant};
    let settings = Settings {
        players: 2,
        max_plies: how.max_plies,
        options: Default::default(),
    };
    let mut game = Game::new(Variant::Kisolo, &settings).unwrap();
    let mut lines = vec![serde_json::json!({
        "type": "game", "format": 2, "game_id": game_id, "variant": "kisolo", "players": 2,
        "options": {}, "max_plies": how.max_plies, "names": players,
        "time": {"per_decision_ms": 5000}, "opening": [], "seed": "1", "notes": [],
    })
    .to_string()];
    let mut think = [0.0f64; 2];
    for n in 0.. {
        let Some(seat) = game.to_decide() else { break };
        let legal = game.legal();
        let pick = if how.vary && n % 3 == 2 { 1 } else { 0 };
        let option = legal[pick % legal.len()].clone();
        let ply = game.plies();
        game.play(&option).unwrap();
        let mut line = serde_json::json!({"seat": seat, "ply": ply, "option": option});
        if let Some(us) = how.us {
            think[seat] += us as f64 / 1000.0;
            line["us"] = us.into();
        }
        lines.push(line.to_string());
    }
    let outcome = game.outcome().unwrap();
    let scores = outcome.scores();
    lines.push(
        serde_json::json!({
            "type": "end", "scores": scores, "reason": outcome.reason.name(), "offender": null,
            "detail": null, "plies": game.plies(), "duration_ms": 1.0, "state": null,
        })
        .to_string(),
    );
    let mut row = serde_json::json!({
        "game_id": game_id, "variant": "kisolo", "players": 2, "group": game_id,
        "seat0": players[0], "seat1": players[1], "seat2": "",
        "score0": scores[0], "score1": scores[1], "score2": null,
        "reason": outcome.reason.name(), "offender": null, "plies": game.plies(),
        "duration_ms": 1,
        "seed": mancala_arena::league::schedule::group_seed(how.seed, game_id),
    });
    if how.us.is_some() {
        row["duration_ms"] = ((think[0] + think[1]) as u64 + 50).into();
        row["started_at"] = "2026-11-27T03:00:00.000Z".into();
        row["version0"] = "1.0".into();
        row["version1"] = "1.0".into();
        row["time0_ms"] = think[0].into();
        row["time1_ms"] = think[1].into();
    }
    (row, lines)
}

/// A copy of the repository's Python bot `bots/FROM` named `name`, in
/// `dir/NAME-LEN`, with `extra` (of length LEN) in a file of its own (so
/// that each upload's bytes differ).
pub fn python_bot(dir: &Path, from: &str, name: &str, extra: &str) -> PathBuf {
    let folder = dir.join(format!("{name}-{}", extra.len()));
    std::fs::create_dir_all(&folder).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bots")
        .join(from);
    std::fs::copy(shipped.join("bot.py"), folder.join("bot.py")).unwrap();
    std::fs::write(
        folder.join("bot.toml"),
        format!("name = \"{name}\"\nlanguage = \"python\"\ncommand = [\"python3\", \"bot.py\"]\n"),
    )
    .unwrap();
    std::fs::write(folder.join("NOTES"), extra).unwrap();
    folder
}

/// A game claimed by a worker (`POST /api/worker/claim`): its id, name,
/// lease and players, by seat.
pub struct Claimed {
    pub id: i64,
    pub game_id: String,
    pub lease: String,
    pub players: Vec<String>,
}

impl Claimed {
    /// The first game of the claim's answer `body`; `None` when it
    /// granted none.
    pub fn first_of(body: &str) -> Option<Claimed> {
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        let g = &v["games"][0];
        g.is_object().then(|| Claimed {
            id: g["id"].as_i64().unwrap(),
            game_id: g["game_id"].as_str().unwrap().to_string(),
            lease: g["lease"].as_str().unwrap().to_string(),
            players: g["seats"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["player"].as_str().unwrap().to_string())
                .collect(),
        })
    }
}
