//! The one rule for expiry times (TTLs, a lease's placeholder and stale times, `flush_all`'s
//! delay): a call whose expiry memcached cannot honour is refused before any byte is sent.
//!
//! memcached reads an expiry as a signed 32-bit number on the text and meta protocols
//! (`set k 0 2147483648 1` is stored with a negative time: it expires at once while the
//! server answers `STORED`, and `flush_all 2147483648` flushes now instead of later). An
//! expiry therefore goes from 0 (never expires) to [`MAX_TTL`] = 2^31 − 1: up to 30 days
//! it counts seconds from now, above that it is a unix time (until January 2038). The
//! binary protocol carries an unsigned number, but the same call must mean the same thing
//! on every protocol (and binary's 2^32 − 1 on incr/decr means "do not create"), so the
//! rule does not depend on the protocol.

use crate::error::{Error, Result};

/// The largest expiry memcached reads as it is meant: 2^31 − 1 (a unix time in January
/// 2038). Larger ones are refused with [`Error::InvalidArgument`].
pub const MAX_TTL: u32 = i32::MAX as u32;

/// The expiry that stores an item already expired, for a caller's negative expiry (memcached's
/// protocol.txt: "a negative exptime means immediately expired"; python-memcached, pylibmc,
/// pymemcache, Django and cachelib send one): 30 days and one second, which memcached reads
/// as a unix time (above `REALTIME_MAXDELTA`) in 1970, long past, on every protocol. A
/// negative number cannot cross the `u32` API; a binding that takes signed expiries passes
/// this for one.
pub const EXPIRED_AT_ONCE: u32 = 30 * 24 * 60 * 60 + 1;

/// Whether the time `what` names is a duration only: a lease's placeholder, recache and
/// stale times, which memcached reads as expiries but which mean "for so long" (a number
/// above [`RELATIVE_MAX`] would be read as a unix time in 1970, long past: the election or
/// the stale value gone at once).
fn is_duration(what: &str) -> bool {
    matches!(what, "vivify_ttl" | "recache_below" | "stale_ttl")
}

/// `ttl` as given if memcached can honour it, else [`Error::InvalidArgument`] naming `what`
/// (`"ttl"`, `"vivify_ttl"`, `"stale_ttl"`, `"recache_below"`, `"delay"`). A lease's times
/// are durations: up to [`RELATIVE_MAX`] (30 days), never a unix time (tester finding ttl 3:
/// a longer one silently turned the lease off).
pub fn check(what: &'static str, ttl: u32) -> Result<u32> {
    if is_duration(what) && ttl > RELATIVE_MAX {
        return Err(Error::InvalidArgument {
            what,
            reason: format!(
                "{ttl} is above {RELATIVE_MAX} (30 days): a {what} is a duration, and memcached \
                 would read a longer one as a unix time long past (the lease gone at once)"
            ),
        });
    }
    if ttl <= MAX_TTL {
        Ok(ttl)
    } else {
        Err(Error::InvalidArgument {
            what,
            reason: format!(
                "{ttl} is above {MAX_TTL}, the largest expiry memcached can honour \
                 (it would read it as {} and expire at once)",
                ttl as i32
            ),
        })
    }
}

/// A caller's signed expiry as the `u32` every call takes, by the one rule for signed
/// expiries (the bindings whose languages have them: Python, Perl, Java): a negative one is
/// [`EXPIRED_AT_ONCE`] (memcached's "immediately expired", as the peers send it), one beyond
/// `u32` is `u32::MAX` (which [`check`] then refuses, as every expiry above [`MAX_TTL`]),
/// any other as it is.
pub fn from_signed(seconds: i64) -> u32 {
    if seconds < 0 {
        EXPIRED_AT_ONCE
    } else {
        u32::try_from(seconds).unwrap_or(u32::MAX)
    }
}

