//! PLACEHOLDER: being written (issue 2). Replace this whole file.

use super::{EngineError, Outcome, Rules, Seat, Settings, Variant};

#[derive(Clone, Debug)]
pub struct Diffusion;

impl Rules for Diffusion {
    type Opt = u8;
    const VARIANT: Variant = Variant::Diffusion;
    fn new(_settings: &Settings) -> Result<Self, EngineError> {
        Err(EngineError::UnknownVariant("not yet implemented".into()))
    }
    fn players(&self) -> usize {
        2
    }
    fn to_decide(&self) -> Option<Seat> {
        None
    }
    fn decision_kind(&self) -> &'static str {
        "none"
    }
    fn options(&self, out: &mut Vec<u8>) {
        out.clear()
    }
    fn apply(&mut self, _opt: u8) -> Result<(), EngineError> {
        Err(EngineError::GameOver)
    }
    fn outcome(&self) -> Option<Outcome> {
        None
    }
    fn plies(&self) -> u32 {
        0
    }
    fn notation(&self, opt: u8) -> String {
        opt.to_string()
    }
    fn parse(&self, s: &str) -> Result<u8, EngineError> {
        Err(EngineError::Unparsable(s.into()))
    }
    fn snapshot(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn render(&self) -> String {
        String::new()
    }
    fn check_invariants(&self) -> Result<(), String> {
        Ok(())
    }
}
