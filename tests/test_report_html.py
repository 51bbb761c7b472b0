"""`ovl report --html` and `ovl run --html`: the page of the demo trace, of a misordered DDP trace (simulate's
--misordered) and of the real 8-rank DLRM job parses strictly, every number on it equals the
JSON report's (or `ovl whatif --json`'s, for the bucket-size valley), and the pictures show
what the analysis found (html_check.py). The checker itself is shown to fail on a changed
number, an unmarked quantity and an unclosed element. Bad output paths fail cleanly.

usage: test_report_html.py OVL TRACES_DIR
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import html_check  # noqa: E402

ovl, traces = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([ovl] + list(args), capture_output=True, text=True)


def page_and_json(tmp, name, trace_args, page_args=()):
    """Writes the page; returns (page text, report JSON, whatif JSON or None)."""
    path = os.path.join(tmp, name + ".html")
    r = run("report", "--html", path, *page_args, *trace_args)
    check(r.returncode == 0 and r.stdout == "", "%s: ovl report --html exits 0, no text report (%s)" % (name, r.stderr))
    check(re.match(r"ovl: wrote %s \([0-9.]+ [KMG]?B\)\n$" % re.escape(path), r.stderr) is not None,
          "%s: ovl report --html names the page written (%r)" % (name, r.stderr))
    text = open(path, encoding="utf-8").read()
    r = run("report", "--json", *trace_args)
    check(r.returncode == 0, "%s: ovl report --json" % name)
    report = json.loads(r.stdout)
    whatif = None
    wargs = html_check.whatif_args(text)
    if wargs:
        r = run("whatif", "--json", *wargs, *trace_args)
        check(r.returncode == 0, "%s: ovl whatif --json %s" % (name, wargs))
        whatif = json.loads(r.stdout)
    return text, report, whatif


def checked(name, text, report, whatif):
    problems = html_check.check_page(text, report, whatif)
    for p in problems[:20]:
        print("  %s: %s" % (name, p))
    check(not problems, "%s: the page is valid and its numbers equal the JSON's (%d problems)" % (name, len(problems)))
    marked = len(re.findall(r'data-j="', text))
    print("%s: %d bytes, %d numbers checked against the JSON" % (name, len(text), marked))
    return marked


with tempfile.TemporaryDirectory(prefix="ovl-html-") as tmp:
    demo, mis = os.path.join(tmp, "demo.sqlite"), os.path.join(tmp, "misordered.sqlite")
    for path, extra in ((demo, ["--bucket-layers", "16"]), (mis, ["--bucket-layers", "8", "--misordered"])):
        r = run("simulate", "--steps", "3", "--emit-trace", path, *extra)
        check(r.returncode == 0, "simulate " + path)
    # The demo is the flagship demo's job (bootstrap.sh: 16-layer buckets). The simulated buckets are all
    # one size: alpha is given (the model's 200us) so the valley is the model's, as the demo's page.
    cases = {
        "demo": ([demo], ["--alpha", "200us"]),
        "misordered": ([mis], ["--alpha", "200us"]),
        "dlrm8": ([os.path.join(traces, "kineto-param-dlrm8")], []),
    }
    pages = {}
    for name, (targs, pargs) in cases.items():
        pages[name] = page_and_json(tmp, name, targs, pargs)
        checked(name, *pages[name])

    # Self-contained: nothing fetched from anywhere.
    for name, (text, _, _) in pages.items():
        check(not re.search(r'(src|href)="(?!#)|https?:|url\(|@import', text), "%s: no external resource" % name)

    # What the pictures must show, from the JSON of each.
    text, report, whatif = pages["demo"]
    check('class="shade"' in text and 'class="bwd"' in text, "demo: exposed time shaded, backward end marked")
    check(whatif is not None and 'class="best"' in text, "demo: the valley is drawn with its best cap")
    text, report, _ = pages["misordered"]
    mis_steps = [s for s in report["ranks"][0]["steps"] if s["misordered"]]
    check(mis_steps and 'class="ordbad"' in text and "misordered" in text,
          "misordered: crossing order lines and the word for it")
    check('class="ordbad"' not in pages["demo"][0], "demo: no misorder drawn")
    text, report, _ = pages["dlrm8"]
    nranks = len(report["cross_rank"]["ranks"])
    check(nranks == 8, "dlrm8: one job of 8 ranks")
    job = text[text.index('id="job"'):text.index('id="trend"')]
    check(job.count('class="bar"') + job.count('class="barbad"') == nranks, "dlrm8: one efficiency bar per rank")
    check(re.search(r'<rect [^>]*fill="#[0-9a-f]{6}"', job) is not None, "dlrm8: the arrival heat map is drawn")

    # The pictures read on their own (issue 33): round ticks, every label inside the picture and
    # off the curves, rank numbers, a heat-map scale, a timeline for any picked rank and step.
    def svgs(text, label):
        return re.findall(r'<svg class="chart"[^>]*aria-label="%s">(.*?)</svg>' % re.escape(label), text, re.S)

    def texts(svg):
        return [(float(x), float(y), a, c, t) for x, y, a, c, t in
                re.findall(r'<text x="([-\d.]+)" y="([-\d.]+)" text-anchor="(\w+)" class="(\w+)"[^>]*>([^<]*)</text>', svg)]

    def round_ticks(values):
        """Ticks at k times a step of 1, 2 or 5 times a power of ten."""
        if len(values) < 2:
            return True
        step = values[1] - values[0]
        mant = step / 10 ** math.floor(math.log10(step))
        return (any(abs(mant - m) < 1e-6 for m in (1, 2, 5, 10)) and
                all(abs((v - values[0]) / step - round((v - values[0]) / step)) < 1e-6 for v in values))

    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    for name, (text, report, whatif) in pages.items():
        check(svgs(text, "timeline of a step"), "%s: a timeline is drawn" % name)
        for svg in svgs(text, "timeline of a step"):
            ticks = [t for t in texts(svg) if t[3] == "tick"]
            vals = [float(t[4].split()[0]) * unit[t[4].split()[1]] for t in ticks]
            check(round_ticks(vals), "%s: timeline ticks at round times (%s)" % (name, [t[4] for t in ticks]))
            for x, y, anchor, cls, t in texts(svg):
                if cls == "bwdl":
                    check(anchor == "end" or x + 90 <= 1200, "%s: 'backward end' inside the picture (x %.0f)" % (name, x))
        for svg in svgs(text, "predicted step time against bucket cap"):
            # the plot is x 175..1170, y 20..320: only ticks and axis names, all outside it
            inside = [t for t in texts(svg) if 175 < t[0] < 1170 and 20 < t[1] < 320]
            check(not inside, "%s: no label across the valley's plot (%s)" % (name, [t[4] for t in inside]))
            ticks = [t for t in texts(svg) if t[3] == "tick" and t[2] == "end"]
            vals = sorted(float(t[4].split()[0]) * unit[t[4].split()[1]] for t in ticks)
            check(round_ticks(vals), "%s: valley ticks at round times (%s)" % (name, [t[4] for t in ticks]))
        tl = text[text.index('id="timeline"'):text.index('id="order"')]
        picks = re.findall(r'<(?:div class="tl"|template) id="(?:t-)?tl-\d+-\d+" data-id="(tl-\d+-\d+)" '
                           r'data-pick="(\d+)" data-step="(\d+)"', tl)
        opts = re.findall(r'<option value="(\d+)"[^>]*>(\d+)</option>', tl)
        nsteps = {i: len(r["steps"]) for i, r in enumerate(report["ranks"])}
        check(len(opts) == min(8, len(report["ranks"])) and picks and
              all(int(p) < len(opts) for _, p, _ in picks) and
              len(picks) == sum(min(8, n) for n in sorted(nsteps.values(), reverse=True)[:len(opts)]),
              "%s: a timeline for each of the most exposed steps of each of the most exposed ranks, picked by rank and "
              "step (%d ranks, %d pictures)" % (name, len(opts), len(picks)))
        check(len(re.findall(r'<div class="tl" [^>]*>', tl)) == 1 and
              len(re.findall(r'<template [^>]*>', tl)) == len(picks) - 1,
              "%s: one timeline shown before a pick, the others in templates" % name)
    text, report, _ = pages["dlrm8"]
    rsvg = svgs(text, "overlap efficiency per rank")
    labels = [t[4] for t in texts(rsvg[0])] if rsvg else []
    want = [str(report["ranks"][i]["rank"]) for i in report["cross_rank"]["ranks"]] if rsvg else ["?"]
    check(all(w in labels for w in want), "dlrm8: every rank's number under its bar (%s)" % labels)
    hsvg = svgs(text, "arrival skew heat map, rank by collective")
    htexts = [t[4] for t in texts(hsvg[0])] if hsvg else []
    check("no wait" in htexts and "rank" in htexts and any(re.fullmatch(r"[\d.]+ (ns|us|ms|s)", t) for t in htexts),
          "dlrm8: the heat map has its colour scale and its axes named (%s)" % htexts[:6])
    trend = text[text.index('id="trend"'):]
    one_step = all(len(r["steps"]) == 1 for r in report["ranks"])
    check(not one_step or "<polyline" not in trend, "dlrm8: a one-step job draws no per-step lines at one x")

    # The checker catches what it is there to catch.
    text, report, whatif = pages["demo"]
    m = re.search(r'data-v="(\d+)"', text)
    bumped = text[:m.start(1)] + str(int(m.group(1)) + 1000) + text[m.end(1):]
    check(html_check.check_page(bumped, report, whatif), "checker: a changed number fails")
    unmarked = text.replace("<h3>Top findings</h3>", "<h3>Top findings 12.5 ms</h3>").replace(
        "<p>No findings.</p>", "<p>No findings 12.5 ms.</p>")
    check(html_check.check_page(unmarked, report, whatif), "checker: an unmarked quantity fails")
    check(html_check.check_page(text.replace("</td>", "", 1), report, whatif), "checker: an unclosed element fails")

    # ovl run --html: waits for the command, then the page of the traces it wrote (here the
    # command writes a simulated trace itself; --lib /dev/null: nothing real to preload).
    rundir, runpage = os.path.join(tmp, "run"), os.path.join(tmp, "run.html")
    r = run("run", "-o", rundir, "--lib", "/dev/null", "--html", runpage, "--", ovl, "simulate", "--bucket-layers",
            "8", "--emit-trace", os.path.join(rundir, "host-1.sqlite"))
    check(r.returncode == 0 and os.path.exists(runpage), "ovl run --html: page written (%s)" % r.stderr)
    if os.path.exists(runpage):
        runtext = open(runpage, encoding="utf-8").read()
        rep = json.loads(run("report", "--json", rundir).stdout)
        wargs = html_check.whatif_args(runtext)
        wif = json.loads(run("whatif", "--json", *wargs, rundir).stdout) if wargs else None
        checked("run", runtext, rep, wif)
    r = run("run", "-o", rundir, "--lib", "/dev/null", "--html", os.path.join(tmp, "none.html"), "--", "sh", "-c",
            "exit 3")
    check(r.returncode == 3 and "wrote no trace" in r.stderr and not os.path.exists(os.path.join(tmp, "none.html")),
          "ovl run --html: the command's status passes through; no trace, no page")

    # Bad output path: one line, exit 1, nothing written.
    bad = os.path.join(tmp, "no-such-dir", "x.html")
    r = run("report", "--html", bad, demo)
    check(r.returncode == 1 and r.stderr.startswith("ovl: " + bad + ": cannot write") and r.stderr.count("\n") == 1,
          "bad --html path: one-line error, exit 1 (%r)" % r.stderr)
    check(not os.path.exists(bad), "bad --html path: nothing written")
    r = run("report", "--html", os.path.join(tmp, "x.html"), "--alpha", "fast", demo)
    check(r.returncode == 1 and not os.path.exists(os.path.join(tmp, "x.html")), "bad --alpha: usage error")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
