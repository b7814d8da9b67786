//! Tokens: made from the system's random numbers, kept as their SHA-256 only.

/// The SHA-256 (hex) of a token: what the store keeps of it.
pub fn token_hash(token: &str) -> String {
    crate::wire::hex_sha256(token.as_bytes())
}

/// A new random token: 32 bytes from the system's generator, in hex.
pub fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}