/// A fractional number of seconds (a binding's float expiry, duration or delay) as the whole
/// seconds [`from_signed`], [`from_now`] and [`delay_from_signed`] take, by the one rule for
/// fractions: a positive fraction rounds up (0 < t < 1 is 1 s: an item asked to live under a
/// second must not become 0, memcached's "never expires"), but never across the 30-day line
/// (2592000 < t < 2592001 is [`RELATIVE_MAX`], 30 days, as the peers truncate it: 2592001 is
/// a unix time in 1970 to memcached, and the item would expire at once while the store
/// answers stored), a negative one rounds down (it
/// stays negative: -0.3, a deadline just passed, expires at once), 0 and -0 are 0. A
/// fraction beyond `i64`, and NaN (no time at all), is `i64::MAX` (beyond `u32`: refused by
/// [`check`] once mapped); beyond `i64` on the negative side `i64::MIN` (expired at once).
pub fn whole_seconds(seconds: f64) -> i64 {
    if seconds.is_nan() {
        return i64::MAX;
    }
    let relative_max = f64::from(RELATIVE_MAX);
    let whole = if seconds > relative_max && seconds < relative_max + 1.0 {
        relative_max
    } else if seconds > 0.0 {
        seconds.ceil()
    } else {
        seconds.floor()
    };
    // `as` saturates at the ends of i64 (and 2^63 as f64 is beyond i64::MAX)
    whole as i64
}

/// The longest expiry memcached reads as seconds from now: 30 days (memcached's
/// `REALTIME_MAXDELTA`); above it memcached reads a unix time.
pub const RELATIVE_MAX: u32 = 30 * 24 * 60 * 60;

/// An expiry given as seconds from now (CHI's `expires_in`, Django's timeout: a duration,
/// not memcached's exptime), as the exptime memcached reads as that moment: up to
/// [`RELATIVE_MAX`] the seconds as they are, above it the unix time they end at (`now` +
/// `seconds`, as Django's memcached backends and pylibmc send it), since memcached reads an
/// exptime above 30 days as a unix time and the seconds themselves as a moment in 1970,
/// expiring the item at once. `seconds` of 0 or less is [`EXPIRED_AT_ONCE`] (the moment is
/// now or past: never 0, which is "never expires"). A moment beyond `u32` is `u32::MAX`;
/// one beyond [`MAX_TTL`] (2038) is then refused by [`check`], never moved.
pub fn from_now(seconds: i64) -> u32 {
    u32::try_from(moment_from_now(seconds)).unwrap_or(u32::MAX)
}

/// [`from_now`] with the current unix time given (`now`), for tests.
pub fn from_now_at(seconds: i64, now: u64) -> u32 {
    u32::try_from(moment_from_now_at(seconds, now)).unwrap_or(u32::MAX)
}

/// [`from_now`]'s expiry before it is fitted to the `u32` the calls take: a moment after
/// 2106 stays the number it is (at most `i64::MAX`), for a binding that hands it on as a
/// signed time ([`checked_from_signed`]), so a refusal names the moment asked, never the
/// saturated 4294967295 (tester finding retest37 6).
pub fn moment_from_now(seconds: i64) -> i64 {
    moment_from_now_at(seconds, now_secs())
}

/// The system clock's unix time in whole seconds, as memcached compares an expiry with its
/// own (0 before 1970).
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// [`moment_from_now`] with the current unix time given (`now`), for tests.
pub fn moment_from_now_at(seconds: i64, now: u64) -> i64 {
    match u64::try_from(seconds) {
        Err(_) | Ok(0) => i64::from(EXPIRED_AT_ONCE),
        Ok(s) if s <= u64::from(RELATIVE_MAX) => seconds,
        Ok(s) => i64::try_from(now.saturating_add(s)).unwrap_or(i64::MAX),
    }
}

/// [`moment_from_now`], refused where it is capped rather than answered: a duration that
/// ends after `i64::MAX` (the year 292 billion), which [`moment_from_now`] answers as
/// `i64::MAX`, a moment the caller never asked for. For a binding whose `expiry_from_now`
/// answers the moment as its language's integer (Python, Perl): the refusal names the
/// duration and that limit, not memcached's (durations whose moment is after 2038 are
/// answered, and refused by the call they are then given to).
pub fn moment_from_now_checked(seconds: i64) -> Result<i64> {
    moment_from_now_checked_at(seconds, now_secs())
}

