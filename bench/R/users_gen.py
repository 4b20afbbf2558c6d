#!/usr/bin/env python3
"""Deterministic generator of user documents (benchmark R).

One document per user, from a seed:

  {"name": "Anna Kelmar", "username": "akelmar42",
   "bio": "<5,000 random printable ASCII characters>",
   "email": ["akelmar42@example.org", ...],
   "login": {"last": "2025-03-17T08:41:09Z", "count": 317}}

* name: two capitalised pseudo-words; username: lower-case letters and
  digits, 6-16 characters;
* bio: exactly 5,000 characters drawn uniformly from the 95 printable ASCII
  characters (space to tilde): it does not compress, so the document is
  TOASTed whatever the compression method;
* email: 1-3 addresses; login.last: a timestamp in 2020-2025; login.count:
  0-10,000.

Output is PostgreSQL COPY text format, one line per user: "<id>\\t<json>",
id counting from 1.  Usage:

  users_gen.py --count 100000 --seed 42 > users.copy
"""

import argparse
import json
import random
import sys

SYLLABLES = ["ka", "ro", "mi", "ne", "to", "sha", "lin", "dor", "vel", "an",
             "ber", "cor", "da", "el", "fi", "gan", "hu", "is", "jo", "kel",
             "lo", "mar", "nor", "os", "pe", "qui", "ras", "sel", "tur", "ul"]
DOMAINS = ["example.org", "example.com", "example.net", "mail.example.org"]
BIO_LENGTH = 5000
# byte value -> printable character (95 of them, space to tilde); bytes
# 0-189 map uniformly (190 = 2 x 95), the rest are drawn again
PRINTABLE = bytes(32 + (b % 95) for b in range(190)) + b"\0" * 66


def copy_escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def word(self):
        return "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(1, 3)))

    def bio(self):
        out = bytearray()
        while len(out) < BIO_LENGTH:
            chunk = self.rng.randbytes(BIO_LENGTH + BIO_LENGTH // 2)
            out += chunk.translate(PRINTABLE).replace(b"\0", b"")
        return out[:BIO_LENGTH].decode("ascii")

    def document(self):
        rng = self.rng
        first, last = self.word(), self.word()
        username = (first[0] + last)[:12] + str(rng.randint(0, 9999))
        username = username[:16].ljust(6, "0")
        emails = [f"{username}@{DOMAINS[0]}"] + [
            f"{self.word()}.{last}@{rng.choice(DOMAINS)}" for _ in range(rng.randint(0, 2))]
        return {
            "name": f"{first.capitalize()} {last.capitalize()}",
            "username": username,
            "bio": self.bio(),
            "email": emails,
            "login": {"last": f"{rng.randint(2020, 2025)}-{rng.randint(1, 12):02d}-"
                              f"{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
                              f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
                      "count": rng.randint(0, 10000)},
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    gen = Generator(args.seed)
    out = sys.stdout
    for n in range(1, args.count + 1):
        doc = json.dumps(gen.document(), separators=(", ", ": "))
        out.write(f"{n}\t{copy_escape(doc)}\n")


if __name__ == "__main__":
    main()
