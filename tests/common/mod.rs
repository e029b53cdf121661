//! The integration tests' harness: the workspace's test kit (`testkit/`).
#![allow(dead_code, unused_imports)]

pub use mcpool_testkit::*;
