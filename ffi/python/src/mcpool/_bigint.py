"""An int of any size to and from its decimal digits, for the extension's INT values beyond
what it converts itself (not API).

Exact whatever ``sys.get_int_max_str_digits()`` says (``int(text)`` and ``str(n)`` refuse more
digits than it, 4300 by default, while the value format holds an int of any size: tester
finding mutations 1), and without changing it: each ``int()``/``str()`` here converts at most
_CHUNK digits, below every limit Python allows, and the pieces are combined by divide and
conquer (integer multiplication one way, ``decimal`` arithmetic the other, as CPython 3.12's
``_pylong`` does), so a value of memcached's 1 MiB takes about a second, where Python's own
conversion, even with the limit off, is quadratic (seconds).
"""
import decimal
import operator
from typing import Dict

# digits one int() or str() converts: below sys.int_info.str_digits_check_threshold (640), the
# lowest limit Python allows
_CHUNK = 600
# an int below 2**_BITS has at most _CHUNK digits (2**1993 < 10**600)
_BITS = 1993


def from_digits(text: bytes) -> int:
    """The int whose decimal text is ``text``: an INT as the core delivers it (its ABI text,
    an optional "-" and digits; the core refuses a body that is no decimal integer), exactly;
    ValueError for another text."""
    negative = text[:1] == b"-"
    digits = text[1:] if negative else text
    if not digits.isdigit():  # (ASCII digits only, for bytes)
        raise ValueError("not a decimal integer")
    n = len(digits)
    first = n % _CHUNK or _CHUNK
    # the chunks, most significant first, each but the first _CHUNK digits wide; merged in
    # pairs level by level, where a right half is always full width (10**width: scale)
    parts = [int(digits[:first])]
    parts += [int(digits[i:i + _CHUNK]) for i in range(first, n, _CHUNK)]
    scale = 10 ** _CHUNK
    while len(parts) > 1:
        odd = len(parts) % 2
        parts[odd:] = [parts[i] * scale + parts[i + 1] for i in range(odd, len(parts), 2)]
        scale *= scale
    return -parts[0] if negative else parts[0]


def to_digits(n: int) -> str:
    """The decimal text of ``n`` (an int, or a subclass's value), as ``str(n)`` without the
    digit limit."""
    n = operator.index(n)
    ctx = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                          traps=[decimal.Inexact, decimal.Overflow])
    powers: Dict[int, decimal.Decimal] = {}

    def power(k: int) -> decimal.Decimal:
        """2**k, exactly."""
        p = powers.get(k)
        if p is None:
            p = powers[k] = ctx.power(decimal.Decimal(2), k)
        return p

    def convert(m: int, bits: int) -> decimal.Decimal:
        """m (0 <= m < 2**bits) as a Decimal: its two halves by bits, combined."""
        if bits <= _BITS:
            return decimal.Decimal(str(m))
        low_bits = bits >> 1
        high = m >> low_bits
        low = m - (high << low_bits)
        return ctx.add(ctx.multiply(convert(high, bits - low_bits), power(low_bits)),
                       convert(low, low_bits))

    text = format(convert(abs(n), abs(n).bit_length()), "f")
    return "-" + text if n < 0 else text
