//! Text that a bot or a user wrote, shown safely: which characters would
//! not show as themselves. Below everything, as `host` is: the bot runner,
//! the protocol and the league's files all check names with it.

/// The first character of `text`, after any white space, when a
/// spreadsheet opening games.csv would take the text for a formula and
/// run it: `=`, `+`, `-` or `@` (the rule the referee applies to a
/// hello's name and version, `referee::player::check_not_formula`, and
/// the server to the versions of an uploaded row).
pub fn formula_lead(text: &str) -> Option<char> {
    text.trim_start()
        .chars()
        .next()
        .filter(|c| matches!(c, '=' | '+' | '-' | '@'))
}

/// What a CSV reader's default reading takes a text for, where it does
/// not read it as text ([`csv_reads_as`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvReading {
    /// `NA`, `null`, `NaN`, `None`, `n/a`, `#N/A`, ... in any case.
    Missing,
    /// `TRUE`, `FALSE` in any case, `T`, `F` (R's logicals).
    Boolean,
    /// `123`, `007`, `1.10`, `1e5`, `inf`, `0x1F`.
    Number,
}

impl CsvReading {
    /// "a missing value", "a boolean" or "a number".
    pub fn what(self) -> &'static str {
        match self {
            CsvReading::Missing => "a missing value",
            CsvReading::Boolean => "a boolean",
            CsvReading::Number => "a number",
        }
    }
}

/// What a CSV reader's default reading (R's `read.csv` and readr's
/// `read_csv`, pandas' `read_csv`) takes `text` for when it is not read
/// as text, or `None`. A missing value loses the bot's seat in every game;
/// a column of booleans or numbers is read as such (and `1.1` and `1.10`
/// become one bot). The rule for a name written into games.csv's seat
/// columns and the tables' `bot` columns.
pub fn csv_reads_as(text: &str) -> Option<CsvReading> {
    const MISSING: [&str; 14] = [
        "na", "n/a", "nan", "null", "none", "nil", "#n/a", "#n/a n/a", "#na", "<na>", "1.#ind",
        "1.#qnan", "-1.#ind", "-1.#qnan",
    ];
    const BOOLEAN: [&str; 2] = ["true", "false"];
    let word = text.trim().to_ascii_lowercase();
    let unsigned = word.trim_start_matches(['+', '-']);
    let hex = unsigned
        .strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()));
    if MISSING.contains(&unsigned) {
        Some(CsvReading::Missing)
    } else if BOOLEAN.contains(&word.as_str()) || ["T", "F"].contains(&text.trim()) {
        Some(CsvReading::Boolean)
    } else if unsigned.parse::<f64>().is_ok() || hex {
        Some(CsvReading::Number)
    } else {
        None
    }
}

/// True for a character a terminal or a page would not show as itself: a
/// control character, one of Unicode's format characters (zero-width
/// spaces and joiners, the soft hyphen, bidirectional embeddings,
/// overrides and isolates, the byte order mark, tags), its line and
/// paragraph separators, or another of its Default_Ignorable_Code_Point
/// characters (DerivedCoreProperties.txt: the combining grapheme joiner,
/// the Hangul fillers, the shorthand format controls, the unassigned
/// ignorables), but for the variation selectors (U+FE00-FE0F,
/// U+E0100-E01EF, Mongolian's U+180B-180D and U+180F): after a letter or
/// an emoji they choose how it is drawn (`❤️` is U+2764 U+FE0F), and
/// alone they show nothing, which [`shows_nothing`] refuses in a name. A
/// bot's text shows hidden characters escaped, so that it can neither
/// hide a character in an option nor turn a line around; no name may hold
/// one.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c as u32,
            0xAD | 0x34F
                | 0x600..=0x605
                | 0x61C
                | 0x6DD
                | 0x70F
                | 0x115F..=0x1160
                | 0x17B4..=0x17B5
                | 0x180E
                | 0x200B..=0x200F
                | 0x2028..=0x202E
                | 0x2060..=0x206F
                | 0x3164
                | 0xFEFF
                | 0xFFA0
                | 0xFFF0..=0xFFFB
                | 0x110BD
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0000..=0xE00FF
                | 0xE01F0..=0xE0FFF
        )
}

