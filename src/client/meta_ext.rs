//! What only the meta protocol offers about one item (issue 21 item 6): explicit CAS
//! versions (`E`, memcached 1.6.27+) on stores, deletes and counters, and an item's metadata
//! (`h`, `l`, `t`, `c`, `s`, `f`) without its value. Each is one request built here and
//! read by the meta dialect; the other dialects refuse them (`Error::Unsupported`).

use super::observe::{self, Side};
use super::Client;
use crate::dialect::Request;
use crate::error::Result;
use crate::item::{ItemInfo, StoreOutcome};
use crate::proto::ascii::StoreCommand;
use crate::route::proxy_pool::Resend;
use crate::trace::{Op, OpOutcome};

impl Client {
    /// A store command that gives the item the CAS version `version` instead of the
    /// server's next one (meta `E`): for writers that keep several pools consistent, so the
    /// same item carries the same CAS everywhere. The value is encoded (and compressed) as
    /// [`Client::store`] does (`flags` as there). Meta protocol only, and memcached 1.6.27 or later: an older
    /// server fails the call with `Error::Unsupported` naming the version it reports, before
    /// anything is stored (the version is asked once per connection).
    pub fn store_with_version(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        flags: u32,
        ttl: u32,
        version: u64,
    ) -> Result<StoreOutcome> {
        self.require_meta(format_args!("{}_with_version", cmd.name()))?;
        check_version(version)?;
        let key = key.as_ref();
        let (data, flags) = match self.encode_value(cmd, key, value.as_ref(), flags) {
            Ok(encoded) => encoded,
            Err(e) => return self.refused(super::commands::store_op(cmd), 1, e),
        };
        let start = self.call_start();
        let t = &*self.topology();
        let mut at = None;
        let r = self.wire_key(key).and_then(|wire| {
            let req = Request::Store {
                cmd,
                key: &wire,
                flags,
                ttl,
                data: &data,
                quiet: false,
                version: Some(version),
            };
            self.exchange_key(t, &wire, Resend::IfUnsent, &req, &mut at)
                .map_err(|e| self.ttl_refused(cmd, key, e))?
                .stored()
        });
        self.finish_store(t, start, cmd, at, r, self.inner.config.fail_open)
    }

    /// [`Client::delete`] with an explicit CAS version (meta `E`, memcached 1.6.27+; see
    /// [`Client::store_with_version`]). True if the key existed.
    pub fn delete_with_version(&self, key: impl AsRef<[u8]>, version: u64) -> Result<bool> {
        self.require_meta("delete_with_version")?;
        check_version(version)?;
        self.one_key(
            Op::Delete,
            key.as_ref(),
            Resend::IfUnsent,
            |key| Request::Delete {
                key,
                quiet: false,
                version: Some(version),
            },
            |o| o.existed(),
            Some(|| false),
            observe::found,
        )
    }

    /// incr (`incr` true) or decr with an explicit CAS version for the counter (meta `E`,
    /// memcached 1.6.27+; see [`Client::store_with_version`]): the new value, or `None` if
    /// the counter is missing.
    pub fn arith_with_version(
        &self,
        incr: bool,
        key: impl AsRef<[u8]>,
        delta: u64,
        version: u64,
    ) -> Result<Option<u64>> {
        self.require_meta("arith_with_version")?;
        check_version(version)?;
        self.one_key(
            if incr { Op::Incr } else { Op::Decr },
            key.as_ref(),
            Resend::IfUnsent,
            |key| Request::Arith {
                incr,
                key,
                delta,
                init: None,
                version: Some(version),
            },
            |o| o.counter(),
            Some(|| None),
            |n| {
                let hit = n.is_some();
                (
                    if hit { OpOutcome::Hit } else { OpOutcome::Miss },
                    usize::from(hit),
                )
            },
        )
    }

    /// An item's metadata without its value (`mg <key> h l t c s f u`): whether it was read
    /// before, seconds since its last access, time to live (`None`: never expires), CAS,
    /// stored size and flags; `None` for a miss. The request does not count as an access
    /// (`u`: no LRU bump), so it changes neither `hit_before` nor `last_access`. Meta
    /// protocol only (memcached 1.6+).
    ///
    /// Of an invalidated item it does take the recompute token, when no read has yet
    /// (memcached gives it to the first read, whatever it asks), and keeps it, as every
    /// read that returns a CAS does: see [`Client::invalidate`].
    pub fn meta_info(&self, key: impl AsRef<[u8]>) -> Result<Option<ItemInfo>> {
        self.require_meta("meta_info")?;
        self.one_key_as(
            Op::MetaInfo,
            Side::Read,
            key.as_ref(),
            Resend::IfUnsent,
            |key| Request::Info { key },
            |o| o.info(),
            Some(|| None),
            |i| {
                let hit = i.is_some();
                (
                    if hit { OpOutcome::Hit } else { OpOutcome::Miss },
                    usize::from(hit),
                )
            },
        )
    }
}

/// A CAS version a caller gives (`E`) is one memcached could have given: not 0, which
/// memcached never gives an item (a `cas` of 0 is refused likewise); stored, the item read
/// back with a CAS of 0, which every reader (gets, meta_info, leases) takes for a server
/// run with `-C` (tester finding metafeat 4).
fn check_version(version: u64) -> Result<()> {
    if version == 0 {
        return Err(crate::error::Error::InvalidArgument {
            what: "version",
            reason: "0 is no CAS version (memcached never gives an item CAS 0, and a \
                     reader would find no CAS): give 1 or more"
                .into(),
        });
    }
    Ok(())
}
