//! A state snapshot written straight into a byte buffer, without a
//! `serde_json::Value` tree: the referee sends one per decision, and
//! building the tree (a map per object, a string per key) cost more than
//! the rest of the referee's work on a decision.
//!
//! The bytes are what serde_json writes for the same value: compact JSON
//! with every object's keys in byte order (serde_json's `Map` is sorted).
//! These bytes are the one place a state's JSON is made: a game's
//! `snapshot()` value is read back from them. [`Obj`] checks the key order
//! in debug builds, and the tests check, over random games of every
//! variant, that serde_json writes the value read back byte for byte as
//! these.

/// One JSON object being written: keys must come in byte order. The
/// object's `extra` fields (scalars of the caller's, such as the game's
/// `variant` and `ply`) are slotted in among them in order.
pub struct Obj<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
    extra: &'b [(&'static str, Scalar<'b>)],
    #[cfg(debug_assertions)]
    last: Vec<u8>,
}

/// A scalar value of an extra field.
#[derive(Clone, Copy, Debug)]
pub enum Scalar<'a> {
    Str(&'a str),
    Uint(u64),
    Null,
}

impl<'b> Obj<'b> {
    /// Opens an object in `buf`.
    pub fn new(buf: &'b mut Vec<u8>) -> Obj<'b> {
        Obj::with_extra(buf, &[])
    }

    /// Opens an object in `buf` that also holds `extra` (sorted by key).
    pub fn with_extra(buf: &'b mut Vec<u8>, extra: &'b [(&'static str, Scalar<'b>)]) -> Obj<'b> {
        buf.push(b'{');
        Obj {
            buf,
            first: true,
            extra,
            #[cfg(debug_assertions)]
            last: Vec::new(),
        }
    }

    /// Writes the key `key` (after any extra field that sorts before it)
    /// and returns the buffer for its value.
    pub fn key(&mut self, key: &str) -> &mut Vec<u8> {
        while let Some(&(k, v)) = self.extra.first() {
            if k.as_bytes() >= key.as_bytes() {
                break;
            }
            self.extra = &self.extra[1..];
            self.raw_key(k);
            scalar(self.buf, v);
        }
        self.raw_key(key);
        self.buf
    }

    fn raw_key(&mut self, key: &str) {
        #[cfg(debug_assertions)]
        {
            debug_assert!(
                self.first || self.last.as_slice() < key.as_bytes(),
                "snapshot keys out of order: {key}"
            );
            self.last.clear();
            self.last.extend_from_slice(key.as_bytes());
        }
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        string(self.buf, key);
        self.buf.push(b':');
    }

    /// A field holding a string.
    pub fn str(&mut self, key: &str, value: &str) {
        let b = self.key(key);
        string(b, value);
    }

    /// A field holding a number.
    pub fn uint(&mut self, key: &str, value: u64) {
        let b = self.key(key);
        uint(b, value);
    }

    /// A field holding `true` or `false`.
    pub fn bool(&mut self, key: &str, value: bool) {
        self.key(key)
            .extend_from_slice(if value { b"true" } else { b"false" });
    }

    /// A field holding `null`.
    pub fn null(&mut self, key: &str) {
        self.key(key).extend_from_slice(b"null");
    }

    /// A field holding an array of numbers.
    pub fn uints(&mut self, key: &str, values: &[u8]) {
        let b = self.key(key);
        uints(b, values);
    }

    /// A field holding an object, written by `f`.
    pub fn obj(&mut self, key: &str, f: impl FnOnce(&mut Obj<'_>)) {
        let b = self.key(key);
        let mut o = Obj::new(b);
        f(&mut o);
        o.end();
    }

    /// Closes the object, after the extra fields not written yet.
    pub fn end(mut self) {
        while let Some(&(k, v)) = self.extra.first() {
            self.extra = &self.extra[1..];
            self.raw_key(k);
            scalar(self.buf, v);
        }
        self.buf.push(b'}');
    }
}

fn scalar(buf: &mut Vec<u8>, v: Scalar<'_>) {
    match v {
        Scalar::Str(s) => string(buf, s),
        Scalar::Uint(n) => uint(buf, n),
        Scalar::Null => buf.extend_from_slice(b"null"),
    }
}

/// A number in decimal.
pub fn uint(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// An array of numbers.
pub fn uints(buf: &mut Vec<u8>, values: &[u8]) {
    buf.push(b'[');
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        uint(buf, u64::from(v));
    }
    buf.push(b']');
}

/// A JSON string, escaped as serde_json escapes it.
pub fn string(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    // Runs of bytes that need no escape are copied whole (names and
    // notation usually are one run).
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'"' && b != b'\\' && b >= 0x20 {
            continue;
        }
        buf.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            0x08 => buf.extend_from_slice(b"\\b"),
            0x0c => buf.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[usize::from(b >> 4)]);
                buf.push(HEX[usize::from(b & 0xf)]);
            }
        }
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_numbers_are_written_as_serde_json_writes_them() {
        for s in ["", "a", "q\"b\\c", "\n\r\t\u{8}\u{c}\u{1}\u{1f}", "é✓"] {
            let mut buf = Vec::new();
            string(&mut buf, s);
            assert_eq!(buf, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        for n in [0u64, 7, 10, 255, 1000, u64::MAX] {
            let mut buf = Vec::new();
            uint(&mut buf, n);
            assert_eq!(buf, serde_json::to_vec(&n).unwrap());
        }
    }

    #[test]
    fn extra_fields_are_slotted_in_by_key() {
        let mut buf = Vec::new();
        let extra = [("b", Scalar::Uint(2)), ("d", Scalar::Null)];
        let mut o = Obj::with_extra(&mut buf, &extra);
        o.str("a", "x");
        o.obj("c", |o| o.bool("z", true));
        o.end();
        assert_eq!(buf, br#"{"a":"x","b":2,"c":{"z":true},"d":null}"#);
    }
}
