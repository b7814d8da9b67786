//! A refusal as the web layer sends it: a status and one line of JSON
//! (`{"error": "..."}`) that says what to do. A failure of the server's
//! own is logged with its cause and answered with a fixed message: the
//! store's errors never reach a client.

use crate::serve::intake::{self, inbox};
use crate::serve::ladder::Ladder;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// A refusal: a status and what to do, sent as one line of JSON.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds to wait before trying again (`Retry-After`), on a 503 of a
    /// full server or a 429.
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
    /// A failure of the server's own (the store, a task): its cause goes
    /// to the log, the client gets [`intake::INTERNAL`] and nothing of the cause.
    pub(super) fn internal(e: impl std::fmt::Display) -> ApiError {
        tracing::error!("{e}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, intake::INTERNAL)
    }
    pub(super) fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }
    /// The refusal of a body that did not arrive ([`inbox::SpoolError`]):
    /// `what` (`the upload's body`, `a batch of uploads`) over its limit
    /// of `limit_mb` (413), too slow (408), cut (400); the server's disk,
    /// a failure of its own.
    pub(super) fn unarrived(what: &str, e: inbox::SpoolError, limit_mb: u64) -> ApiError {
        match e {
            inbox::SpoolError::TooLarge => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("{what} is over {limit_mb} MiB"),
            ),
            inbox::SpoolError::Slow(why) => ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("{what} did not arrive whole: {why}"),
            ),
            inbox::SpoolError::Body(e) => ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("{what} did not arrive whole: {e}"),
            ),
            inbox::SpoolError::Io(e) => ApiError::internal(e),
        }
    }
}

impl From<intake::Refusal> for ApiError {
    fn from(r: intake::Refusal) -> ApiError {
        ApiError {
            retry_after: r.retry_after,
            ..ApiError::new(r.status, r.message)
        }
    }
}

impl From<inbox::Busy> for ApiError {
    fn from(b: inbox::Busy) -> ApiError {
        ApiError {
            retry_after: Some(inbox::RETRY_SECONDS),
            ..ApiError::new(
                match b.mine {
                    true => StatusCode::TOO_MANY_REQUESTS,
                    false => StatusCode::SERVICE_UNAVAILABLE,
                },
                b.message,
            )
        }
    }
}

/// An error's body: `{"error": "..."}`.
#[derive(serde::Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_string(&ErrorBody {
            error: &self.message,
        })
        .unwrap_or_default()
            + "\n";
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(s));
        }
        r
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The JSON of `what` that a request's `body` holds, or a 400 saying what
/// is wrong with it (an empty body, as such: serde's "EOF while parsing a
/// value at line 1 column 0" did not say it) and then `then`: what to
/// send, or where it is described.
pub(super) fn json_body<T: serde::de::DeserializeOwned>(
    body: &[u8],
    what: &str,
    then: &str,
) -> ApiResult<T> {
    let refused = |why: String| ApiError::new(StatusCode::BAD_REQUEST, format!("{why}: {then}"));
    // Every body is an object: serde would read a struct from a list of
    // its fields' values too (`[true]` for `{"active": true}`).
    if let Some(b) = body.trim_ascii().first().filter(|b| **b != b'{') {
        return Err(refused(format!(
            "the body is not the JSON of {what}: that is an object, `{{...}}`, and this begins with `{}`",
            char::from(*b).escape_default()
        )));
    }
    serde_json::from_slice(body).map_err(|e| {
        refused(match body.trim_ascii().is_empty() {
            true => format!("the body is empty: it should hold the JSON of {what}"),
            false => format!("the body is not the JSON of {what} ({e})"),
        })
    })
}

/// What every handler is given: the service.
pub type Shared = State<Arc<Ladder>>;

