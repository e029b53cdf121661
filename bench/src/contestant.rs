//! Contestants: anything that can do a [`Work`] and say how long it took. The floor and the
//! Rust API run in this process; every other client (peers, the C ABI, language bindings) is
//! a subprocess driver listed in `bench/peers/peers.conf`, so adding one changes no code here.

use super::floor::Floor;
use super::peers::{PeerSpec, Subprocess};
use super::rust_api::{self, RustApi};
use super::work::{Answer, Work};

/// One contestant, started for one placement.
pub trait Contestant {
    /// Does `work`; `Err` when the contestant failed (it is then dropped for the scenario).
    fn run(&mut self, work: &Work) -> Result<Answer, String>;
    /// Resets the peak RSS of the process doing the work, where possible.
    fn reset_peak_rss(&mut self) {}
    /// Peak RSS, KiB, of the process doing the work since the last reset.
    fn peak_rss_kib(&mut self) -> Option<u64> {
        None
    }
    /// Current RSS, KiB, of the process doing the work.
    fn rss_kib(&mut self) -> Option<u64> {
        None
    }
    /// Waits until the process doing the work has stopped using the CPU (a driver's
    /// background work after it answered); how long it waited. In-process contestants
    /// have nothing of their own to wait for.
    fn settle(&mut self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// How a contestant is run.
#[derive(Clone, Debug)]
pub enum Kind {
    /// The raw socket floor, in process.
    Floor,
    /// `mcpool::Client`, in process, speaking the given protocol; multi-gets through the
    /// zero-copy `get_multi_each` when true, else through `get_multi` (owned values).
    RustApi(mcpool::Protocol, bool),
    /// A driver program speaking the line protocol.
    Peer(PeerSpec),
}

/// A contestant that may take part.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Name in tables and charts.
    pub name: String,
    /// How its client is configured (stated in the report).
    pub note: String,
    /// How it runs.
    pub kind: Kind,
}

/// Name of the floor in every table.
pub const FLOOR: &str = "floor";

impl Entry {
    /// The in-process contestants: the floor, mcpool through the API a user writes first
    /// (`get_multi`, owned values) and through its zero-copy path (`get_multi_each`).
    pub fn builtin() -> Vec<Entry> {
        vec![
            Entry {
                name: FLOOR.into(),
                note: "raw blocking TCP socket, TCP_NODELAY, one write + one read per request, \
                       text protocol, one connection per thread; bulk: C zlib at its default level (6)"
                    .into(),
                kind: Kind::Floor,
            },
            Entry {
                name: "mcpool".into(),
                note: rust_api::note(false),
                kind: Kind::RustApi(mcpool::Protocol::Text, false),
            },
            Entry {
                name: rust_api::ZERO_COPY.into(),
                note: rust_api::note(true),
                kind: Kind::RustApi(mcpool::Protocol::Text, true),
            },
        ]
    }

    /// The Rust API over the meta and binary protocols (selected with `--peers protocols`,
    /// or by name), for comparing the three wire protocols in one run.
    pub fn protocol_variants() -> Vec<Entry> {
        [mcpool::Protocol::Meta, mcpool::Protocol::Binary]
            .into_iter()
            .map(|p| Entry {
                name: format!("mcpool-{p}"),
                note: rust_api::note(false).replace("text protocol", &format!("{p} protocol")),
                kind: Kind::RustApi(p, false),
            })
            .collect()
    }

    /// Whether the sequential scenario's warm-up point (a fresh driver's first operations)
    /// is measured for it: the peers that say so in peers.conf (the JVM's).
    pub fn warm_up_row(&self) -> bool {
        matches!(&self.kind, Kind::Peer(spec) if spec.warm_up_row)
    }

    /// Starts the contestant against `server`; subprocesses are pinned to `cpus` with
    /// taskset (in-process contestants inherit the caller's pinning).
    pub fn start(&self, server: &str, cpus: Option<&str>) -> Result<Box<dyn Contestant>, String> {
        Ok(match &self.kind {
            Kind::Floor => Box::new(Floor::new(server)),
            Kind::RustApi(p, zero_copy) => Box::new(RustApi::new(server, *p, *zero_copy)),
            Kind::Peer(spec) => Box::new(Subprocess::start(spec, server, cpus)?),
        })
    }
}
