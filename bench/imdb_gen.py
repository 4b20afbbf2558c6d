#!/usr/bin/env python3
"""Deterministic generator of IMDB-like "name" documents (benchmark I).

The published benchmark used a 2018 IMDB dump of person documents, which is
not available here.  This generator produces documents of the same shape,
from a seed, so that every run (and every machine) loads identical data:

  {"id": "Connors, Steve (V)", "imdb_id": 1234567,
   "roles": [{"role": "actor", "title": "Copperhead Creek (1987)"}, ...],
   ...rare fields...}

* id: a "Last, First" name of 12-30 characters, sometimes with a "(II)" or
  "(V)" suffix; imdb_id: a distinct integer.  Both always present.
* roles: array of objects {title, role, [character], [note], [ranks]}.  Its
  length L follows a discrete Zipf law P(L = k) ~ k^-2, 1 <= k <= 20000:
  most people have 1-3 roles, a few have thousands.  role is actor/actress
  about 65% of the time, else one of director, writer, producer, composer,
  editor, cinematographer, miscellaneous...  Titles look like
  "Some Title (1987)" or "Some Title (????)".
* rare fields, each on 5-10% of documents: height, date_of_birth,
  real_name, trivia (array of strings), biographies ([{text, by}], text of
  0.5-5 KB).

Output is PostgreSQL COPY text format, one line per document:
"<n>\t<json>", n counting from 1.  Usage:

  imdb_gen.py --count 20000 --seed 42 > imdb.copy
"""

import argparse
import bisect
import json
import random
import sys

MAX_ROLES = 20000

SYLLABLES = ["ka", "ro", "mi", "ne", "to", "sha", "lin", "dor", "vel", "an",
             "ber", "cor", "da", "el", "fi", "gan", "hu", "is", "jo", "kel",
             "lo", "mar", "nor", "os", "pe", "qui", "ras", "sel", "tur", "ul",
             "van", "wes", "xi", "yor", "zan"]
WORDS = ["the", "of", "and", "a", "in", "night", "love", "return", "last",
         "dark", "city", "blood", "house", "man", "woman", "story", "dead",
         "secret", "king", "star", "war", "life", "game", "road", "summer",
         "creek", "copperhead", "river", "dream", "fire", "shadow", "heart",
         "little", "big", "lost", "time", "world", "street", "family", "girl"]
OTHER_ROLES = ["director", "writer", "producer", "composer", "editor",
               "cinematographer", "miscellaneous", "production designer",
               "costume designer", "self"]
NOTES = ["(uncredited)", "(voice)", "(as J. Doe)", "(archive footage)",
         "(segment \"Part 2\")", "(credit only)"]


def zipf_cdf(n, s=2.0):
    weights = [k ** -s for k in range(1, n + 1)]
    total = sum(weights)
    cdf, acc = [], 0.0
    for w in weights:
        acc += w / total
        cdf.append(acc)
    return cdf


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.cdf = zipf_cdf(MAX_ROLES)

    def word(self, capital=False):
        w = "".join(self.rng.choice(SYLLABLES)
                    for _ in range(self.rng.randint(1, 3)))
        return w.capitalize() if capital else w

    def name(self):
        rng = self.rng
        while True:
            n = f"{self.word(True)}, {self.word(True)}"
            if rng.random() < 0.15:
                n += " " + rng.choice(["(I)", "(II)", "(III)", "(V)"])
            if 12 <= len(n) <= 30:
                return n
            if len(n) < 12:
                n += " " + self.word(True)
                if len(n) <= 30:
                    return n

    def title(self):
        rng = self.rng
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
        year = "????" if rng.random() < 0.08 else str(rng.randint(1910, 2018))
        return " ".join(words).title() + f" ({year})"

    def sentence(self):
        rng = self.rng
        words = [rng.choice(WORDS) if rng.random() < 0.7 else self.word()
                 for _ in range(rng.randint(6, 20))]
        return " ".join(words).capitalize() + "."

    def text(self, nbytes):
        parts, size = [], 0
        while size < nbytes:
            s = self.sentence()
            parts.append(s)
            size += len(s) + 1
        return " ".join(parts)[:nbytes]

    def role(self):
        rng = self.rng
        r = {"title": self.title()}
        if rng.random() < 0.65:
            r["role"] = rng.choice(["actor", "actress"])
            if rng.random() < 0.6:
                r["character"] = self.word(True) + " " + self.word(True)
            if rng.random() < 0.3:
                r["ranks"] = rng.randint(1, 200)
        else:
            r["role"] = rng.choice(OTHER_ROLES)
        if rng.random() < 0.2:
            r["note"] = rng.choice(NOTES)
        return r

    def document(self, n):
        rng = self.rng
        doc = {"id": self.name(), "imdb_id": 1000000 + n * 7 + rng.randint(0, 6)}
        nroles = bisect.bisect_left(self.cdf, rng.random()) + 1
        doc["roles"] = [self.role() for _ in range(min(nroles, MAX_ROLES))]
        if rng.random() < 0.08:
            doc["height"] = f"{rng.randint(150, 200)} cm"
        if rng.random() < 0.10:
            doc["date_of_birth"] = (f"{rng.randint(1890, 2010)}-"
                                    f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
        if rng.random() < 0.06:
            doc["real_name"] = self.name()
        if rng.random() < 0.07:
            doc["trivia"] = [self.sentence() for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.05:
            doc["biographies"] = [{"text": self.text(rng.randint(500, 5000)),
                                   "by": self.name()}
                                  for _ in range(rng.randint(1, 3))]
        return doc


def copy_escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    gen = Generator(args.seed)
    out = sys.stdout
    for n in range(1, args.count + 1):
        doc = json.dumps(gen.document(n), ensure_ascii=False, separators=(", ", ": "))
        out.write(f"{n}\t{copy_escape(doc)}\n")


if __name__ == "__main__":
    main()