/// axum's listener, whose connections send hyper's own refusals with the
/// body every other refusal has. Hyper answers a request it cannot read
/// before any route sees it (a request line or path over 64 KiB: 414;
/// headers over its buffer: 431; a malformed request: 400) with a status
/// and no body: such an answer is recognised as written (a head alone,
/// `content-length: 0` and no `content-type`, which no answer of the
/// routes has, [`super::errors_as_json`]) and sent with
/// `{"error": "..."}`.
///
/// It also bounds the connections (issue 47): at most
/// [`JsonRefusals::new`]'s `most` open at once (one more waits in the
/// kernel's queue until one closes), and each closed after
/// [`CONNECTION_IDLE`] without a byte either way. Before, a client that
/// opened connections and sent nothing (or half a request) kept each
/// for ever: 20,000 of them took every file descriptor the server had,
/// and it could neither open its store nor start a bot.
pub struct JsonRefusals {
    listener: tokio::net::TcpListener,
    open: Arc<tokio::sync::Semaphore>,
    /// How long a request's head may take from its first byte.
    head: std::time::Duration,
    /// The most connections open at once from one address.
    per_address: usize,
    /// Connections open, per client address.
    by_address: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
    /// The ladder's `upload_mb`, named in the refusal of a body announced
    /// past any ([`Unread::Length`]).
    upload_mb: u64,
}

/// How long a connection may go without a byte read or written before it
/// is closed: a request's head or body that stopped coming, a client
/// that keeps a connection and sends nothing. A live feed writes every
/// 15 s (its keep-alive), and an upload's body is refused after 30 s of
/// quiet ([`super::super::intake::inbox::BODY_QUIET`]) before this.
pub const CONNECTION_IDLE: std::time::Duration = std::time::Duration::from_secs(60);

impl JsonRefusals {
    /// A listener that keeps at most `most` connections open at once, at
    /// most `per_address` of them from one client address, and gives a
    /// request's head `head` from its first byte (from the connection's
    /// opening, for the first); `upload_mb`, the ladder's, for its
    /// refusals.
    pub fn new(
        listener: tokio::net::TcpListener,
        most: usize,
        head: std::time::Duration,
        (per_address, upload_mb): (usize, u64),
    ) -> JsonRefusals {
        JsonRefusals {
            listener,
            open: Arc::new(tokio::sync::Semaphore::new(most.max(1))),
            head,
            per_address: per_address.max(1),
            by_address: Arc::default(),
            upload_mb,
        }
    }

    /// A place for one more connection from `ip`, or `None` when it holds
    /// [`JsonRefusals::per_address`] already.
    fn place_for(&self, ip: std::net::IpAddr) -> Option<AddressPlace> {
        let ip = client_of(ip);
        let mut by = self.by_address.lock().unwrap_or_else(|p| p.into_inner());
        let n = by.entry(ip).or_default();
        if *n >= self.per_address {
            return None;
        }
        *n += 1;
        Some(AddressPlace {
            ip,
            by_address: self.by_address.clone(),
        })
    }
}

/// The client a connection counts against: its IPv4 address (an
/// IPv4-mapped IPv6 one read as IPv4), or the /64 network of an IPv6 one.
/// A site given a /64, as every IPv6 host is, has 2^64 addresses to draw
/// from: counted one by one, one client would hold every connection the
/// server keeps (each live feed's about 100 KB of memory).
fn client_of(ip: std::net::IpAddr) -> std::net::IpAddr {
    use std::net::{IpAddr, Ipv6Addr};
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// One connection's place among its address's, given back when dropped.
pub struct AddressPlace {
    ip: std::net::IpAddr,
    by_address: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
}

impl Drop for AddressPlace {
    fn drop(&mut self) {
        let mut by = self.by_address.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = by.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                by.remove(&self.ip);
            }
        }
    }
}

