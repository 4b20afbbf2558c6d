#!/usr/bin/env python3
"""Deterministic generator of MARC-like catalogue records (benchmark M).

One record per line, from a seed, shaped like MARC in JSON as library
systems store it (a `content` jsonb next to an `instance_id` uuid):

  {"leader": "04321cam a2200457 i 4500",
   "fields": [{"001": "in00000042"}, {"005": "20190611102233.0"},
              {"008": "<40 characters>"},
              {"245": {"ind1": "1", "ind2": "0",
                       "subfields": [{"a": "Some title :"}, {"b": "..."}]}},
              ...
              {"999": {"ind1": "f", "ind2": "f",
                       "subfields": [{"i": "<uuid>"}, {"l": "MAIN"}]}}]}

* leader: 24 characters, as MARC's: the record length (5 digits), status,
  type, bibliographic level, ..., so a leader value is shared by a few
  records only;
* fields: 20-60 entries: control fields 001, 005, 008, then data fields
  (tags from 020 to 856, 1-6 subfields each, text of pseudo-words from a
  vocabulary of 3,000, so it compresses the way catalogue text does), and
  always a last 999 field whose first subfield `i` is an item uuid;
* each record is 2-10 KB of JSON (uniform target size).

Output is PostgreSQL COPY text format: "<id>\\t<instance_id>\\t<json>", id
counting from 1.  Usage:

  marc_gen.py --count 100000 --seed 42 > marc.copy
"""

import argparse
import json
import random
import sys
import uuid

SYLLABLES = ["ka", "ro", "mi", "ne", "to", "sha", "lin", "dor", "vel", "an",
             "ber", "cor", "da", "el", "fi", "gan", "hu", "is", "jo", "kel",
             "lo", "mar", "nor", "os", "pe", "qui", "ras", "sel", "tur", "ul",
             "vi", "wen", "ya", "zo", "ter", "min", "gor", "lea", "ph", "st"]
DATA_TAGS = ["020", "035", "040", "041", "050", "082", "100", "245", "246",
             "250", "260", "264", "300", "336", "337", "338", "490", "500",
             "504", "505", "520", "546", "600", "610", "650", "651", "655",
             "700", "710", "776", "830", "856"]
SUBFIELD_CODES = "abcdefghknpqrstvxyz0"


def copy_escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.vocabulary = ["".join(self.rng.choice(SYLLABLES)
                                   for _ in range(self.rng.randint(1, 4)))
                           for _ in range(3000)]
        # a few words are frequent, most are rare (roughly Zipf); subfield
        # texts are cut from a corpus of such words, at random places
        cum_weights, acc = [], 0.0
        for k in range(len(self.vocabulary)):
            acc += 1.0 / (k + 1)
            cum_weights.append(acc)
        self.corpus = " ".join(self.rng.choices(self.vocabulary, cum_weights=cum_weights,
                                                k=400000))

    def uuid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def text(self, nbytes):
        start = self.rng.randrange(len(self.corpus) - nbytes - 1)
        return self.corpus[start:start + max(1, nbytes)].strip() or "x"

    def data_field(self, tag, budget):
        rng = self.rng
        n = rng.randint(1, 6)
        codes = sorted(rng.sample(SUBFIELD_CODES, n))
        return {tag: {"ind1": rng.choice(" 0123"), "ind2": rng.choice(" 0147"),
                      "subfields": [{c: self.text(budget // n)} for c in codes]}}

    def record(self, n):
        rng = self.rng
        target = rng.randint(2000, 10000)
        nfields = rng.randint(20, 60)
        fields = [{"001": f"in{n:08d}"},
                  {"005": f"{rng.randint(2005, 2025)}{rng.randint(1, 12):02d}"
                          f"{rng.randint(1, 28):02d}{rng.randint(0, 235959):06d}.0"},
                  {"008": "".join(rng.choice("0123456789abcdefghijklmnopqrstuvwxyz ")
                                  for _ in range(40))}]
        ndata = nfields - 4
        # what is left of the target after the fixed parts and about 85
        # bytes of JSON around each data field and its subfields
        budget = max(8, (target - 200 - 85 * ndata) // ndata)
        tags = sorted(rng.choice(DATA_TAGS) for _ in range(ndata))
        fields += [self.data_field(tag, budget) for tag in tags]
        fields.append({"999": {"ind1": "f", "ind2": "f",
                               "subfields": [{"i": self.uuid()}, {"l": "MAIN"}]}})
        body = json.dumps(fields, separators=(", ", ": "))
        leader = (f"{min(99999, len(body) + 40):05d}"
                  f"{rng.choice('acn')}{rng.choice('aaaacegm')}{rng.choice('mmmms')} a22"
                  f"{rng.randint(100, 999):05d}{rng.choice(' 7I')}"
                  f"{rng.choice('ai')} 4500")
        return {"leader": leader, "fields": fields}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    gen = Generator(args.seed)
    out = sys.stdout
    for n in range(1, args.count + 1):
        instance_id = gen.uuid()
        doc = json.dumps(gen.record(n), separators=(", ", ": "))
        out.write(f"{n}\t{instance_id}\t{copy_escape(doc)}\n")


if __name__ == "__main__":
    main()
