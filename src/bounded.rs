//! Lists read from a stranger's JSON (a worker's upload) with their
//! length bounded as they are read: a list past its bound is refused at
//! its next entry, before the rest is parsed, so that a body of small
//! entries cannot be turned into many times its size in memory.

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use std::marker::PhantomData;

/// The most lines of one bot's stderr kept in one game (the bot runner
/// counts the rest as left out) and read from a worker's upload of it
/// (the server refuses more as it reads them): a million lines of a byte
/// each is within the largest cap of a ladder (`stderr_kb` 16,384), and
/// more would be many times their bytes in memory.
pub const STDERR_LINES_MOST: usize = 1 << 20;

/// A JSON list of at most `N` entries, for `#[serde(deserialize_with =
/// "crate::bounded::at_most::<_, _, N>")]`; a longer one is an error that
/// says so.
pub fn at_most<'de, D, T, const N: usize>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct List<T, const N: usize>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for List<T, N> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {N} entries")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(N).min(1024));
            while let Some(x) = seq.next_element()? {
                if out.len() == N {
                    return Err(A::Error::custom(format!(
                        "a list of more than {N} entries: at most {N}"
                    )));
                }
                out.push(x);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(List::<T, N>(PhantomData))
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Deserialize)]
    struct Three {
        #[serde(deserialize_with = "super::at_most::<_, _, 3>")]
        x: Vec<u8>,
    }

    #[test]
    fn a_list_is_read_up_to_its_bound_and_refused_past_it() {
        let read = |s: &str| serde_json::from_str::<Three>(s).map(|t| t.x);
        assert_eq!(read(r#"{"x": []}"#).unwrap(), Vec::<u8>::new());
        assert_eq!(read(r#"{"x": [1, 2, 3]}"#).unwrap(), vec![1, 2, 3]);
        let e = read(r#"{"x": [1, 2, 3, 4, 5]}"#).unwrap_err().to_string();
        assert!(e.contains("more than 3 entries: at most 3"), "{e}");
        // Where it stopped: at the fourth entry, not the list's end.
        assert!(e.contains("column 19"), "{e}");
        let e = read(r#"{"x": 7}"#).unwrap_err().to_string();
        assert!(e.contains("a list of at most 3 entries"), "{e}");
    }
}