/// True when `text` would show nothing where it is printed: only white
/// space, hidden characters ([`is_hidden`]), the braille pattern blank
/// (U+2800, a blank that is not white space) and characters of no width
/// (combining marks with no letter under them). No name may be such a
/// text (protocol.md: a hello's `name`; a league's bot names): it would
/// pass for no one.
pub fn shows_nothing(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_whitespace() || draws_nothing(c) || c == '\u{2800}')
}

/// True for a character that draws nothing of its own: a hidden one
/// ([`is_hidden`]) or one of no width (a combining mark, drawn on the
/// character before it). A text that holds one looks like the text
/// without it.
pub fn draws_nothing(c: char) -> bool {
    is_hidden(c) || unicode_width::UnicodeWidthChar::width(c) == Some(0)
}

/// How many columns `s` takes on a terminal: a CJK character two, an
/// accent on the letter before it none (Unicode's East Asian Width, by
/// the `unicode-width` crate). Tables of names pad by it, not by bytes or
/// characters, so that a column of `囲碁bot` and `élan` stays straight.
pub fn columns(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` followed by spaces up to `width` columns ([`columns`]); as it is
/// when already as wide.
pub fn pad_to(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(s.len() + width);
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(columns(s))));
    out
}

/// A TOML reader's message in the words of the docs rather than Rust's:
/// `expected i64` is "expected a whole number", `expected struct RawTime`
/// "expected a table", `expected a sequence` "expected a list".
pub fn plain_toml(message: &str) -> String {
    plain_words(message, "a table, {...}")
}

/// A JSON reader's message in the words of the docs, as [`plain_toml`]
/// (a struct or map expected is "an object, {...}").
pub fn plain_json(message: &str) -> String {
    plain_words(message, "an object, {...}")
}

/// `value` read as a `T`; a fault names the field where it is (`names[1]`)
/// in the docs' words ([`plain_json`]), not Rust's.
pub fn json_as<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(json_fault)
}

/// `text` (one JSON value) read as a `T`, a fault named as by [`json_as`],
/// with its line and column.
pub fn json_from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(json_fault)?;
    de.end().map_err(|e| plain_json(&e.to_string()))?;
    Ok(value)
}

fn json_fault(e: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let why = plain_json(&e.inner().to_string());
    match path.as_str() {
        "." | "" => why,
        _ => format!("`{path}`: {why}"),
    }
}

fn plain_words(message: &str, table: &str) -> String {
    const NON_NEGATIVE: &str = "expected a whole number (0 or more)";
    const WORDS: &[(&str, &str)] = &[
        ("expected u64", NON_NEGATIVE),
        ("expected u32", NON_NEGATIVE),
        ("expected u16", NON_NEGATIVE),
        ("expected u8", NON_NEGATIVE),
        ("expected usize", NON_NEGATIVE),
        ("expected i64", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected a list, [...]"),
    ];
    let mut out = message.to_string();
    for (rust, plain) in WORDS {
        out = out.replace(rust, plain);
    }
    out = out.replace("expected a map", &format!("expected {table}"));
    const STRUCT: &str = "expected struct ";
    while let Some(at) = out.find(STRUCT) {
        let name = &out[at + STRUCT.len()..];
        let end = at
            + STRUCT.len()
            + name
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(name.len());
        out.replace_range(at..end, &format!("expected {table}"));
    }
    unseen_controls(&did_you_mean(&out))
}

/// A message that quotes a file's line, with the control characters in
/// it (a NUL, an escape) shown escaped rather than sent to the terminal,
/// and named after it: TOML allows none but tab, and the quoted line
/// otherwise looks right.
fn unseen_controls(message: &str) -> String {
    let is_unseen = |c: char| c.is_control() && !matches!(c, '\n' | '\t' | '\r');
    let Some(first) = message.chars().find(|&c| is_unseen(c)) else {
        return message.to_string();
    };
    let shown: String = message
        .chars()
        .map(|c| match is_unseen(c) {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect();
    format!(
        "{}\n(the file holds a control character, U+{:04X}, shown escaped above: TOML allows none but tab)",
        shown.trim_end(),
        u32::from(first)
    )
}

/// serde's "unknown field `rouds`, expected one of `name`, `rounds`, ..."
/// with the likeliest of them named next to the typo: "unknown field
/// `rouds` (did you mean `rounds`?), expected one of ...". Variants too.
fn did_you_mean(message: &str) -> String {
    for unknown in ["unknown field `", "unknown variant `"] {
        let Some(at) = message.find(unknown) else {
            continue;
        };
        let typo_at = at + unknown.len();
        let Some(typo_len) = message[typo_at..].find('`') else {
            continue;
        };
        let typo = &message[typo_at..typo_at + typo_len];
        let rest = &message[typo_at + typo_len + 1..];
        let Some(list) = rest.strip_prefix(", expected ") else {
            continue;
        };
        // The list runs to the end of serde's sentence.
        let list = list.split(['\n', ';']).next().unwrap_or(list);
        let known = list.split('`').skip(1).step_by(2);
        if let Some(meant) = closest(typo, known) {
            let mut out = message.to_string();
            out.insert_str(
                typo_at + typo_len + 1,
                &format!(" (did you mean `{meant}`?)"),
            );
            return out;
        }
    }
    message.to_string()
}

