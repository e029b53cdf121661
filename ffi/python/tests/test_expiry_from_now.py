"""mcpool.expiry_from_now(seconds): a duration as memcached's exptime, by the core's rule;
its refusals name the call. Tester finding retest39 7: a duration from 2**63 seconds on
(2**64, 10**30) answered 9223372036854775807, the C function's cap, a number that is not the
moment asked, though the docstring says "the number answered is the moment asked"; it is
refused now, a ClientError in the core's words for it (mcpool_expiry_moment_from_now_checked,
as Perl's binding words its refusals), the number named as given. Tester finding retest41b 2:
the refusal said "is above 2147483647", which durations answered as moments after 2038 are
too; it names the cap it is refused for. Its other errors name the call too."""
import time

import pytest

import mcpool

ABOVE = ("is too long: from now it ends after 9223372036854775807, the latest unix time an "
         "expiry can name")


@pytest.mark.parametrize("seconds,shown", [
    (2 ** 63, "9223372036854775808"),
    (2 ** 64, "18446744073709551616"),
    (10 ** 30, "1" + "0" * 30),
    (2 ** 63 - 1, "9223372036854775807"),  # in 64 bits, but its moment is not
    (1e300, "1e+300"),
    (9.3e18, "9.3e+18"),
    (float(2 ** 63), "9.223372036854776e+18"),
], ids=["2**63", "2**64", "10**30", "2**63-1", "1e300", "9.3e18", "float-2**63"])
def test_a_moment_past_64_bits_is_refused_named_as_given(seconds, shown):
    with pytest.raises(mcpool.ClientError) as ei:
        mcpool.expiry_from_now(seconds)
    e = ei.value
    assert str(e) == "expiry_from_now: invalid duration: %s %s" % (shown, ABOVE)
    assert type(e) is mcpool.ClientError
    assert e.status_name == "MCPOOL_INVALID_ARGUMENT" and e.server is None


@pytest.mark.parametrize("bad", ["inf", "-inf", "nan"])
def test_a_float_that_is_no_finite_number_names_the_call(bad):
    with pytest.raises(mcpool.ClientError) as ei:
        mcpool.expiry_from_now(float(bad))
    assert str(ei.value) == ("expiry_from_now: invalid duration: %s is not a finite number of "
                             "seconds" % bad)
    assert type(ei.value) is mcpool.ClientError


@pytest.mark.parametrize("bad", ["60", None, True, b"60", 1j])
def test_anything_but_an_int_or_a_float_names_the_call(bad):
    with pytest.raises(mcpool.ClientTypeError) as ei:
        mcpool.expiry_from_now(bad)
    assert str(ei.value) == ("expiry_from_now: seconds must be an int or a float, not %s"
                             % type(bad).__name__)


def test_what_it_answers_is_unchanged():
    day = 86400
    assert mcpool.expiry_from_now(60) == 60
    assert mcpool.expiry_from_now(30 * day) == 30 * day
    for past in (0, -1, -2 ** 63, -2 ** 80, -1e300, float("-1e30"), -0.3):
        assert mcpool.expiry_from_now(past) == mcpool.EXPIRED_AT_ONCE, past
    for far in (2 ** 40, 2 ** 62, 10 ** 18, 2 ** 62 + 0.0):
        before = int(time.time())
        at = mcpool.expiry_from_now(far)
        assert before + int(far) <= at <= int(time.time()) + int(far) + 1, far


def test_the_django_backend_still_keeps_a_far_timeout_until_the_last_moment():
    """mcpool.django's rule: a timeout ending past the last moment memcached holds is that
    last moment (MAX_TTL), also one whose moment expiry_from_now now refuses."""
    pytest.importorskip("django")
    import mcpool.django
    cache = mcpool.django.McpoolCache("127.0.0.1:1", {})
    for t in (2 ** 40, 2 ** 63, 2 ** 64, 10 ** 30):
        assert cache.get_backend_timeout(t) == mcpool.MAX_TTL, t
