#!/usr/bin/env python3
"""trace_busy.py - where a run's cores waited, read from its --trace file.

tilestream's --trace is Chrome Trace Event JSON, a lane per CPU worker and
per GPU stream. This prints, without a browser: the run's span, each stage's
busy seconds and count, each lane's busy time and first and last event, and
how many CPU workers were busy in each slice of the run (0.1 s by default),
which shows where cores stood idle (the GPU's start, a tail of large images).

Usage: python3 scripts/trace_busy.py TRACE.json [--slice 0.1]
Standard library only.
"""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--slice", type=float, default=0.1, help="seconds a slice (default 0.1)")
    a = ap.parse_args()
    with open(a.trace) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in ev if e.get("ph") == "X"]
    if not spans:
        raise SystemExit(f"{a.trace}: no events")
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    span = (t1 - t0) / 1e6
    print(f"span {span:.3f} s, {len(spans)} events")

    busy, count = collections.Counter(), collections.Counter()
    lanes = collections.defaultdict(list)
    for e in spans:
        busy[e["name"]] += e["dur"] / 1e6
        count[e["name"]] += 1
        lanes[names.get((e["pid"], e["tid"]), str(e["tid"]))].append(e)
    print("stages (busy s, events):", ", ".join(f"{k} {v:.2f} ({count[k]})" for k, v in busy.most_common()))

    print("lanes:")
    for name in sorted(lanes):
        es = lanes[name]
        first = (min(e["ts"] for e in es) - t0) / 1e6
        last = (max(e["ts"] + e["dur"] for e in es) - t0) / 1e6
        print(f"  {name:26} busy {sum(e['dur'] for e in es) / 1e6:7.3f} s, {first:.3f} to {last:.3f} s, {len(es)} events")

    # busy CPU workers in each slice: the time their events cover in it over its length
    n = int(span / a.slice) + 1
    cover = [0.0] * n
    workers = [name for name in lanes if "worker" in name]
    for name in workers:
        for e in lanes[name]:
            s, end = (e["ts"] - t0) / 1e6, (e["ts"] + e["dur"] - t0) / 1e6
            k = int(s / a.slice)
            while s < end and k < n:
                cut = min(end, (k + 1) * a.slice)
                cover[k] += cut - s
                s, k = cut, k + 1
    print(f"busy CPU workers of {len(workers)}, a {a.slice:g} s slice each:")
    for k in range(0, n, 10):
        row = " ".join(f"{c / a.slice:4.1f}" for c in cover[k:k + 10])
        print(f"  {k * a.slice:6.2f} s: {row}")
    total = sum(cover)
    if workers:
        print(f"workers busy {total:.2f} of {len(workers) * span:.2f} worker-seconds ({total / (len(workers) * span):.0%})")


if __name__ == "__main__":
    main()