/// The candidate closest to `word`, if one is close enough to be what was
/// meant (Jaro-Winkler similarity of at least 0.8, as clap's own
/// suggestions use): a mistyped bot name's "did you mean".
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Reads a text file a user wrote (a league file, a book, a bot.toml). A
/// file that is not UTF-8 is refused with the line and column of its first
/// bad byte, and that byte, so that the user can find it: the standard
/// library's own error names neither.
pub fn read_utf8(path: &std::path::Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        // Columns count characters, as an editor does.
        let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "line {line}, column {column}: byte 0x{:02X} is not UTF-8 (save the file as UTF-8)",
                bytes[at]
            ),
        )
    })
}

/// What a name (a bot's, an option) looks like: its compatibility form (Unicode's NFKC:
/// full-width `ｒａ` is `ra`, `ǆ` is `dž`), in lower case, then its
/// confusables' skeleton (Unicode's UTS #39, as rustc's lint of
/// look-alike identifiers: a Cyrillic `а` is a Latin `a`), so that
/// `café` written as `e` and an accent, `R1` against `r1`, or `rа`
/// against `ra` are seen as one.
///
/// An accent is seen (`café` is not `cafe`), but a letter of another
/// script that the confusables table takes for a small capital, though it
/// looks like a Latin letter in a name (Cyrillic `т` as `ᴛ`), is that
/// letter.
pub fn look_of(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let plain = name.nfkc().collect::<String>().to_lowercase();
    unicode_security::skeleton(&plain)
        .collect::<String>()
        .to_lowercase()
        .chars()
        .map(|c| match c {
            // Cyrillic `т`, whose skeleton is a small capital `ᴛ`.
            '\u{1d1b}' => 't',
            c => c,
        })
        .collect()
}

/// A name a user or a bot gave, as a message shows it between backticks:
/// escaped (no control character or backtick reaches the terminal), and
/// cut to its first 64 characters, its length said, when longer (a
/// 5,000-byte name is not echoed whole).
pub fn shown_name(name: &str) -> String {
    const SHOWN: usize = 64;
    let escaped = |s: &str| s.escape_debug().to_string().replace('`', "'");
    match name.char_indices().nth(SHOWN) {
        None => escaped(name),
        Some((cut, _)) => format!("{}… ({} bytes)", escaped(&name[..cut]), name.len()),
    }
}

