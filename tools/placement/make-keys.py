#!/usr/bin/python3
"""Writes the shared placement key set (one key per line, UTF-8) to stdout.

Deterministic (fixed seed). Every key is a valid memcached text-protocol key: 1..250 bytes,
no space, no control byte, no DEL. Mix: short, long (up to 250 bytes), numeric-looking,
UTF-8 (2-, 3- and 4-byte characters: bytes >= 0x80 exercise libmemcached's sign extension),
characters Whalin's URL-encoding rewrites, and keys whose 15-bit CRC is 0 (where
python-memcached's `or 1` differs from Cache::Memcached).
"""
import random
import sys
import zlib

rng = random.Random(20240603)
ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
PUNCT = ":_-./!#$%&'()*+,;<=>?@[]^`{|}~\"\\"
UNI = "éüßçñøåæœÀÉ€£¥©®°±µ¶·½ĀĐŁŒŠŽαβγδλπΣΩжщЯёあいうえおカタナ漢字中文한국어ไทย🙂🚀🎉𝄞😀"

keys = []
seen = set()


def add(k):
    b = k.encode("utf-8")
    if not (1 <= len(b) <= 250) or k in seen:
        return
    if any(c <= 32 or c == 127 for c in b):
        return
    seen.add(k)
    keys.append(k)


def word(n, alphabet):
    return "".join(rng.choice(alphabet) for _ in range(n))


for _ in range(600):  # short ASCII, some punctuation
    add(word(rng.randint(1, 12), ASCII + (PUNCT if rng.random() < 0.3 else "")))
for _ in range(400):  # application-style
    add("%s:%d:%s" % (rng.choice(["user", "session", "page", "obj", "cart"]),
                      rng.randint(0, 10**7), word(rng.randint(1, 8), ASCII)))
for i in range(100):
    add(str(i))
for _ in range(250):  # numeric-looking
    add(rng.choice([str(rng.randint(0, 2**63)), str(-rng.randint(1, 10**9)),
                    "%d.%d" % (rng.randint(0, 999), rng.randint(0, 999)),
                    "%de%d" % (rng.randint(1, 9), rng.randint(1, 30)),
                    "0" * rng.randint(1, 5) + str(rng.randint(1, 999)),
                    "0x%x" % rng.randint(0, 2**32)]))
for _ in range(250):  # long, up to exactly 250 bytes
    n = rng.choice([100, 200, 249, 250, rng.randint(13, 250)])
    add(word(n, ASCII + "_-:."))
for _ in range(450):  # UTF-8 mixes
    n = rng.randint(1, 20)
    add("".join(rng.choice(UNI) if rng.random() < 0.6 else rng.choice(ASCII) for _ in range(n)))
for _ in range(60):  # long UTF-8
    s = ""
    while len((s + "x").encode()) < 240:
        s += rng.choice(UNI + ASCII)
    add(s)
# Keys whose (crc32 >> 16) & 0x7fff == 0: python-memcached turns that hash into 1.
n = 0
for i in range(2_000_000):
    k = "crc0-%d" % i
    if (zlib.crc32(k.encode()) >> 16) & 0x7FFF == 0:
        add(k)
        n += 1
        if n == 12:
            break
sys.stdout.buffer.write(("\n".join(keys) + "\n").encode("utf-8"))
