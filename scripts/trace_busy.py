#!/usr/bin/env python3
"""trace_busy.py - where a run's cores waited, read from its --trace file.

tilestream's --trace is Chrome Trace Event JSON, a lane per CPU worker and
per GPU stream. This prints, without a browser: the run's span, each stage's
busy seconds and count, each lane's busy time and first and last event, and
how many CPU workers were busy in each slice of the run (0.1 s by default),
which shows where cores stood idle (the GPU's start, a tail of large images).

--replay: the run's decode and encode times, image by image, replayed on
as many workers as the trace has, to predict what an order of the decodes
would take: input order, the last N images largest first, all largest
first, and the bound where no worker ever waits. A model, not a run: each
worker takes a ready encode first, else the next decode; an image's encode
is ready a fixed latency (--latency) after its decode ends; the GPU's start
and the work between the two are left out.

Usage: python3 scripts/trace_busy.py TRACE.json [--slice 0.1] [--replay] [--latency 0.03]
Standard library only.
"""
import argparse
import collections
import heapq
import json


def replay(order, dec, enc, workers, latency):
    """The makespan of the decodes in this order, each image's encode
    ready latency after its decode, a free worker taking a ready encode
    first, else the next decode."""
    free = [0.0] * workers
    ready = []   # (time the encode may start, image): a heap
    todo = collections.deque(order)
    end = 0.0
    while todo or ready:
        t = heapq.heappop(free)
        if ready and (ready[0][0] <= t or not todo):
            r, i = heapq.heappop(ready)
            t = max(t, r) + enc[i]
            end = max(end, t)
        else:
            i = todo.popleft()
            t += dec[i]
            heapq.heappush(ready, (t + latency, i))
        heapq.heappush(free, t)
    return end


def print_replay(spans, workers, latency):
    dec, enc = {}, {}
    for e in spans:
        i = e.get("args", {}).get("image")
        if i is not None and e["name"] in ("decode", "encode"):
            (dec if e["name"] == "decode" else enc)[i] = e["dur"] / 1e6
    ids = sorted(i for i in dec if i in enc)
    if not ids or workers < 1:
        print("replay: no image has both a decode and an encode")
        return
    cost = {i: dec[i] + enc[i] for i in ids}
    print(f"replay of {len(ids)} images on {workers} workers, encodes {latency * 1000:g} ms after their decodes (a model):")
    print(f"  input order                 {replay(ids, dec, enc, workers, latency):.3f} s")
    for last in (workers, 2 * workers, 3 * workers):
        if last < len(ids):
            order = ids[:-last] + sorted(ids[-last:], key=lambda i: -cost[i])
            print(f"  last {last:4d} largest first     {replay(order, dec, enc, workers, latency):.3f} s")
    print(f"  all largest first           {replay(sorted(ids, key=lambda i: -cost[i]), dec, enc, workers, latency):.3f} s")
    print(f"  no worker ever waiting      {sum(cost.values()) / workers:.3f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--slice", type=float, default=0.1, help="seconds a slice (default 0.1)")
    ap.add_argument("--replay", action="store_true", help="replay the decodes and encodes in other orders (a model)")
    ap.add_argument("--latency", type=float, default=0.03, help="--replay: seconds from a decode's end to its encode")
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
    if a.replay:
        print_replay(spans, len(workers), a.latency)


if __name__ == "__main__":
    main()
