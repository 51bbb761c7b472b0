"""`ovl stats` and `ovl diff` as scripts read them (issue 34), one check per ctest test:

  stats_csv    `ovl stats --csv` parses with Python's csv module (tables apart by one empty row,
               each with its header) and its totals equal `ovl report --json`'s, rank by rank:
               the summary's numbers, kernel counts and time by class against the streams,
               memcpy counts and memory time, NCCL calls and bytes against the collectives; on
               a simulated misordered trace, a simulated 4-rank DDP job, the real 8-rank DLRM
               Kineto job and HTA's trace_diff test trace (data/traces: byte copies of
               ../shared/traces files);
  diff_html    `ovl diff --html`: a strict parse (html_check.py), every number of the
               comparison equal to `ovl diff --json`'s and of AFTER's report to
               `ovl report --json`'s; two saved reports give the comparison alone;
  kineto_diff  HTA's trace_diff control (rank 3 of 8, A100) against test (rank 1 of 2, V100):
               the job's medians worked out here from each `ovl report --json`, the kernels new
               and vanished against the kernel names read straight from the Kineto files, ranks
               and communicators paired by position and first use;
  gpu_diff     real H200 traces of ovl-ddp (data/gpu-h100, GPU_DIR): 25 MB against 5 MB
               buckets, the step times against the same job's step times measured without
               libovl (buckets/step-times.txt) and the buckets per step against the job's own
               count; misordered against bucketed, the exposed time recovered.

usage: test_compare.py OVL TRACES_DIR CHECK [GPU_DIR]
"""
import csv
import gzip
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import html_check  # noqa: E402

ovl, traces, which = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([ovl] + [str(a) for a in args], capture_output=True, text=True)


def json_of(*args):
    r = run(*args)
    check(r.returncode == 0, "ovl %s: exit 0 (%s)" % (" ".join(map(str, args)), r.stderr.strip()))
    return json.loads(r.stdout) if r.returncode == 0 else None


def csv_tables(text):
    """The tables of `ovl stats --csv`: lists of dict rows, split at empty rows."""
    tables, rows = [], []
    for row in csv.reader(io.StringIO(text)):
        if not row:
            tables.append(rows)
            rows = []
        else:
            rows.append(row)
    tables.append(rows)
    return [[dict(zip(t[0], r)) for r in t[1:]] for t in tables if t]


def simulated(tmp):
    mis = os.path.join(tmp, "mis.sqlite")
    check(run("simulate", "--bucket-layers", "8", "--misordered", "--emit-trace", mis).returncode == 0, "simulate")
    job = os.path.join(tmp, "ddp4")
    check(run("simulate", "--strategy", "ddp", "--dp", "4", "--emit-trace", job).returncode == 0, "simulate ddp")
    return mis, job


