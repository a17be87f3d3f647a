#!/usr/bin/env python3
"""Regenerate prompts.json, the golden table of TestPromptGolden.

An independent implementation, in Python, of the prompt formula of
DESIGN.md section 5 (the reference tool's prompts in shared mode, without
canaries or response words). For each case it records the prompt's length
and SHA-256, and the prompt itself when it is short.

Run from this directory:

    python3 gen_prompts.py > prompts.json
"""
import hashlib
import json
import sys

C = 3.0  # estimated characters per token


def line(i, k):
    return "def helper_%d():\n    return compute(%d)  # routine specialist context\n" % (i, k)


def lines(offset, n):
    out, total, k = [], 0, 0
    while total < n:
        s = line(offset + k, k)
        out.append(s)
        total += len(s)
        k += 1
    return "".join(out)[:n]


def prompt(context, prompt_budget, shared_tokens, index):
    budget = min(context, prompt_budget)
    prefix = lines(0, int(shared_tokens * C)) if shared_tokens > 0 else ""
    tail = "\n# request " + str(index) + ": summarize the above in one line."
    n = int(budget * C) - len(prefix) - len(tail) - 1
    if n <= 0:
        cut = int(budget * C) - len(tail)
        if cut < 0:
            raise ValueError("budget too small for the tail")
        return prefix[:cut] + tail
    return prefix + "\n" + lines(index, n) + tail


# context, max_model_len, max_tokens, margin, shared_tokens, index
CASES = [
    (16000, 262144, 64, 1024, 8000, 0),
    (32768, 262144, 64, 1024, 8000, 5),
    (65536, 262144, 64, 1024, 8000, 59),
    (65536, 262144, 8192, 1024, 0, 3),
    (131072, 32768, 64, 1024, 8000, 7),
    (6000, 262144, 64, 1024, 8000, 9999),
    (32, 262144, 64, 1024, 8000, 0),
    (32, 262144, 64, 1024, 0, 12),
    (116, 4096, 64, 1024, 100, 10),
    (116, 4096, 64, 1024, 100, 0),
    (117, 4096, 64, 1024, 100, 0),
    (2000, 3000, 64, 0, 1, 1),
    (300000, 1048576, 64, 1024, 262144, 2),
    (1048576, 1048576, 64, 1024, 8000, 1),
]

SHORT = 4000

rows = []
for context, mml, max_tokens, margin, shared, index in CASES:
    p = prompt(context, mml - max_tokens - margin, shared, index)
    row = {
        "context": context, "max_model_len": mml, "max_tokens": max_tokens,
        "margin": margin, "shared_prefix_tokens": shared, "index": index,
        "length": len(p), "sha256": hashlib.sha256(p.encode()).hexdigest(),
    }
    if len(p) <= SHORT:
        row["prompt"] = p
    rows.append(row)

json.dump({"cases": rows}, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
