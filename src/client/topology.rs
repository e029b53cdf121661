//! The topology: the servers of the client and the placement ring over them, as one
//! immutable snapshot. The client holds the current one in a cell that is cheap to load;
//! every call loads it once at its start and keeps it to its end, so a server index (which
//! means something only within one snapshot) never meets another snapshot's list.

use crate::route::Router;
use crate::server::Server;
use std::sync::Arc;

/// The servers (in configuration order) and the ring that places keys on them.
pub(crate) struct Topology {
    /// Shared between snapshots: a server still present after a change keeps its object
    /// (its pool, connections, health and counters).
    pub servers: Vec<Arc<Server>>,
    /// Key → index into `servers`.
    pub router: Router,
}