def stats_csv(tmp):
    mis, job = simulated(tmp)
    inputs = [mis, job, os.path.join(traces, "kineto-param-dlrm8"),
              os.path.join(traces, "kineto-hta", "trace_diff__test__test.json.gz")]
    for trace in inputs:
        r = run("stats", "--csv", trace)
        check(r.returncode == 0 and r.stderr == "", "%s: ovl stats --csv exits 0 quietly (%s)" % (trace, r.stderr))
        tables = csv_tables(r.stdout)
        check(len(tables) == 5, "%s: five tables" % trace)
        if len(tables) != 5:
            continue
        summary, kernels, nccl, nvtx, memcpy = tables
        check("name" in kernels[0] and "busbw_gbps" in nccl[0] and "style" in nvtx[0] and "kind" in memcpy[0]
              if kernels and nccl and nvtx and memcpy else True, "%s: table headers" % trace)
        report = json_of("report", "--json", trace)
        if report is None:
            continue
        check(len(summary) == len(report["ranks"]), "%s: one summary row per rank" % trace)
        for row, rank in zip(summary, report["ranks"]):
            key = (str(rank["rank"]), str(rank["device"]))
            where = "%s rank %s" % (trace, key[0])
            check((row["rank"], row["device"]) == key, where + ": summary in the report's rank order")
            for k in ("t_compute_ns", "t_comm_ns", "t_exposed_ns", "t_memory_ns", "kernels", "comm_kernels", "memops"):
                check(int(row[k]) == rank[k], "%s: summary %s %s == report %s" % (where, k, row[k], rank[k]))
            eff = rank["overlap_efficiency"]
            check((row["overlap_efficiency"] == "" and eff is None) or abs(float(row["overlap_efficiency"]) - eff) < 1e-8,
                  where + ": summary efficiency")
            check(int(row["steps"]) == len(rank["steps"]), where + ": steps")
            mine = lambda t: [x for x in t if (x["rank"], x["device"]) == key]  # noqa: E731
            ks, ms, ns = mine(kernels), mine(memcpy), mine(nccl)
            streams = rank["streams"]
            by_class = lambda rows, c: sum(int(x["total_ns"]) for x in rows if x["class"] == c)  # noqa: E731
            check(sum(int(x["count"]) for x in ks) == rank["kernels"], where + ": kernel counts")
            check(sum(int(x["count"]) for x in ks if x["class"] == "communication") == rank["comm_kernels"],
                  where + ": communication kernel counts")
            check(by_class(ks, "compute") == sum(s["compute_ns"] for s in streams), where + ": compute time")
            check(by_class(ks, "communication") + by_class(ms, "communication") == sum(s["comm_ns"] for s in streams),
                  where + ": communication time")
            check(by_class(ms, "memory") == sum(s["memory_ns"] for s in streams), where + ": memory time")
            check(sum(int(x["count"]) for x in ms) == rank["memops"], where + ": memcpy counts")
            colls = [c for s in rank["steps"] for c in s["collectives"]]
            check(sum(int(x["count"]) for x in ns) == len(colls) + rank["collectives_outside_steps"],
                  where + ": NCCL calls")
            if rank["collectives_outside_steps"] == 0:
                check(sum(int(x["bytes"] or 0) for x in ns) == sum(c["bytes"] or 0 for c in colls), where + ": NCCL bytes")
                check(sum(int(x["total_ns"]) for x in ns) == sum(c["gpu_end_ns"] - c["gpu_start_ns"] for c in colls),
                      where + ": NCCL time")
            shares = sum(float(x["share"]) for x in ks)
            check(abs(shares - 1) < 1e-6 if ks else True, where + ": kernel shares add up to 1")
        # one table per --report
        r = run("stats", "--csv", "--report", "nccl", trace)
        one = csv_tables(r.stdout)
        check(r.returncode == 0 and len(one) == 1 and one[0] == nccl, "%s: --report nccl is the nccl table" % trace)


