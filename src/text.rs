//! Text that a bot or a user wrote, shown safely: which characters would
//! not show as themselves. Below everything, as `host` is: the bot runner,
//! the protocol and the league's files all check names with it.

/// True for a character a terminal or a page would not show as itself: a
/// control character, one of Unicode's format characters (zero-width
/// spaces and joiners, the soft hyphen, bidirectional embeddings,
/// overrides and isolates, the byte order mark, tags), or its line and
/// paragraph separators. A bot's text shows them escaped, so that it can
/// neither hide a character in an option nor turn a line around.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c as u32,
            0xAD | 0x600..=0x605
                | 0x61C
                | 0x6DD
                | 0x70F
                | 0x180E
                | 0x200B..=0x200F
                | 0x2028..=0x202E
                | 0x2060..=0x2064
                | 0x2066..=0x206F
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
        )
}
