"""`ovl report --html` and `ovl run --html`: the page of the demo trace, of a misordered DDP trace (simulate's
--misordered) and of the real 8-rank DLRM job parses strictly, every number on it equals the
JSON report's (or `ovl whatif --json`'s, for the bucket-size valley), and the pictures show
what the analysis found (html_check.py). The checker itself is shown to fail on a changed
number, an unmarked quantity and an unclosed element. Bad output paths fail cleanly.

usage: test_report_html.py OVL TRACES_DIR
"""
import json
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
    for path, extra in ((demo, []), (mis, ["--misordered"])):
        r = run("simulate", "--bucket-layers", "8", "--steps", "3", "--emit-trace", path, *extra)
        check(r.returncode == 0, "simulate " + path)
    # The simulated buckets are all one size: whatif needs alpha given (the model's 200us).
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
