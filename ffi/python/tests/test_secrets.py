"""A SASL password that cannot be used is refused without showing it: no text of it in the
exception's str, repr or args, nor in anything chained to it (tester finding secure2 4); the
pylibmc drop-in checks its SASL arguments as pylibmc does (secure2 10). No server: every
case is refused while the client is built."""
import traceback

import pytest

import mcpool
import mcpool.compat.pylibmc as drop_pylibmc
from conftest import require

pylibmc = require("pylibmc", "python3-pylibmc")

ADDR = "127.0.0.1:1"  # never asked: each client here is refused before it connects


def _chain(e):
    """e and every exception chained to it (__cause__, __context__)."""
    seen = []
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def assert_hidden(e, secret):
    """No trace of secret (str or bytes, and its UTF-8 or its str form) in e or its chain."""
    texts = {secret, secret.decode("latin-1") if isinstance(secret, bytes) else secret}
    stem = "SeCrEt"  # the readable part every refused password here has
    shown = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    assert stem not in shown, shown
    for x in _chain(e):
        for part in (str(x), repr(x), repr(x.args)):
            assert stem not in part, (type(x).__name__, part)
        for a in x.args:
            assert a not in texts, (type(x).__name__, a)
        assert getattr(x, "object", None) is None, x  # a UnicodeError's copy of the input


NOT_TEXT = ["SeCrEt\udcff", "SeCrEt\ud800x"]


@pytest.mark.parametrize("pw", NOT_TEXT, ids=repr)
@pytest.mark.parametrize("word", ["sasl_password", "password", "SASL-Password"])
def test_a_password_with_no_utf8_form_is_a_configuration_error_that_hides_it(pw, word):
    """A str with a lone surrogate was a ClientError whose __cause__ (a UnicodeEncodeError)
    held it. Now the ConfigurationError every refused option value raises, naming the
    option as given and the password's length only, with nothing chained. (bytes, which
    were read as UTF-8, are refused for their type: the next test.)"""
    with pytest.raises(mcpool.ConfigurationError) as ei:
        mcpool.Client([ADDR], protocol="binary", sasl_username="alice", **{word: pw})
    e = ei.value
    assert_hidden(e, pw)
    assert e.__cause__ is None and e.__context__ is None and e.__suppress_context__
    assert "sasl_password" in str(e) and "<redacted, %d " % len(pw) in str(e)
    if word != "sasl_password":
        assert "(given as %s)" % word in str(e)
    assert e.status_name == "MCPOOL_CONFIG"


@pytest.mark.parametrize("value", [12345678, b"SeCrEt-1", b"SeCrEt\xff", b"\xffSeCrEt", 1.5,
                                   True, ["SeCrEt-1"]], ids=repr)
@pytest.mark.parametrize("word", ["sasl_password", "password", "SASL-Password", "sasl_username",
                                  "username"])
def test_sasl_credentials_are_str_only(word, value):
    """Tester finding secure 5: a number or bytes was taken (sent as its text form), though
    the options are text, as pylibmc takes them (a str). ClientTypeError naming the option as
    given and the type, never the value, as None is refused."""
    other = ({"sasl_username": "alice"} if "password" in word.lower()
             else {"sasl_password": "pw"})
    with pytest.raises(mcpool.ClientTypeError) as ei:
        mcpool.Client([ADDR], protocol="binary", **other, **{word: value})
    e = ei.value
    core = "sasl_password" if "password" in word.lower() else "sasl_username"
    assert str(e).startswith("option %s" % core), str(e)
    if word != core:
        assert "(given as %s)" % word in str(e)
    assert "a str, not %s" % type(value).__name__ in str(e)
    assert "12345678" not in str(e) and "1.5" not in str(e)
    assert_hidden(e, value if isinstance(value, (str, bytes)) else "SeCrEt")


@pytest.mark.parametrize("pw", ["SeCrEt\x00x", "SeCrEt" + "x" * 5000, "SeCrEt\r\n"], ids=repr)
def test_a_password_the_core_refuses_is_not_shown(pw):
    """The core's own refusals (NUL, over 4096 bytes, a line break) show the length only."""
    with pytest.raises(mcpool.ConfigurationError) as ei:
        mcpool.Client([ADDR], protocol="binary", sasl_username="alice", sasl_password=pw)
    assert_hidden(ei.value, pw)


@pytest.mark.parametrize("option, value", [("distribution", b"pre\xff"),
                                           ("key_prefix", "pre\udcff")], ids=repr)
def test_other_options_with_no_utf8_form_raise_the_same_class_showing_the_value(option, value):
    """The same ConfigurationError as for the password, for any option (a bad key_prefix
    raises it), and a value that is no secret is shown, as the core shows one. (bytes that
    are not UTF-8 are a key_prefix's value as they are: tester finding keys2 2,
    tests/test_key_prefix_bytes.py; a str with a lone surrogate has no bytes at all.)"""
    with pytest.raises(mcpool.ConfigurationError) as ei:
        mcpool.Client([ADDR], **{option: value})
    assert "option %s: bad value %r" % (option, value) in str(ei.value)
    assert ei.value.__cause__ is None and ei.value.__context__ is None
    with pytest.raises(mcpool.ConfigurationError):
        mcpool.Client([ADDR], key_prefix="pre\x01")  # the core's own refusal: same class


def test_the_pylibmc_drop_in_hides_a_password_it_cannot_use():
    """A lone surrogate: pylibmc raises a UnicodeEncodeError holding the password; the
    drop-in a pylibmc.Error giving its length."""
    pw = "SeCrEt\udcff"
    with pytest.raises(drop_pylibmc.Error) as ei:
        drop_pylibmc.Client([ADDR], binary=True, username="alice", password=pw)
    assert_hidden(ei.value, pw)
    assert "<redacted, 7 characters>" in str(ei.value)


# (arguments, what pylibmc 1.6.3 raises): checked against the real pylibmc below
SASL_CASES = [
    (dict(binary=False, username="alice", password="SeCrEt-1"),
     "SASL requires the memcached binary protocol"),
    (dict(username="alice", password="SeCrEt-1"), "SASL requires the memcached binary protocol"),
    (dict(binary=0, username="alice", password="SeCrEt-1"),
     "SASL requires the memcached binary protocol"),
    (dict(binary=True, username="alice"), "SASL requires both username and password"),
    (dict(binary=True, password="SeCrEt-1"), "SASL requires both username and password"),
    (dict(binary=False, username="alice"), "SASL requires both username and password"),
    (dict(binary=True, username="alice", password=b"SeCrEt\xff"),
     "argument 4 must be str or None, not bytes"),
    (dict(binary=True, username=b"alice", password="SeCrEt-1"),
     "argument 3 must be str or None, not bytes"),
    (dict(binary=True, username="alice", password=["SeCrEt-1"]),
     "argument 4 must be str or None, not list"),
    (dict(binary=False, username="alice", password=b"SeCrEt"),
     "argument 4 must be str or None, not bytes"),
]


@pytest.mark.parametrize("mod", [pylibmc, drop_pylibmc], ids=["pylibmc", "drop-in"])
@pytest.mark.parametrize("kw,message", SASL_CASES, ids=lambda x: repr(x)[:60])
def test_sasl_arguments_are_checked_as_pylibmc_checks_them(mod, kw, message):
    """TypeError in pylibmc's words (the drop-in raised pylibmc.Error with the core's)."""
    with pytest.raises(Exception) as ei:
        mod.Client([ADDR], **kw)
    assert type(ei.value) is TypeError
    assert str(ei.value) == message
    assert "SeCrEt" not in str(ei.value)
