//! `proxy-pool`: the servers are interchangeable proxies (mcrouter, twemproxy/nutcracker,
//! memcached's built-in proxy), not shards. Every key goes to the first server of the list
//! whose health allows a request (the local proxy should be listed first); a proxy marked
//! dead by the usual health rules (`failure_limit` consecutive connect errors, socket errors
//! or timeouts) is skipped until its `retry_timeout` back-off has passed, and traffic comes
//! back to it with the first request that then succeeds there. The failover policy does not
//! apply: moving to the next proxy is the point of the mode.
//!
//! A multi-key call goes to one proxy, in one request (the proxy is chosen once per call).
//!
//! A request that failed on a proxy with a connect error, a socket error or a timeout is
//! sent once more to the next healthy proxy, within the same operation deadline, when that
//! cannot change its outcome (`may_resend`):
//!
//! - any command, when none of it was sent: the connection was refused or timed out, or
//!   every pooled connection to the proxy turned out closed and a new one could not be made;
//! - after it was (or may have been) sent, only reads with no effect (`Resend::Always`):
//!   `get` and `gets`, while no value was handed to the caller yet;
//! - never after sending: every command with an effect. A store (`set` too), `touch`, `gat`
//!   or `gats` held up in a stalled proxy may reach the backend after the copy sent again
//!   and after later writes: an older value, or an older expiry, would win (tester finding
//!   fleet 2). `add`, `replace`, `append`, `prepend`, `cas`, `incr`, `decr` done twice also
//!   store twice, or answer `NOT_STORED` / `EXISTS` / a doubled count; `delete` would answer
//!   that the key did not exist; leases and `invalidate` likewise.
//!
//! Multi-key calls (`get_multi`, `gets_multi`, `set_multi`, `delete_multi`) are resent only
//! when nothing was sent; `set_multi_noreply` is not resent; `flush_all`, `version` and
//! `stats` address every proxy and are never resent.

use crate::error::Error;

/// The distribution's name, as accepted by `Distribution::from_str`.
pub const NAME: &str = "proxy-pool";

/// The first server `alive` allows, in list order.
pub(crate) fn first_alive(n: usize, alive: &dyn Fn(usize) -> bool) -> Option<usize> {
    (0..n).find(|&i| alive(i))
}

/// When a request that failed on one proxy may go to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Only when none of it was sent.
    IfUnsent,
    /// Also after it was sent: a read with no effect, whose answer done twice is that of once.
    Always,
}

/// How far a failed attempt got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reached {
    /// No byte of the request was written (checkout or connect failed).
    NotSent,
    /// The request was (or may have been) written.
    Sent,
    /// Part of the answer was already handed to the caller.
    Answered,
}

/// Whether a request of class `resend` that failed with `e` after getting as far as
/// `reached` may be sent to the next proxy.
pub(crate) fn may_resend(resend: Resend, reached: Reached, e: &Error) -> bool {
    // A connection refused beyond the proxy's limit (`ERROR Too many open connections`)
    // was never read: not the proxy's failure, but its request was not applied either, and
    // the next proxy may take it, as after a refused connect (tester finding retest26 4).
    if e.is_connection_limit() {
        return reached != Reached::Answered;
    }
    // Found dead when its connection was to be had (marked meanwhile, or another call's try
    // of its due retry under way): nothing was sent, and the next proxy may take it.
    if matches!(e, Error::ServerDead { .. }) {
        return reached == Reached::NotSent;
    }
    e.is_server_failure()
        && match reached {
            Reached::NotSent => true,
            Reached::Sent => resend == Resend::Always,
            Reached::Answered => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{Distribution, FailoverPolicy, Router};
    use crate::ServerSpec;

    fn refused() -> Error {
        Error::Io {
            server: "p".into(),
            source: std::io::ErrorKind::ConnectionRefused.into(),
        }
    }

    #[test]
    fn every_key_goes_to_the_first_live_proxy_whatever_the_policy() {
        let servers: Vec<ServerSpec> = (0..3)
            .map(|i| ServerSpec::parse(&format!("127.0.0.1:{}", 22000 + i)).unwrap())
            .collect();
        let d: Distribution = NAME.parse().unwrap();
        assert_eq!(d, Distribution::ProxyPool);
        assert_eq!(d.to_string(), NAME);
        assert!(!d.uses_weights() && !d.sanitizes_keys_by_default());
        let r = Router::new(&d, &servers).unwrap();
        for k in 0..500 {
            let key = format!("key:{k}");
            assert_eq!(r.locate(key.as_bytes()), 0);
            for p in [
                FailoverPolicy::FailFast,
                FailoverPolicy::Rehash,
                FailoverPolicy::Eject,
            ] {
                assert_eq!(r.locate_alive(key.as_bytes(), p, &|_| true), Some(0));
                assert_eq!(r.locate_alive(key.as_bytes(), p, &|i| i != 0), Some(1));
                assert_eq!(r.locate_alive(key.as_bytes(), p, &|i| i == 2), Some(2));
                assert_eq!(r.locate_alive(key.as_bytes(), p, &|_| false), None);
            }
        }
        let unknown = "nope".parse::<Distribution>().unwrap_err().to_string();
        assert!(unknown.contains(NAME), "{unknown}");
    }

    #[test]
    fn only_what_cannot_change_the_outcome_is_resent() {
        use Reached::*;
        use Resend::*;
        let e = refused();
        assert!(may_resend(IfUnsent, NotSent, &e));
        assert!(may_resend(Always, NotSent, &e));
        assert!(may_resend(Always, Sent, &e));
        assert!(!may_resend(IfUnsent, Sent, &e));
        assert!(!may_resend(Always, Answered, &e));
        let timeout = Error::IoTimeout {
            server: "p".into(),
            operation_timeout: false,
            sent: false,
        };
        assert!(may_resend(Always, Sent, &timeout));
        // Not a connection failure: the proxy answered.
        let answered = Error::Server {
            server: "p".into(),
            message: "backend".into(),
        };
        assert!(!may_resend(Always, NotSent, &answered));
        let busy = Error::PoolTimeout {
            server: "p".into(),
            operation_timeout: false,
        };
        assert!(!may_resend(Always, NotSent, &busy));
    }
}
