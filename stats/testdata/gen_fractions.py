#!/usr/bin/env python3
"""Writes fractions.golden.json: summaries computed with exact rationals.

An oracle for stats.Summarize that shares no code or method with it: the
mean is math.fsum(xs) / n (checked against the fractions.Fraction sum
rounded once), the standard deviation is the float nearest the square root
of the exact sample variance (a Fraction), found by testing the midpoints to
a candidate's neighbours against that variance, and the percentiles are
nearest rank.

Run from this directory: python3 gen_fractions.py > fractions.golden.json
Floats are written as float.hex() strings so that no decimal conversion
stands between Python and Go.
"""

import json
import math
import random
from fractions import Fraction

Z95 = 1.96
PERCENTILES = (25, 50, 75, 90, 95, 99)


def exact_variance(xs):
    n = len(xs)
    fs = [Fraction(x) for x in xs]
    mean = sum(fs, Fraction(0)) / n
    return sum(((f - mean) ** 2 for f in fs), Fraction(0)) / (n - 1)


def correctly_rounded_sqrt(v):
    """The float nearest sqrt(v) for a Fraction v >= 0, ties to even."""
    if v == 0:
        return 0.0
    y = math.sqrt(float(v))  # within a few ulps (float(v) may itself round)
    while True:
        lo = (Fraction(math.nextafter(y, 0.0)) + Fraction(y)) / 2
        hi = (Fraction(y) + Fraction(math.nextafter(y, math.inf))) / 2
        even = (y.hex().split("p")[0][-1] in "02468ace")
        if v < lo * lo or (v == lo * lo and not even):
            y = math.nextafter(y, 0.0)
        elif v > hi * hi or (v == hi * hi and not even):
            y = math.nextafter(y, math.inf)
        else:
            return y


def nearest_rank(sorted_xs, p):
    rank = (p * len(sorted_xs) + 99) // 100
    return sorted_xs[max(rank, 1) - 1]


def summarize(xs):
    n = len(xs)
    out = {"samples": [x.hex() for x in xs], "n": n}
    if n == 0:
        return out
    mean = math.fsum(xs) / n
    assert math.fsum(xs) == float(sum((Fraction(x) for x in xs), Fraction(0)))
    out["mean"] = mean.hex()
    s = sorted(xs)
    out["min"], out["max"] = s[0].hex(), s[-1].hex()
    for p in PERCENTILES:
        out["p%d" % p] = nearest_rank(s, p).hex()
    if n >= 2:
        sd = correctly_rounded_sqrt(exact_variance(xs))
        half = (Z95 * sd) / math.sqrt(n)
        out["stddev"] = sd.hex()
        out["ci95_low"] = (mean - half).hex()
        out["ci95_high"] = (mean + half).hex()
    return out


def sample_sets(rng):
    yield []
    yield [1234.5]
    yield [3.0, 1.0]
    yield [1e16, 1.0, 1.0, -1e16]
    # Constant and near-constant sets with a large offset: naive variance
    # formulas cancel catastrophically here.
    yield [1e9 + 0.5] * 7
    yield [1e9 + i * 2.0 ** -20 for i in range(9)]
    for _ in range(60):
        n = rng.randint(2, 120)
        kind = rng.randrange(5)
        if kind == 0:  # latencies in ms
            xs = [rng.uniform(20, 200) + rng.expovariate(1 / 400) for _ in range(n)]
        elif kind == 1:  # token counts
            xs = [float(rng.randint(1, 8192)) for _ in range(n)]
        elif kind == 2:  # rates with a tail
            xs = [rng.lognormvariate(5.5, 1.2) for _ in range(n)]
        elif kind == 3:  # wide magnitudes and signs
            xs = [math.ldexp(rng.random(), rng.randint(-80, 80)) * rng.choice((1, -1))
                  for _ in range(n)]
        else:  # near-duplicates one ulp apart
            base = rng.uniform(1, 1e4)
            xs = [base + rng.randint(0, 3) * math.ulp(base) for _ in range(n)]
        yield xs


def main():
    rng = random.Random(20261129)
    cases = [summarize(xs) for xs in sample_sets(rng)]
    print(json.dumps(cases, indent=1))


if __name__ == "__main__":
    main()
