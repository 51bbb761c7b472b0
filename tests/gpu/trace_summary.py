#!/usr/bin/env python3
"""What an ovl trace holds, for the GPU kit's logs (tests/gpu/device_check.sh): meta, kernels
per stream, NCCL calls and the GPU work linked to them, NVTX, copies, launches. Reads the
SQLite file directly (python3's sqlite3 module), so it works where ovl's own reader would be
the thing under test.

  trace_summary.py TRACE.sqlite...        a summary per trace
  trace_summary.py --phases TRACE...      also the kernels inside each NVTX range named
                                          "phase <name>" (the profiler stage's phases)
  trace_summary.py --result TRACE...      one last line: RESULT: <key figures>
Exit status 0, or 1 when a file is not an ovl trace.
"""

import argparse
import sqlite3
import sys

META_KEYS = ["rank", "hostname", "clock", "capture", "cupti", "cupti_version", "cupti_library", "cupti_kinds",
             "cupti_degraded", "cupti_conflict", "cupti_capture_ended_ns", "nccl_version", "dropped_records",
             "dropped_host_events", "dropped_cupti_records", "bad_records"]


def one(db, sql, args=()):
    row = db.execute(sql, args).fetchone()
    return row[0] if row else None


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def summary(path, phases):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    have = tables(db)
    if "meta" not in have or "kernels" not in have:
        print("%s: not an ovl trace" % path)
        return None
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    print("== %s" % path)
    for k in META_KEYS:
        if k in meta:
            print("meta.%s: %s" % (k, meta[k]))
    names = "LEFT JOIN strings s ON s.id = k.name"
    kernels = one(db, "SELECT count(*) FROM kernels")
    print("kernels: %d" % kernels)
    for stream, n, busy in db.execute("SELECT stream, count(*), sum(end - start) FROM kernels GROUP BY stream "
                                      "ORDER BY count(*) DESC"):
        top = db.execute("SELECT s.value, count(*) FROM kernels k %s WHERE k.stream = ? GROUP BY k.name "
                         "ORDER BY count(*) DESC LIMIT 3" % names, (stream,)).fetchall()
        print("  stream %s: %d kernels, %.3f ms busy; %s" % (stream, n, (busy or 0) / 1e6,
                                                              ", ".join("%s x%d" % (t[0][:60], t[1]) for t in top)))
    colls = one(db, "SELECT count(*) FROM collectives")
    linked_k = one(db, "SELECT count(DISTINCT l.collective) FROM collective_launches l JOIN kernels k "
                       "ON k.correlation = l.correlation")
    linked_m = one(db, "SELECT count(DISTINCT l.collective) FROM collective_launches l JOIN memops m "
                       "ON m.correlation = l.correlation")
    linked = one(db, "SELECT count(DISTINCT c.id) FROM collectives c JOIN collective_launches l ON l.collective = c.id "
                     "WHERE EXISTS (SELECT 1 FROM kernels k WHERE k.correlation = l.correlation) "
                     "OR EXISTS (SELECT 1 FROM memops m WHERE m.correlation = l.correlation)")
    print("collectives: %d, linked to GPU work: %d (to kernels %d, to copies %d)" % (colls, linked, linked_k, linked_m))
    for op, n, nbytes in db.execute("SELECT op, count(*), sum(bytes) FROM collectives GROUP BY op"):
        print("  %s: %d calls, %d bytes" % (op, n, nbytes or 0))
    for name, n in db.execute("SELECT s.value, count(*) FROM collective_launches l JOIN kernels k "
                              "ON k.correlation = l.correlation %s GROUP BY k.name ORDER BY count(*) DESC LIMIT 5"
                              % names):
        print("  linked kernel: %s x%d" % (name, n))
    nvtx = one(db, "SELECT count(*) FROM nvtx") if "nvtx" in have else 0
    print("nvtx: %d" % nvtx)
    if nvtx:
        for name, n in db.execute("SELECT name, count(*) FROM nvtx GROUP BY name ORDER BY count(*) DESC LIMIT 5"):
            print("  %s x%d" % (name, n))
    if "memops" in have:
        for kind, n, nbytes in db.execute("SELECT kind, count(*), sum(bytes) FROM memops GROUP BY kind"):
            print("memops %s: %d, %d bytes" % (kind, n, nbytes or 0))
    if "api" in have:
        print("api: %d launches" % one(db, "SELECT count(*) FROM api"))
    steps = one(db, "SELECT count(*) FROM nvtx WHERE name IN ('step', 'ovl:step') OR name LIKE 'ProfilerStep#%'") \
        if nvtx else 0
    if phases and nvtx:
        for name, start, end in db.execute("SELECT name, start, end FROM nvtx WHERE name LIKE 'phase %' "
                                           "ORDER BY start").fetchall():
            n = one(db, "SELECT count(*) FROM kernels WHERE start >= ? AND start < ?", (start, end))
            print("%s: %d kernels in %.3f ms" % (name, n, (end - start) / 1e6))
    return {"kernels": kernels, "streams": one(db, "SELECT count(DISTINCT stream) FROM kernels"),
            "collectives": colls, "linked": linked, "nvtx": nvtx, "steps": steps,
            "dropped": meta.get("dropped_records", "?"), "cupti": meta.get("cupti", "?")}


def main():
    parser = argparse.ArgumentParser(description="Summarise ovl traces for the GPU kit's logs.")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--phases", action="store_true", help="kernels inside NVTX ranges named 'phase <name>'")
    parser.add_argument("--result", action="store_true", help="end with one RESULT: line")
    args = parser.parse_args()
    totals, bad = [], 0
    for path in args.traces:
        s = summary(path, args.phases)
        if s is None:
            bad += 1
        else:
            totals.append(s)
    if args.result and totals:
        t = {k: sum(s[k] for s in totals) for k in ("kernels", "collectives", "linked", "nvtx", "steps")}
        print("RESULT: %d trace(s): %d kernels on %d stream(s), %d collectives (%d linked to GPU work), %d NVTX, "
              "%d steps, dropped %s, cupti: %s" % (len(totals), t["kernels"], max(s["streams"] for s in totals),
                                                   t["collectives"], t["linked"], t["nvtx"], t["steps"],
                                                   ",".join(str(s["dropped"]) for s in totals), totals[0]["cupti"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