/// An answer `status` saying `why`, with which the server closes the
/// connection: one past its address's bound (503), or whose request's
/// head did not come whole in time (408). Written with what the socket
/// takes at once: no wait for a reader that does not read.
fn closing_answer(status: &str, why: &str) -> Vec<u8> {
    let body = serde_json::to_string(&ErrorBody { error: why }).unwrap_or_default() + "\n";
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl axum::serve::Listener for JsonRefusals {
    type Io = Refusing<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // Past the bound, the next connection waits to be accepted until
        // one closes. (The semaphore is never closed: `None` cannot be.)
        let permit = self.open.clone().acquire_owned().await.ok();
        loop {
            let (io, addr) = axum::serve::Listener::accept(&mut self.listener).await;
            let Some(place) = self.place_for(addr.ip()) else {
                // Past its address's bound: answered and closed, its
                // place among all given to the next.
                let why = format!(
                    "{} connections are open from your address already (the ladder's connections_per_address): close one first",
                    self.per_address
                );
                let _ = io.try_write(&closing_answer("503 Service Unavailable", &why));
                continue;
            };
            let now = tokio::time::Instant::now();
            return (
                Refusing {
                    io,
                    pending: Vec::new(),
                    sent: 0,
                    _open: permit,
                    _place: Some(place),
                    upload_mb: self.upload_mb,
                    last: now,
                    idle: Box::pin(tokio::time::sleep(self.head.min(CONNECTION_IDLE))),
                    head: Head {
                        limit: self.head,
                        due: Some(now + self.head),
                        tail: 0,
                        framing: Framing::default(),
                        unread: None,
                    },
                },
                addr,
            );
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// A connection of [`JsonRefusals`]: what it reads comes as it came; a
/// bodiless refusal of hyper's is written with its body; closed after
/// [`CONNECTION_IDLE`] without a byte either way.
pub struct Refusing<I> {
    io: I,
    /// A refusal rewritten with its body, being sent.
    pending: Vec<u8>,
    /// How much of `pending` is sent.
    sent: usize,
    /// The connection's place among those open, given back when dropped.
    _open: Option<tokio::sync::OwnedSemaphorePermit>,
    /// Its place among its address's.
    _place: Option<AddressPlace>,
    /// The ladder's `upload_mb` ([`JsonRefusals::upload_mb`]).
    upload_mb: u64,
    /// When the last byte was read or written.
    last: tokio::time::Instant,
    /// Wakes the connection when it may have been idle too long, or its
    /// request's head is late.
    idle: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The request head being read, and by when it must be whole.
    head: Head,
}

/// Where a connection is in its request's head: each head must be whole
/// (`\r\n\r\n`) by `due`, counted from its first byte (from the
/// connection's opening, for the first), however slowly it trickles.
struct Head {
    limit: std::time::Duration,
    /// By when the head being read must be whole; `None` while none is
    /// (a body, an answer, a connection waiting for its next request).
    due: Option<tokio::time::Instant>,
    /// How many bytes of `\r\n\r\n` the bytes read so far end with.
    tail: usize,
    /// The framing headers of the head being read.
    framing: Framing,
    /// Why hyper will refuse the head being read, when [`Framing`] knows
    /// better than hyper's own status and word: its refusal is written
    /// with them ([`Unread::said`]).
    unread: Option<Unread>,
}

/// A head hyper refuses, said as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unread {
    /// Both `Content-Length` and `Transfer-Encoding` (made unreadable
    /// for hyper: [`Head::read`]).
    Framing,
    /// A `Content-Length` past 2^64 - 3, which hyper refuses as
    /// malformed (400) or as too large a header (431).
    Length,
}

impl Unread {
    /// The status line and the words of the refusal, on a ladder whose
    /// uploads are at most `upload_mb` MiB.
    fn said(self, upload_mb: u64) -> (&'static str, String) {
        match self {
            Unread::Framing => ("400 Bad Request", FRAMING_CONFLICT.to_string()),
            Unread::Length => (
                "413 Payload Too Large",
                format!("the request's Content-Length is over any body this server takes (an upload of a bot is at most {upload_mb} MiB, this ladder's limit)"),
            ),
        }
    }
}

/// The refusal of a request with both `Content-Length` and
/// `Transfer-Encoding`.
const FRAMING_CONFLICT: &str = "the request has both Content-Length and Transfer-Encoding headers, which say two different things about where its body ends (RFC 9112, 6.1: the way requests are smuggled past a proxy); send one of them";

/// The names of the header lines of a head, as far as they may be one of
/// the two that frame a body. Hyper reads a request with both
/// `Content-Length` and `Transfer-Encoding` by the second (and drops the
/// first when it comes after it, so that no route can see the two); RFC
/// 9112 (6.1) has a server refuse it, or close the connection after it,
/// since a proxy in front that reads it by the other would take part of
/// its body for another request.
#[derive(Default)]
struct Framing {
    /// The current line's name so far, in lower case, while it may be
    /// one of the two.
    name: Vec<u8>,
    /// Whether the current line may still name one of them.
    open: bool,
    /// The byte before (a line starts after `\n`, `\r\n` or not).
    before: u8,
    length: bool,
    encoding: bool,
    /// The value of the `Content-Length` being read, `None` past what
    /// hyper takes (2^64 - 3: its `MAX_LEN`); outside one, `Some(0)`.
    value: Option<u64>,
    /// Whether a `Content-Length` value is being read.
    in_value: bool,
}

impl Framing {
    /// One byte `b` of the head: [`Unread::Framing`] when it is the `:`
    /// of the second framing header, [`Unread::Length`] when it takes a
    /// `Content-Length` past what hyper reads.
    fn byte(&mut self, b: u8) -> Option<Unread> {
        if std::mem::replace(&mut self.before, b) == b'\n' {
            self.open = true;
            self.in_value = false;
            self.name.clear();
        }
        if self.in_value && b.is_ascii_digit() {
            let was = self.value;
            self.value = was
                .and_then(|v| v.checked_mul(10)?.checked_add(u64::from(b - b'0')))
                .filter(|v| *v <= u64::MAX - 2);
            return (was.is_some() && self.value.is_none()).then_some(Unread::Length);
        }
        if !self.open {
            return None;
        }
        if b == b':' {
            self.open = false;
            match &self.name[..] {
                b"content-length" => {
                    (self.length, self.in_value, self.value) = (true, true, Some(0))
                }
                b"transfer-encoding" => self.encoding = true,
                _ => return None,
            }
            return (self.length && self.encoding).then_some(Unread::Framing);
        }
        if self.name.len() < b"transfer-encoding".len() && (b.is_ascii_alphabetic() || b == b'-') {
            self.name.push(b.to_ascii_lowercase());
        } else {
            self.open = false;
        }
        None
    }
}

impl Head {
    /// `bytes` were read. The `:` of a request's second framing header
    /// ([`Framing`]) is made a NUL, which no header name holds: hyper
    /// refuses the head (400) and closes the connection, and the refusal
    /// is written with [`FRAMING_CONFLICT`]. A `Content-Length` hyper
    /// cannot hold is noted, for its refusal to be a 413.
    fn read(&mut self, bytes: &mut [u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.due.is_none() && self.tail == usize::MAX {
            // The next request's first byte, after an answer.
            self.due = Some(tokio::time::Instant::now() + self.limit);
            self.tail = 0;
        }
        if self.due.is_none() {
            return;
        }
        const END: &[u8] = b"\r\n\r\n";
        for b in bytes.iter_mut() {
            if let Some(unread) = self.framing.byte(*b) {
                if unread == Unread::Framing {
                    *b = 0;
                }
                self.unread = Some(unread);
            }
            self.tail = if *b == END[self.tail] {
                self.tail + 1
            } else if *b == b'\r' {
                1
            } else {
                0
            };
            if self.tail == END.len() {
                // Whole: the body, if any, is the body rules' to time.
                self.due = None;
                self.tail = 0;
                self.framing = Framing::default();
                return;
            }
        }
    }

    /// An answer (`bytes`, written) began: the next byte read begins the
    /// next request's head. (An interim `100 Continue` does not: a body
    /// follows it.)
    fn wrote(&mut self, bytes: &[u8]) {
        if self.due.is_none()
            && bytes.starts_with(b"HTTP/1.1 ")
            && !bytes.starts_with(b"HTTP/1.1 1")
        {
            self.tail = usize::MAX;
        }
    }
}

impl<I> Refusing<I> {
    /// Whether the connection has gone [`CONNECTION_IDLE`] without a byte
    /// (the timer then wakes the task); when its timer fired early (bytes
    /// came meanwhile), set again from the last byte. The timer is moved
    /// only then, not at each read and write.
    fn idle_too_long(&mut self, cx: &mut std::task::Context<'_>) -> Option<Late> {
        use std::future::Future as _;
        loop {
            if self.idle.as_mut().poll(cx).is_pending() {
                return None;
            }
            let now = tokio::time::Instant::now();
            if self.head.due.is_some_and(|d| now >= d) {
                return Some(Late::Head);
            }
            let due = self.last + CONNECTION_IDLE;
            if now >= due {
                return Some(Late::Idle);
            }
            self.idle
                .as_mut()
                .reset(self.head.due.map_or(due, |h| h.min(due)));
        }
    }
}

/// Why a connection is closed.
enum Late {
    /// No byte either way for [`CONNECTION_IDLE`].
    Idle,
    /// Its request's head not whole in time.
    Head,
}

/// The refusal `head` is, rewritten with its JSON body, when it is one of
/// hyper's own (a whole head, `content-length: 0`, no `content-type`,
/// status 400, 414 or 431); `None` for anything else. `said`: the status
/// line and words of a 400 or 431 whose cause is known ([`Unread`]).
fn with_body(head: &[u8], said: Option<(&str, &str)>) -> Option<Vec<u8>> {
    // Every answer's writes pass here: bytes looked at first, cheaply.
    let status = head.strip_prefix(b"HTTP/1.1 ")?.get(..3)?;
    if head.len() > 1024 || !matches!(status, b"400" | b"414" | b"431") {
        return None;
    }
    let text = std::str::from_utf8(head).ok()?;
    let status = text.strip_prefix("HTTP/1.1 ")?.get(..3)?;
    let (line, why) = match (status, said) {
        ("400" | "431", Some(said)) => (Some(said.0), said.1),
        ("400", _) => (
            None,
            "the request cannot be read as HTTP/1.1 (a malformed request line or header)",
        ),
        ("414", _) => (
            None,
            "the request's path and query are too long (at most 65,534 bytes)",
        ),
        ("431", _) => (None, "the request's headers are too large"),
        _ => return None,
    };
    let lines = text.strip_suffix("\r\n\r\n")?;
    if lines.contains("\r\n\r\n") {
        return None;
    }
    let mut out = Vec::new();
    let mut empty = false;
    for line in lines.split("\r\n") {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("content-type:") {
            return None;
        }
        if let Some(length) = lower.strip_prefix("content-length:") {
            empty = length.trim() == "0";
            continue;
        }
        out.push(line);
    }
    if !empty {
        return None;
    }
    let body = serde_json::to_string(&ErrorBody {
        error: &format!("{why}: see docs/ladder.md for the API"),
    })
    .ok()?
        + "\n";
    let status_line = line.map(|l| format!("HTTP/1.1 {l}"));
    if let Some(l) = &status_line {
        out[0] = l.as_str();
    }
    let mut head = out.join("\r\n");
    head.push_str(&format!(
        "\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    ));
    Some(head.into_bytes())
}

impl<I: tokio::io::AsyncWrite + Unpin> Refusing<I> {
    /// Sends what is left of a rewritten refusal.
    fn drain(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        use std::task::{ready, Poll};
        while self.sent < self.pending.len() {
            let n = ready!(
                std::pin::Pin::new(&mut self.io).poll_write(cx, &self.pending[self.sent..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.pending.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    /// `buf` taken whole as a refusal rewritten with its body, if it is
    /// one ([`with_body`]); its length then.
    fn refusal(
        &mut self,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> Option<std::io::Result<usize>> {
        let said = self.head.unread.map(|u| u.said(self.upload_mb));
        let said = said.as_ref().map(|(line, why)| (*line, why.as_str()));
        self.pending = with_body(buf, said)?;
        self.head.unread = None;
        self.sent = 0;
        // What the socket does not take now goes at the next write or
        // flush; the error of one that fails, now.
        match self.drain(cx) {
            std::task::Poll::Ready(Err(e)) => Some(Err(e)),
            _ => Some(Ok(buf.len())),
        }
    }
}

impl<I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> tokio::io::AsyncRead for Refusing<I> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let this = self.get_mut();
        let before = buf.filled().len();
        match std::pin::Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                this.last = tokio::time::Instant::now();
                let timed = this.head.due.is_some();
                this.head.read(&mut buf.filled_mut()[before..]);
                if let (false, Some(due)) = (timed, this.head.due) {
                    // A new request's head: the timer wakes by its due.
                    let idle = this.last + CONNECTION_IDLE;
                    this.idle.as_mut().reset(due.min(idle));
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match this.idle_too_long(cx) {
                None => Poll::Pending,
                Some(Late::Idle) => Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no byte either way for {} s: connection closed",
                        CONNECTION_IDLE.as_secs()
                    ),
                ))),
                Some(Late::Head) => {
                    // Said if the socket takes it now; closed either way.
                    let why = format!(
                        "the request's head (its request line and headers) did not come whole within {} s of its first byte (the ladder's request_head_seconds): connection closed",
                        this.head.limit.as_secs()
                    );
                    let answer = closing_answer("408 Request Timeout", &why);
                    let _ = std::pin::Pin::new(&mut this.io).poll_write(cx, &answer);
                    Poll::Ready(Err(std::io::Error::new(std::io::ErrorKind::TimedOut, why)))
                }
            },
            other => other,
        }
    }
}

/// `written` (a write's result), noting that bytes went out.
fn wrote(
    last: &mut tokio::time::Instant,
    written: std::task::Poll<std::io::Result<usize>>,
) -> std::task::Poll<std::io::Result<usize>> {
    if let std::task::Poll::Ready(Ok(1..)) = written {
        *last = tokio::time::Instant::now();
    }
    written
}

impl<I: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Refusing<I> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.drain(cx))?;
        if let Some(r) = this.refusal(cx, buf) {
            return std::task::Poll::Ready(r);
        }
        this.head.wrote(buf);
        let written = std::pin::Pin::new(&mut this.io).poll_write(cx, buf);
        wrote(&mut this.last, written)
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.drain(cx))?;
        let mut full = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (full.next(), full.next()) {
            if let Some(r) = this.refusal(cx, only) {
                return std::task::Poll::Ready(r);
            }
        }
        if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
            this.head.wrote(first);
        }
        let written = std::pin::Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        wrote(&mut this.last, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.drain(cx))?;
        std::pin::Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.drain(cx))?;
        std::pin::Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The connections of one IPv6 /64 count as one client's, as do an
    /// IPv4 address and its IPv4-mapped form; another /64 is another
    /// client.
    #[tokio::test]
    async fn one_ipv6_network_of_64_bits_is_one_client() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let r = JsonRefusals::new(listener, 100, std::time::Duration::from_secs(30), (2, 16));
        let at = |a: &str| r.place_for(a.parse().unwrap());
        let first = at("2001:db8:1:2::1").unwrap();
        let _second = at("2001:db8:1:2:ffff:ffff:ffff:ffff").unwrap();
        assert!(at("2001:db8:1:2:abcd::7").is_none());
        let _other = at("2001:db8:1:3::1").unwrap();
        drop(first);
        assert!(at("2001:db8:1:2::99").is_some());
        let _v4 = [at("192.0.2.1").unwrap(), at("192.0.2.1").unwrap()];
        assert!(at("::ffff:192.0.2.1").is_none());
    }

    /// A body that is not a JSON object is refused before it is read,
    /// though serde would read a struct from a list of its values.
    #[test]
    fn a_body_that_is_no_object_is_refused() {
        #[derive(Debug, serde::Deserialize)]
        struct Change {
            #[allow(dead_code)]
            active: bool,
        }
        assert!(json_body::<Change>(br#" {"active": true}"#, "a change", "").is_ok());
        for body in [&b"[true]"[..], b" [true]", b"true", b"\"x\""] {
            let e = json_body::<Change>(body, "a change", "send {\"active\": B}").unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert!(e.message.contains("that is an object"), "{}", e.message);
        }
    }

    /// An empty body (or white space alone) is said to be empty, with
    /// what it should hold; a body that is not that JSON quotes serde.
    #[test]
    fn an_empty_body_is_said_to_be_empty() {
        #[derive(Debug, serde::Deserialize)]
        struct Claim {
            #[allow(dead_code)]
            max: u32,
        }
        for body in [&b""[..], b" \r\n"] {
            let e = json_body::<Claim>(body, "a claim", "send {\"max\": N}").unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert_eq!(
                e.message,
                "the body is empty: it should hold the JSON of a claim: send {\"max\": N}"
            );
        }
        let e = json_body::<Claim>(b"{}", "a claim", "send {\"max\": N}").unwrap_err();
        assert!(
            e.message
                .starts_with("the body is not the JSON of a claim (missing field `max`"),
            "{}",
            e.message
        );
    }

    /// Hyper's bodiless 414 gets its JSON body; an answer of the routes
    /// (with its content type, or a body) is left as it is.
    #[test]
    fn a_bodiless_refusal_of_hypers_gets_a_json_body() {
        let hyper = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: Thu, 03 Dec 2026 17:19:13 GMT\r\n\r\n";
        let out = String::from_utf8(with_body(hyper, None).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 414 URI Too Long\r\nconnection: close\r\n"),
            "{head}"
        );
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(v["error"].as_str().unwrap().contains("too long"), "{body}");
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(with_body(ours, None).is_none());
        let with_a_body =
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n";
        assert!(with_body(with_a_body, None).is_none());
        assert!(with_body(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", None).is_none());
        assert!(with_body(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n", None).is_none());
    }

    /// A head is timed from its first byte until `\r\n\r\n`, however it
    /// is cut into reads; a body is not; the next request's head is,
    /// from its first byte after the answer (not after `100 Continue`).
    #[test]
    fn a_request_head_is_timed_until_it_is_whole_and_only_it() {
        let limit = std::time::Duration::from_secs(30);
        let mut h = head(limit);
        for line in ["GET / HTTP/1.1\r\n", "Host: x\r\n", "X-Trickle: 1\r\n"] {
            h.read(&mut line.as_bytes().to_vec());
            assert!(h.due.is_some(), "{line:?}");
        }
        h.read(&mut b"\r".to_vec());
        assert!(h.due.is_some());
        h.read(&mut b"\nbody\r\n\r\n".to_vec());
        assert!(h.due.is_none());
        // The body and an interim answer: not timed.
        h.wrote(b"HTTP/1.1 100 Continue\r\n\r\n");
        h.read(&mut b"more body".to_vec());
        assert!(h.due.is_none());
        // The answer; then the next request.
        h.wrote(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
        assert!(h.due.is_none());
        h.read(&mut b"GET /health HTTP/1.1\r\n".to_vec());
        assert!(h.due.is_some());
        h.read(&mut b"Host: x\r\n\r\n".to_vec());
        assert!(h.due.is_none());
    }

    /// A new connection's head, due `limit` from now.
    fn head(limit: std::time::Duration) -> Head {
        Head {
            limit,
            due: Some(tokio::time::Instant::now() + limit),
            tail: 0,
            framing: Framing::default(),
            unread: None,
        }
    }

    /// A head with both Content-Length and Transfer-Encoding, in either
    /// order, any case, whole or a byte at a time, is made unreadable at
    /// the second's colon and its 400 says why; one of them alone, the
    /// two in two requests, or the words in a value, pass untouched.
    #[test]
    fn a_head_with_both_framing_headers_is_refused_naming_them() {
        let limit = std::time::Duration::from_secs(30);
        let both = [
            "POST /api/bots HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST /api/bots HTTP/1.1\r\ntransfer-encoding: chunked\r\nHost: x\r\nCONTENT-LENGTH: 5\r\n\r\n",
            "POST /api/bots HTTP/1.1\ntransfer-encoding: chunked\ncontent-length: 5\n\n",
        ];
        for (i, text) in both.iter().enumerate() {
            for trickled in [false, true] {
                let mut h = head(limit);
                let mut bytes = text.as_bytes().to_vec();
                match trickled {
                    false => h.read(&mut bytes),
                    true => {
                        for b in bytes.chunks_mut(1) {
                            h.read(b);
                        }
                    }
                }
                assert_eq!(h.unread, Some(Unread::Framing), "{text:?}");
                assert_eq!(bytes.iter().filter(|b| **b == 0).count(), 1, "{text:?}");
                let second = ["transfer-encoding", "content-length", "content-length"][i];
                let at = text
                    .to_ascii_lowercase()
                    .find(&format!("{second}:"))
                    .unwrap();
                assert_eq!(bytes[at + second.len()], 0, "{text:?}");
            }
        }
        for text in [
            "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloPOST / HTTP/1.1\r\n",
            "GET / HTTP/1.1\r\nX-Note: content-length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            let mut h = head(limit);
            let mut bytes = text.as_bytes().to_vec();
            h.read(&mut bytes);
            if text.contains("hello") {
                h.wrote(b"HTTP/1.1 200 OK\r\n\r\n");
                h.read(&mut b"Transfer-Encoding: chunked\r\n\r\n".to_vec());
            }
            assert_eq!(h.unread, None, "{text:?}");
            assert_eq!(bytes, text.as_bytes(), "{text:?}");
        }
        let hyper = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        let (line, why) = Unread::Framing.said(16);
        let out = String::from_utf8(with_body(hyper, Some((line, &why))).unwrap()).unwrap();
        assert!(
            out.starts_with("HTTP/1.1 400 Bad Request\r\n")
                && out.contains("both Content-Length and Transfer-Encoding")
                && out.contains("RFC 9112"),
            "{out}"
        );
    }

    /// A Content-Length past what hyper holds (2^64 - 3), which it
    /// refuses as malformed (400) or as a header too large (431), is
    /// answered 413 naming the upload limit; one it holds is its own.
    #[test]
    fn a_content_length_past_any_limit_is_a_413_naming_the_limit() {
        let limit = std::time::Duration::from_secs(30);
        for (value, past) in [
            ("18446744073709551613", false),
            ("18446744073709551614", true),
            ("18446744073709551615", true),
            ("99999999999999999999999", true),
            ("3000000000", false),
        ] {
            let mut h = head(limit);
            let text = format!("POST /api/bots HTTP/1.1\r\nContent-Length: {value}\r\n\r\n");
            let mut bytes = text.clone().into_bytes();
            h.read(&mut bytes);
            assert_eq!(h.unread.is_some(), past, "{value}");
            assert_eq!(bytes, text.as_bytes(), "{value}");
        }
        for hyper in [
            &b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n",
        ] {
            let (line, why) = Unread::Length.said(16);
            let out = String::from_utf8(with_body(hyper, Some((line, &why))).unwrap()).unwrap();
            assert!(
                out.starts_with("HTTP/1.1 413 Payload Too Large\r\n")
                    && out.contains("at most 16 MiB"),
                "{out}"
            );
        }
    }

    /// The store's own words (a query, a path, a constraint's name) stay
    /// in the log.
    #[test]
    fn an_internal_failure_tells_the_client_nothing_of_its_cause() {
        let e = ApiError::internal("error returned from database: no such table: owners_secret");
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.message, intake::INTERNAL);
        assert!(!e.message.contains("owners_secret"));
    }
}
