#!/usr/bin/env python3
"""Regenerate contexts.json, the golden table of TestSampleContextsGolden.

It records what CPython's random module draws, which is what the reference
tool's seeded context plan draws: for each seed, the first random() values of
random.Random(seed) and the bucket context of each of n draws.

Run from this directory with CPython 3 (the script refuses another
implementation, whose generator may differ):

    python3 gen_contexts.py > contexts.json
"""
import json
import platform
import random
import sys

if platform.python_implementation() != "CPython":
    sys.exit("gen_contexts.py: needs CPython's random module")

BUCKETS = [(0.218, 16000), (0.602, 32768), (0.906, 65536), (0.995, 131072)]
TOP = 262144


def bucket(u):
    for bound, context in BUCKETS:
        if u <= bound:
            return context
    return TOP


CASES = [
    (0, 64), (1, 64), (-1, 64), (3, 64), (-3, 64), (42, 64), (1717, 64),
    (-1717, 64), (2**31 - 1, 64), (2**31, 64), (2**32 - 1, 64), (2**32, 64),
    (2**32 + 1, 64), (-(2**32), 64), (2**48 + 12345, 64),
    (123456789012345, 64), (2**63 - 1, 64), (-(2**63 - 1), 64), (-(2**63), 64),
    (1717, 10000), (0, 2000), (-(2**63), 1500), (987654321, 700),
]

rows = []
for seed, n in CASES:
    r = random.Random(seed)
    draws = [r.random() for _ in range(n)]
    rows.append({
        "seed": seed,
        "n": n,
        "first_draws": draws[:16],
        "contexts": [bucket(u) for u in draws],
    })

json.dump({"generator": "CPython %s random.Random(seed).random()" % platform.python_version(),
           "cases": rows}, sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
