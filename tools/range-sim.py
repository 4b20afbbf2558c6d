#!/usr/bin/env python3
"""Simulate the toaster's content-defined range boundaries (ends_range() and
maybe_cut() in src/skeleton_build.c) on random entries, to compare rules.

For each rule it prints the mean range size, the mean size of the range that
holds a random byte (an edit lands there: what an update rewrites), the
largest range, and how many ranges an edit of one random entry changes (1
is the minimum: the range that held it), for a deletion and for a change
of the entry's size (a jsonb_set), as the mean and the most over the
trials.  Entries are mostly --entry-size bytes, one in ten anywhere from a
quarter of that to ten times it.

    tools/range-sim.py [--range-size 2048] [--entry-size 20] [--entries 20000] [--trials 500]
"""
import argparse
import random
import statistics


def cut(sizes, hashes, range_size, factor):
    """Start indexes of the ranges; factor 1 is the single-threshold rule."""
    minimum, maximum = range_size // 4, range_size * 4
    starts, acc, end_after_previous = [0], 0, False
    for i, (size, h) in enumerate(zip(sizes, hashes)):
        if acc >= minimum and (end_after_previous or acc >= maximum):
            starts.append(i)
            acc = 0
        acc += size
        p = size / (range_size - minimum)
        p = p / factor if acc < range_size else p * factor
        end_after_previous = h < p
    return starts


def measure(range_size, factor, entry_size, n, trials, seed):
    rnd = random.Random(seed)
    sizes = [entry_size if rnd.random() < 0.9 else rnd.randint(entry_size // 4, entry_size * 10)
             for _ in range(n)]
    hashes = [rnd.random() for _ in range(n)]

    def ranges(ids, size_of):
        st = cut([size_of(i) for i in ids], [hashes[i] for i in ids], range_size, factor)
        return [tuple((i, size_of(i)) for i in ids[a:b]) for a, b in zip(st, st[1:] + [len(ids)])]

    everything = list(range(n))
    base = set(ranges(everything, lambda i: sizes[i]))
    lengths = [sum(sz for _, sz in r) for r in base]
    deleted, resized = [], []
    for _ in range(trials):
        j = rnd.randrange(n // 4, 3 * n // 4)
        ids = everything[:j] + everything[j + 1:]
        deleted.append(len(set(ranges(ids, lambda i: sizes[i])) - base))
        new_size = max(1, int(sizes[j] * rnd.choice([0.5, 0.8, 1.25, 2.0])))
        resized.append(len(set(ranges(everything,
                                      lambda i: new_size if i == j else sizes[i])) - base))
    return (statistics.mean(lengths), sum(x * x for x in lengths) / sum(lengths),
            max(lengths), statistics.mean(deleted), max(deleted),
            statistics.mean(resized), max(resized))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--range-size", type=int, default=2048)
    ap.add_argument("--entry-size", type=int, default=20)
    ap.add_argument("--entries", type=int, default=20000)
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print("factor | mean range | range holding a byte | largest | "
          "ranges changed by a deletion (mean, most) | by a resize (mean, most)")
    for factor in (1, 2, 4):
        m, held, big, dm, dx, rm, rx = measure(a.range_size, factor, a.entry_size,
                                               a.entries, a.trials, a.seed)
        print(f"{factor} | {m:.0f} ({m / a.range_size:.2f}x) | {held:.0f} "
              f"({held / a.range_size:.2f}x) | {big} | {dm:.3f}, {dx} | {rm:.3f}, {rx}")


if __name__ == "__main__":
    main()