/// [`moment_from_now_checked`] with the current unix time given (`now`), for tests.
pub fn moment_from_now_checked_at(seconds: i64, now: u64) -> Result<i64> {
    // (the sum exactly: a moment of i64::MAX itself is answered, one past it refused)
    let past_the_cap = u64::try_from(seconds).is_ok_and(|s| {
        s > u64::from(RELATIVE_MAX) && u128::from(now) + u128::from(s) > i64::MAX as u128
    });
    if past_the_cap {
        return Err(Error::InvalidArgument {
            what: "duration",
            reason: format!(
                "{seconds} is too long: from now it ends after {}, the latest unix time \
                 an expiry can name",
                i64::MAX
            ),
        });
    }
    Ok(moment_from_now_at(seconds, now))
}

/// A caller's signed `flush_all` delay as the `u32` the call takes: a negative one is 0,
/// "now" (memcached flushes at once for a delay in the past, and Cache::Memcached::Fast and
/// pylibmc send -1 for it), one beyond `u32` is `u32::MAX` (refused by [`check`]), any other
/// as it is.
pub fn delay_from_signed(seconds: i64) -> u32 {
    if seconds < 0 {
        0
    } else {
        from_signed(seconds)
    }
}

/// [`check`] for an expiry that may be absent.
pub fn check_opt(what: &'static str, ttl: Option<u32>) -> Result<Option<u32>> {
    ttl.map(|t| check(what, t)).transpose()
}

