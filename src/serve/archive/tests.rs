//! Tests of the bot folder archive.