/// `a` as one word for a POSIX shell: as it is when it needs no quoting,
/// else in single quotes. Every command a message suggests quotes its
/// words with it, so that a folder named with a space can be pasted.
pub fn shell_word(a: &str) -> String {
    match !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@".contains(c))
    {
        true => a.to_string(),
        false => format!("'{}'", a.replace('\'', "'\\''")),
    }
}

/// `path` as one word for a POSIX shell ([`shell_word`]).
pub fn shell_path(path: &std::path::Path) -> String {
    shell_word(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long name is cut where a character ends, its length said; a
    /// short one is shown whole, escaped.
    #[test]
    fn a_long_name_is_shown_cut() {
        assert_eq!(shown_name("greedy`2\n"), "greedy'2\\n");
        let long = "é".repeat(5_000);
        let shown = shown_name(&long);
        assert_eq!(shown, format!("{}… (10000 bytes)", "é".repeat(64)));
        assert_eq!(shown_name(&"x".repeat(64)), "x".repeat(64));
    }

    /// The names R's and pandas' default readings of a CSV drop or turn
    /// into numbers (the values pandas lists as missing, R's `NA`, the
    /// logicals `T`/`F`/`TRUE`/`FALSE`, numbers in every form R's
    /// `type.convert` takes), and names that merely start like them.
    #[test]
    fn names_a_csv_reader_would_not_read_as_text() {
        for (name, kind) in [
            ("NA", CsvReading::Missing),
            ("n/a", CsvReading::Missing),
            ("#N/A", CsvReading::Missing),
            ("<NA>", CsvReading::Missing),
            ("NaN", CsvReading::Missing),
            ("null", CsvReading::Missing),
            ("None", CsvReading::Missing),
            ("1.#QNAN", CsvReading::Missing),
            ("TRUE", CsvReading::Boolean),
            ("False", CsvReading::Boolean),
            ("T", CsvReading::Boolean),
            ("123", CsvReading::Number),
            ("007", CsvReading::Number),
            ("1.10", CsvReading::Number),
            ("1e5", CsvReading::Number),
            (".5", CsvReading::Number),
            ("1.", CsvReading::Number),
            ("Inf", CsvReading::Number),
            ("infinity", CsvReading::Number),
            ("0x1F", CsvReading::Number),
        ] {
            assert_eq!(csv_reads_as(name), Some(kind), "{name}");
        }
        for name in [
            "NA-bot",
            "nan2",
            "true-random",
            "Tim",
            "t",
            "f",
            "1st",
            "2x",
            "0x",
            "0xg",
            "v1.0",
            "1e",
            "e5",
            "random-rust",
            "x",
        ] {
            assert_eq!(csv_reads_as(name), None, "{name}");
        }
    }

    /// Unicode's Default_Ignorable_Code_Point characters are hidden, each
    /// range at both ends; letters, marks and emoji are not.
    #[test]
    fn default_ignorable_characters_are_hidden() {
        for c in [
            0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x200B, 0x200F, 0x202A,
            0x202E, 0x2060, 0x2065, 0x206F, 0x3164, 0xFEFF, 0xFFA0, 0xFFF0, 0xFFF8, 0x1BCA0,
            0x1BCA3, 0x1D173, 0x1D17A, 0xE0000, 0xE0001, 0xE007F, 0xE01F0, 0xE0FFF,
        ] {
            let c = char::from_u32(c).unwrap();
            assert!(is_hidden(c), "U+{:04X} not hidden", u32::from(c));
        }
        for c in [
            'a',
            'é',
            '\u{301}',
            '\u{2800}',
            '囲',
            '\u{2764}',
            ' ',
            '\u{3000}',
            '\u{fe0f}',
            '\u{e0100}',
            '\u{180b}',
        ] {
            assert!(!is_hidden(c), "U+{:04X} hidden", u32::from(c));
        }
    }

    /// A text of white space, blanks, hidden characters and marks of no
    /// width shows nothing; one visible character is enough.
    #[test]
    fn a_text_of_blanks_and_marks_shows_nothing() {
        for text in [
            "",
            " \u{a0}\u{3000}",
            "\u{2800}\u{2800}",
            "\u{301}\u{301}",
            "\u{3164}",
            "\u{115f}\u{1160}",
            "\u{ffa0}",
            "\u{34f}",
            "\u{fe0f}",
            "\u{e0100}",
            "\u{200b} \u{2800}\u{301}",
        ] {
            assert!(shows_nothing(text), "{text:?}");
        }
        for text in ["a", "\u{2800}x", "e\u{301}", "囲碁", "\u{2764}\u{fe0f}"] {
            assert!(!shows_nothing(text), "{text:?}");
        }
    }

    #[test]
    fn toml_messages_are_said_in_plain_words() {
        let said = plain_toml(
            "invalid type: string \"2\", expected i64; invalid value: integer `-1`, expected u64; invalid type: integer `5`, expected struct RawTime; expected a sequence",
        );
        assert_eq!(
            said,
            "invalid type: string \"2\", expected a whole number; invalid value: integer `-1`, expected a whole number (0 or more); invalid type: integer `5`, expected a table, {...}; expected a list, [...]"
        );
    }

    /// A control character in a quoted line is shown escaped and named,
    /// not sent to the terminal.
    #[test]
    fn a_control_character_in_a_toml_message_is_shown_escaped_and_named() {
        let said = plain_toml(
            "TOML parse error at line 2, column 13\n2 | bots = [\"a\",\u{0}\"b\"]\ninvalid array\n",
        );
        assert_eq!(
            said,
            "TOML parse error at line 2, column 13\n2 | bots = [\"a\",\\u{0}\"b\"]\ninvalid array\n(the file holds a control character, U+0000, shown escaped above: TOML allows none but tab)"
        );
        assert_eq!(plain_toml("a\tb\r\nc\n"), "a\tb\r\nc\n");
    }

    /// Names that differ by a letter of another script that looks like a
    /// Latin one look alike; an accent is seen.
    #[test]
    fn a_cyrillic_te_looks_like_a_latin_t() {
        let plain = look_of("greedy-rust");
        assert_ne!(look_of("greedy-rust\u{301}"), plain);
        assert_eq!(look_of("greedy-rus\u{442}"), plain);
        assert_eq!(look_of("gr\u{435}\u{435}dy-rust"), plain);
        assert_ne!(look_of("greedy-rusk"), plain);
    }

    #[test]
    fn a_typo_finds_its_name_and_nonsense_finds_none() {
        let names = ["random-rust", "greedy-rust", "random-python"];
        assert_eq!(closest("radnom-rust", names), Some("random-rust"));
        assert_eq!(closest("greedy", names), Some("greedy-rust"));
        assert_eq!(closest("zzz", names), None);
    }

    #[test]
    fn a_misspelt_key_is_told_the_key_it_likely_meant() {
        assert_eq!(
            plain_toml("unknown field `rouds`, expected one of `name`, `rounds`, `seed`"),
            "unknown field `rouds` (did you mean `rounds`?), expected one of `name`, `rounds`, `seed`"
        );
        assert_eq!(
            plain_toml("unknown variant `of`, expected `on` or `off`"),
            "unknown variant `of` (did you mean `off`?), expected `on` or `off`"
        );
        // Nothing close: as serde said it.
        let far = "unknown field `zzz`, expected one of `name`, `rounds`";
        assert_eq!(plain_toml(far), far);
    }

    /// The first bad byte is named with its line and column.
    #[test]
    fn a_file_that_is_not_utf8_is_told_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, b"name = \"x\"\nbots = [\"\xc3\xa9\xff\"]\n").unwrap();
        let e = read_utf8(&path).unwrap_err().to_string();
        assert_eq!(
            e,
            "line 2, column 11: byte 0xFF is not UTF-8 (save the file as UTF-8)"
        );
        std::fs::write(&path, "été\n").unwrap();
        assert_eq!(read_utf8(&path).unwrap(), "été\n");
    }
}
