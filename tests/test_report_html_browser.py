"""`ovl report --html` in a real browser: Debian's chromium, headless. The page of the demo
trace, of a misordered DDP trace and of the real 8-rank DLRM job each load with no console
message (chromium --enable-logging=stderr prints every console message, errors included, as
a CONSOLE line) and no script error (the page's window.onerror writes them into the DOM, which
--dump-dom shows), in under 2 s (the page's own measure, data-load-ms); each of the six
sections, shown alone (page.html#id), is screenshot at 1280x800 and must not be blank; the
timeline's step picker is filled by the page's script; in an 800-pixel window the pictures
are not scaled down (they scroll sideways: their text keeps its size).
Skipped (exit 77) when chromium is not installed: ./bootstrap.sh test installs it.

usage: test_report_html_browser.py OVL TRACES_DIR [--keep DIR]   (--keep: copy the screenshots
       there, named NAME-SECTION.png: how docs/images/ was made)
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ovl, traces = sys.argv[1], sys.argv[2]
keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
SECTIONS = ["summary", "timeline", "order", "valley", "job", "trend"]
browser = next((shutil.which(b) for b in ("chromium", "chromium-browser") if shutil.which(b)), None)
if not browser:
    print("SKIP: chromium is not installed (apt-get install chromium; ./bootstrap.sh test does)")
    sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def png_problem(path):
    """None when path is a 1280x800 PNG that is not one flat colour, else what is wrong."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return "not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    if (w, h) != (1280, 800):
        return "size %dx%d" % (w, h)
    idat, pos = b"", 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    # Filtered scanlines: a flat image is almost all zero bytes after its first row.
    nonzero = sum(1 for b in raw[::7] if b) / max(1, len(raw[::7]))
    # (a page with one word: 0.03%; a section with a line of text: about 0.9%)
    return None if nonzero > 0.003 and len(set(raw)) > 20 else "blank (%.3f%% non-zero)" % (100 * nonzero)


with tempfile.TemporaryDirectory(prefix="ovl-browser-") as tmp:
    env = dict(os.environ)
    for var, sub in (("HOME", "home"), ("TMPDIR", "tmp"), ("XDG_CONFIG_HOME", "home/config"),
                     ("XDG_CACHE_HOME", "home/cache")):
        os.makedirs(os.path.join(tmp, sub), exist_ok=True)
        env[var] = os.path.join(tmp, sub)

    def chromium(*args):
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--user-data-dir=" + os.path.join(tmp, "profile"), "--enable-logging=stderr", "--v=0"] + list(args)
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)

    demo, mis = os.path.join(tmp, "demo.sqlite"), os.path.join(tmp, "misordered.sqlite")
    for path, extra in ((demo, ["--bucket-layers", "16"]), (mis, ["--bucket-layers", "8", "--misordered"])):
        subprocess.run([ovl, "simulate", "--steps", "3", "--emit-trace", path] + extra,
                       check=True, capture_output=True)
    cases = {"demo": ["--alpha", "200us", demo], "misordered": ["--alpha", "200us", mis],
             "dlrm8": [os.path.join(traces, "kineto-param-dlrm8")]}
    for name, args in cases.items():
        page = os.path.join(tmp, name + ".html")
        r = subprocess.run([ovl, "report", "--html", page] + args, capture_output=True, text=True)
        check(r.returncode == 0, "%s: page written (%s)" % (name, r.stderr))
        url = "file://" + page
        r = chromium("--dump-dom", url)
        console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
        for l in console:
            print("  %s: %s" % (name, l))
        check(not console, "%s: no console message" % name)
        check('<section id="trend">' in r.stdout, "%s: the page loaded (all sections in the DOM)" % name)
        html_tag = re.search(r"<html[^>]*>", r.stdout)
        check(html_tag is not None and "data-errors" not in html_tag.group(0), "%s: no script error" % name)
        m = re.search(r'data-load-ms="(\d+)"', r.stdout)
        check(m is not None and int(m.group(1)) < 2000, "%s: loaded in under 2 s (%s ms)" % (name, m and m.group(1)))
        print("%s: %d bytes, loaded in %s ms" % (name, os.path.getsize(page), m and m.group(1)))
        check(re.search(r'<select id="tl-step"><option', r.stdout) is not None,
              "%s: the timeline's step picker is filled by the page's script" % name)
        # an 800-pixel window: pictures scroll sideways, their text keeps its size (issue 33)
        r = chromium("--window-size=800,600", "--dump-dom", url)
        m = re.search(r'data-chart-scale="([\d.]+)"', r.stdout)
        check(m is not None and float(m.group(1)) >= 0.99,
              "%s: at 800 px the pictures are not shrunk (scale %s)" % (name, m and m.group(1)))
        for s in SECTIONS:
            shot = os.path.join(tmp, "%s-%s.png" % (name, s))
            r = chromium("--window-size=1280,800", "--screenshot=" + shot, url + "#" + s)
            console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
            check(not console, "%s#%s: no console message %s" % (name, s, console))
            problem = png_problem(shot) if os.path.exists(shot) else "no screenshot"
            check(problem is None, "%s#%s: screenshot 1280x800, not blank (%s)" % (name, s, problem))
            if keep and problem is None:
                shutil.copy(shot, os.path.join(keep, os.path.basename(shot)))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