/// A binding's signed time, checked as given, never saturated first (a Perl `2**32` or a
/// Java `-1` is named in the error as the caller wrote it, not as `4294967295`). For `ttl`
/// the rule of [`from_signed`] (negative: [`EXPIRED_AT_ONCE`]); for a lease's or a stale
/// time (`vivify_ttl`, `recache_below`, `stale_ttl`: durations, with no "expired" meaning) a
/// negative one is refused. Above [`MAX_TTL`]: refused, as [`check`] refuses it.
pub fn checked_from_signed(what: &'static str, seconds: i64) -> Result<u32> {
    if seconds < 0 {
        if what == "ttl" {
            return Ok(EXPIRED_AT_ONCE);
        }
        let most = if is_duration(what) {
            RELATIVE_MAX
        } else {
            MAX_TTL
        };
        return Err(Error::InvalidArgument {
            what,
            reason: format!("{seconds} is negative; a {what} is 0 to {most} seconds"),
        });
    }
    match u32::try_from(seconds) {
        Ok(t) => check(what, t),
        Err(_) if is_duration(what) => Err(Error::InvalidArgument {
            what,
            reason: format!("{seconds} is above {RELATIVE_MAX} (30 days): a {what} is a duration"),
        }),
        Err(_) => Err(Error::InvalidArgument {
            what,
            reason: format!(
                "{seconds} is above {MAX_TTL}, the largest expiry memcached can honour"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_from_signed_names_the_number_given() {
        assert_eq!(checked_from_signed("ttl", 5).unwrap(), 5);
        assert_eq!(checked_from_signed("ttl", -1).unwrap(), EXPIRED_AT_ONCE);
        assert_eq!(checked_from_signed("recache_below", 0).unwrap(), 0);
        let e = checked_from_signed("ttl", 1 << 32).unwrap_err().to_string();
        assert!(e.contains("4294967296 is above 2147483647"), "{e}");
        assert!(!e.contains("4294967295"), "{e}");
        let e = checked_from_signed("recache_below", -1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid recache_below: -1 is negative"), "{e}");
        // a lease's times: their own range (tester finding retest37 3)
        assert!(e.contains("0 to 2592000 seconds"), "{e}");
        let e = checked_from_signed("stale_ttl", i64::MAX)
            .unwrap_err()
            .to_string();
        assert!(e.contains("9223372036854775807 is above"), "{e}");
        // within u32: check's own message, with memcached's reading
        let e = checked_from_signed("ttl", 1 << 31).unwrap_err().to_string();
        assert!(
            e.contains("2147483648 is above 2147483647") && e.contains("-2147483648"),
            "{e}"
        );
    }

    #[test]
    fn a_lease_time_is_a_duration_of_30_days_at_most() {
        for what in ["vivify_ttl", "recache_below", "stale_ttl"] {
            assert_eq!(check(what, RELATIVE_MAX).unwrap(), RELATIVE_MAX);
            let e = check(what, RELATIVE_MAX + 1).unwrap_err().to_string();
            assert!(
                e.contains("2592001 is above 2592000") && e.contains(what),
                "{e}"
            );
            let e = checked_from_signed(what, 1 << 40).unwrap_err().to_string();
            assert!(e.contains("1099511627776 is above 2592000"), "{e}");
        }
        assert_eq!(check("ttl", RELATIVE_MAX + 1).unwrap(), RELATIVE_MAX + 1);
    }

    #[test]
    fn the_boundary_is_two_to_the_31_minus_one() {
        assert_eq!(check("ttl", 0).unwrap(), 0);
        assert_eq!(check("ttl", MAX_TTL).unwrap(), 2_147_483_647);
        for bad in [1u32 << 31, u32::MAX] {
            let e = check("ttl", bad).unwrap_err();
            assert!(
                matches!(e, Error::InvalidArgument { what: "ttl", .. }),
                "{e:?}"
            );
            assert_eq!(e.class(), crate::error::Class::ClientError);
            assert!(e.to_string().contains(&bad.to_string()), "{e}");
        }
        assert_eq!(check_opt("delay", None).unwrap(), None);
        assert!(check_opt("delay", Some(1 << 31)).is_err());
        // Signed expiries: negative is expired at once, beyond u32 is refused by `check`.
        assert_eq!(from_signed(-1), EXPIRED_AT_ONCE);
        assert_eq!(from_signed(i64::MIN), EXPIRED_AT_ONCE);
        assert_eq!(from_signed(0), 0);
        assert_eq!(from_signed(MAX_TTL as i64), MAX_TTL);
        assert!(check("ttl", from_signed(MAX_TTL as i64 + 1)).is_err());
        assert!(check("ttl", from_signed(1 << 40)).is_err());
        // A flush delay in the past is now.
        assert_eq!(delay_from_signed(-1), 0);
        assert_eq!(delay_from_signed(i64::MIN), 0);
        assert_eq!(delay_from_signed(30), 30);
        assert!(check("delay", delay_from_signed(1 << 40)).is_err());
        // Seconds from now: as they are up to 30 days, a unix time above; none left is
        // expired at once (never 0, "never expires"); past 2038 refused by `check`.
        let now = 1_700_000_000;
        assert_eq!(from_now_at(1, now), 1);
        assert_eq!(from_now_at(RELATIVE_MAX as i64, now), RELATIVE_MAX);
        assert_eq!(
            from_now_at(RELATIVE_MAX as i64 + 1, now),
            1_700_000_000 + RELATIVE_MAX + 1
        );
        assert_eq!(from_now_at(31 * 86_400, now), 1_700_000_000 + 31 * 86_400);
        assert_eq!(from_now_at(0, now), EXPIRED_AT_ONCE);
        assert_eq!(from_now_at(-5, now), EXPIRED_AT_ONCE);
        assert!(check("ttl", from_now_at(MAX_TTL as i64, now)).is_err());
        assert_eq!(from_now_at(i64::MAX, now), u32::MAX);
        // ... and the moment before it is fitted to u32 is the one asked, named as it is
        // when refused (a century from now is not 4294967295)
        let century = 100 * 365 * 86_400;
        assert_eq!(moment_from_now_at(century, now), 1_700_000_000 + century);
        assert_eq!(moment_from_now_at(60, now), 60);
        assert_eq!(moment_from_now_at(-1, now), i64::from(EXPIRED_AT_ONCE));
        assert_eq!(moment_from_now_at(i64::MAX, now), i64::MAX);
        // ... refused where it is capped, naming the duration and the cap (tester finding
        // retest41b 2: the refusal named memcached's 2147483647, which longer durations pass)
        assert_eq!(
            moment_from_now_checked_at(century, now).ok(),
            Some(1_700_000_000 + century)
        );
        assert_eq!(
            moment_from_now_checked_at(-5, now).ok(),
            Some(i64::from(EXPIRED_AT_ONCE))
        );
        // ... a moment of i64::MAX itself answered, one second past refused (tester finding
        // retest43 5: the last one was refused as ending after it)
        let last = i64::MAX - 1_700_000_000;
        assert_eq!(
            moment_from_now_checked_at(last - 1, now).ok(),
            Some(i64::MAX - 1)
        );
        assert_eq!(moment_from_now_checked_at(last, now).ok(), Some(i64::MAX));
        for refused in [last + 1, i64::MAX] {
            let e = moment_from_now_checked_at(refused, now)
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                format!(
                    "invalid duration: {refused} is too long: from now it ends after \
                     9223372036854775807, the latest unix time an expiry can name"
                )
            );
        }
        let refused = checked_from_signed("ttl", moment_from_now_at(century, now));
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains(&(1_700_000_000 + century).to_string()),
            "names the moment"
        );
        let live = from_now(31 * 86_400);
        assert!(live > RELATIVE_MAX && check("ttl", live).is_ok(), "{live}");
        // Fractions: a positive one rounds up (never 0, "never expires"), a negative one
        // down (still expired at once), NaN and beyond i64 are refused once mapped.
        assert_eq!(whole_seconds(0.4), 1);
        assert_eq!(whole_seconds(1e-300), 1);
        assert_eq!(whole_seconds(0.999), 1);
        assert_eq!(whole_seconds(1.0), 1);
        assert_eq!(whole_seconds(1.7), 2);
        assert_eq!(whole_seconds(60.0), 60);
        assert_eq!(whole_seconds(0.0), 0);
        assert_eq!(whole_seconds(-0.0), 0);
        assert_eq!(whole_seconds(-0.3), -1);
        assert_eq!(whole_seconds(-1.5), -2);
        assert_eq!(whole_seconds(f64::INFINITY), i64::MAX);
        assert_eq!(whole_seconds(1e30), i64::MAX);
        assert_eq!(whole_seconds(f64::NAN), i64::MAX);
        assert_eq!(whole_seconds(f64::NEG_INFINITY), i64::MIN);
        assert_eq!(from_signed(whole_seconds(0.4)), 1);
        // never rounded up across the 30-day line (tester finding arith 1: 2592000.2 was
        // 2592001, a unix time in 1970, and the item stored expired at once)
        for t in [2_592_000.2, 2_592_000.5, 2_592_000.999] {
            assert_eq!(from_signed(whole_seconds(t)), RELATIVE_MAX, "{t}");
            assert_eq!(from_now_at(whole_seconds(t), now), RELATIVE_MAX, "{t}");
        }
        assert_eq!(whole_seconds(2_592_000.0), 2_592_000);
        assert_eq!(whole_seconds(2_591_999.5), 2_592_000);
        assert_eq!(whole_seconds(2_592_001.0), 2_592_001);
        assert_eq!(whole_seconds(2_592_001.5), 2_592_002);
        assert_eq!(from_signed(whole_seconds(-0.3)), EXPIRED_AT_ONCE);
        assert!(check("ttl", from_signed(whole_seconds(f64::NAN))).is_err());
        assert_eq!(from_now_at(whole_seconds(0.4), now), 1);
        assert_eq!(from_now_at(whole_seconds(-0.3), now), EXPIRED_AT_ONCE);
        assert_eq!(delay_from_signed(whole_seconds(0.4)), 1);
        assert_eq!(delay_from_signed(whole_seconds(-0.3)), 0);
        // A binding's -1 arrives as 2^32 - 1: the message says how memcached would read it.
        let e = check("ttl", u32::MAX).unwrap_err().to_string();
        assert!(e.contains("-1"), "{e}");
    }
}
