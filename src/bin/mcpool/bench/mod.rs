//! `mcpool bench`: mcpool against other clients and the raw socket floor. (Placeholder.)

use crate::Globals;

/// Runs the benchmark; returns the exit status.
pub fn run(_g: &Globals, _args: &[String]) -> i32 {
    eprintln!("mcpool bench: not implemented yet");
    2
}