def diff_html(tmp):
    mis, _ = simulated(tmp)
    ordered = os.path.join(tmp, "ord.sqlite")
    check(run("simulate", "--bucket-layers", "8", "--emit-trace", ordered).returncode == 0, "simulate")
    page = os.path.join(tmp, "diff.html")
    r = run("diff", "--html", page, "-o", os.path.join(tmp, "diff.txt"), mis, ordered)
    check(r.returncode == 0 and r.stdout == "", "ovl diff --html -o: exit 0, nothing printed (%s)" % r.stderr)
    text = open(page, encoding="utf-8").read()
    diff = json_of("diff", "--json", mis, ordered)
    report = json_of("report", "--json", ordered)
    wargs = html_check.whatif_args(text)  # the page's bucket-size valley, replayed as it was
    whatif = json_of("whatif", "--json", *wargs, ordered) if wargs else None
    problems = html_check.check_page(text, report, whatif, {"diff": diff}, ["diff"] + html_check.SECTIONS)
    check(not problems, "diff page: %s" % problems[:5])
    check(text.count('data-j="diff.') >= 20, "the comparison's numbers are marked")
    check("Bucket order: changed" in text and "recovered" in text, "the page names the order change and the recovery")
    # a changed number is caught (the checker is not blind)
    bad = text.replace('data-j="diff.job.exposed.after" data-k="ns" data-v="', 'data-j="diff.job.exposed.after" data-k="ns" data-v="1', 1)
    check(html_check.check_page(bad, report, whatif, {"diff": diff}, ["diff"]) != [], "checker catches a changed number")
    # two saved reports: the comparison alone
    a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    check(run("report", "--json", "-o", a, mis).returncode == 0 and run("report", "--json", "-o", b, ordered).returncode == 0,
          "saved reports")
    r = run("diff", "--html", page, "-o", os.path.join(tmp, "diff2.txt"), a, b)
    check(r.returncode == 0, "diff --html of saved reports (%s)" % r.stderr)
    text = open(page, encoding="utf-8").read()
    diff = json_of("diff", "--json", a, b)
    problems = html_check.check_page(text, {}, None, {"diff": diff}, ["diff"])
    check(not problems, "saved-report diff page: %s" % problems[:5])
    check('id="summary"' not in text, "no report sections without traces")


