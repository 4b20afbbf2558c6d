#!/usr/bin/env python3
"""Simulate the toaster's content-defined range boundaries (ends_range() and
maybe_cut() in src/skeleton_build.c) on random entries, to compare rules.

For each rule it prints the mean range size, the mean size of the range that
holds a random byte (an edit lands there: what an update rewrites), the
largest range, and how many ranges a deletion of one random entry changes
(1 is the minimum: the range that held it).

    tools/range-sim.py [--range-size 2048] [--entries 20000] [--trials 500]
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


def measure(range_size, factor, n, trials, seed):
    rnd = random.Random(seed)
    sizes = [20 if rnd.random() < 0.9 else rnd.randint(5, 200) for _ in range(n)]
    hashes = [rnd.random() for _ in range(n)]

    def ranges(ids):
        st = cut([sizes[i] for i in ids], [hashes[i] for i in ids], range_size, factor)
        return [tuple(ids[a:b]) for a, b in zip(st, st[1:] + [len(ids)])]

    base = ranges(list(range(n)))
    lengths = [sum(sizes[i] for i in r) for r in base]
    changed = []
    for _ in range(trials):
        j = rnd.randrange(n // 4, 3 * n // 4)
        ids = list(range(j)) + list(range(j + 1, n))
        changed.append(len(set(ranges(ids)) - set(base)))
    return (statistics.mean(lengths), sum(x * x for x in lengths) / sum(lengths),
            max(lengths), statistics.mean(changed))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--range-size", type=int, default=2048)
    ap.add_argument("--entries", type=int, default=20000)
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print("factor | mean range | range holding a byte | largest | ranges changed by a deletion")
    for factor in (1, 2, 4):
        m, held, big, ch = measure(a.range_size, factor, a.entries, a.trials, a.seed)
        print(f"{factor} | {m:.0f} ({m / a.range_size:.2f}x) | {held:.0f} "
              f"({held / a.range_size:.2f}x) | {big} | {ch:.3f}")


if __name__ == "__main__":
    main()
