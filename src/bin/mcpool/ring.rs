//! `mcpool ring`: which server each key lives on. (Placeholder until the placement work lands.)
#![allow(dead_code)]

/// The global options `ring` uses.
pub struct RingGlobals {
    pub servers: Vec<String>,
    pub weights: Option<Vec<u32>>,
    pub distribution: String,
    pub ketama_points: Option<u32>,
    pub no_sanitize_keys: bool,
}

/// Runs `ring`; returns the exit status.
pub fn run(_opts: &RingGlobals, _args: &[String]) -> i32 {
    eprintln!("mcpool ring: not implemented yet");
    2
}