def kernel_names(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    return {e["name"] for e in doc.get("traceEvents", []) if e.get("cat") == "kernel" and e.get("ph") == "X"}


def median_of(values):
    return statistics.median(values) if values else None


def kineto_diff(tmp):
    del tmp
    before = os.path.join(traces, "kineto-hta", "trace_diff__control__control.json.gz")
    after = os.path.join(traces, "kineto-hta", "trace_diff__test__test.json.gz")
    d = json_of("diff", "--json", before, after)
    rb, ra = json_of("report", "--json", before), json_of("report", "--json", after)
    if d is None or rb is None or ra is None:
        return
    for side, rep in (("before", rb), ("after", ra)):
        steps = rep["ranks"][0]["steps"]
        want = {"step_time": median_of([s["end_ns"] - s["start_ns"] for s in steps]),
                "compute": median_of([s["t_compute_ns"] for s in steps]),
                "comm": median_of([s["t_comm_ns"] for s in steps]),
                "exposed": median_of([s["t_exposed_ns"] for s in steps])}
        for k, v in want.items():
            got = d["job"][k][side]
            check(abs(got - v) <= 1e-6 * abs(v) + 1, "%s %s: %r == median %r" % (side, k, got, v))
        r = rep["ranks"][0]
        eff = 1 - r["t_exposed_ns"] / r["t_comm_ns"]
        check(abs(d["job"]["efficiency"][side] - eff) < 1e-8, "%s efficiency of the whole run" % side)
    check(d["ranks_paired_by"] == "position" and d["ranks"][0]["rank_before"] == 3 and d["ranks"][0]["rank_after"] == 1,
          "rank 3 compared with rank 1, one with one")
    check(all(c["comms_paired_by"] == "first_use" for c in d["collectives"]), "communicators paired by first use")
    names_b, names_a = kernel_names(before), kernel_names(after)
    new = {k["name"] for k in d["kernels"] if k["status"] == "new"}
    gone = {k["name"] for k in d["kernels"] if k["status"] == "vanished"}
    check(names_a - names_b <= new and new <= names_a, "new kernels: %d, from the files %d" % (len(new), len(names_a - names_b)))
    check(names_b - names_a <= gone and gone <= names_b, "vanished kernels: %d, from the files %d" % (len(gone), len(names_b - names_a)))
    check(len(names_a - names_b) > 0 and len(names_b - names_a) > 0, "the pair has new and vanished kernels (V100 vs A100)")
    # text: bounded, most significant first
    r = run("diff", before, after)
    check(r.returncode == 0 and len(r.stdout.splitlines()) <= 80, "text report bounded (%d lines)" % len(r.stdout.splitlines()))


def plain_step_times(path):
    """Median step time (ns) per bucket cap of the runs without libovl, and each cap's buckets."""
    times, buckets = {}, {}
    for line in open(path, encoding="utf-8"):
        cap, _rep, doc = line.split(" ", 2)
        r = json.loads(doc)
        times.setdefault(int(cap), []).append(r["avg_epoch_s"] * r["epochs"] / r["steps"] * 1e9)
        buckets[int(cap)] = r["buckets"]
    return {c: statistics.median(v) for c, v in times.items()}, buckets


def gpu_diff(tmp):
    del tmp
    gpu = sys.argv[4]
    plain, buckets = plain_step_times(os.path.join(gpu, "buckets", "step-times.txt"))
    d = json_of("diff", "--json", os.path.join(gpu, "buckets", "bucketed-25mb.sqlite"),
                os.path.join(gpu, "buckets", "bucketed-5mb.sqlite"))
    if d is None:
        return
    st = d["job"]["step_time"]
    # the traced steps against the same job's steps without libovl (its overhead is under 1%)
    check(abs(st["before"] / plain[25] - 1) < 0.03, "25 MB step %.0f ns vs %.0f ns without libovl" % (st["before"], plain[25]))
    check(abs(st["after"] / plain[5] - 1) < 0.03, "5 MB step %.0f ns vs %.0f ns without libovl" % (st["after"], plain[5]))
    check(st["significant"] and st["change"] > 0, "the 5 MB buckets' slower step is flagged")
    b = d["bucket_order"]
    check(b["before"]["buckets_per_step"] == buckets[25] and b["after"]["buckets_per_step"] == buckets[5],
          "buckets per step %r -> %r, the job's own %r -> %r" % (b["before"]["buckets_per_step"],
                                                              b["after"]["buckets_per_step"], buckets[25], buckets[5]))
    check(b["layout_changed"] and not b["changed"], "a layout change, not an order change")
    calls = [c for c in d["collectives"] if c["kind"] == "per_step" and c["op"] == "AllReduce"]
    check(len(calls) == 1 and calls[0]["calls_per_step"]["before"] == buckets[25]
          and calls[0]["calls_per_step"]["after"] == buckets[5], "all-reduces per step")
    new = [c for c in d["collectives"] if c["kind"] == "call" and c["status"] == "new"]
    check(len(new) == buckets[5] - buckets[25], "%d new calls per step" % len(new))
    # misordered against bucketed: the exposed time falls beyond the spread
    d = json_of("diff", "--json", os.path.join(gpu, "ddp", "misordered.sqlite"), os.path.join(gpu, "ddp", "bucketed.sqlite"))
    rb = json_of("report", "--json", os.path.join(gpu, "ddp", "misordered.sqlite"))
    ra = json_of("report", "--json", os.path.join(gpu, "ddp", "bucketed.sqlite"))
    if d is None or rb is None or ra is None:
        return
    e = d["job"]["exposed"]
    want_b = median_of([x["t_exposed_ns"] for x in rb["ranks"][0]["steps"]])
    want_a = median_of([x["t_exposed_ns"] for x in ra["ranks"][0]["steps"]])
    check(e["before"] == want_b and e["after"] == want_a, "exposed medians from the reports")
    check(e["significant"] and d["job"]["exposed_recovered_per_step_ns"] == want_b - want_a, "exposed time recovered")
    r = run("diff", os.path.join(gpu, "ddp", "misordered.sqlite"), os.path.join(gpu, "ddp", "bucketed.sqlite"))
    check("Exposed communication recovered: " in r.stdout, "the text says what was recovered")


with tempfile.TemporaryDirectory() as tmp:
    {"stats_csv": stats_csv, "diff_html": diff_html, "kineto_diff": kineto_diff, "gpu_diff": gpu_diff}[which](tmp)
print("%s: %d failures" % (which, len(failures)))
sys.exit(1 if failures else 0)
