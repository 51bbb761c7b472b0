"""An independent checker of `ovl report --html` pages (used by test_report_html.py and
test_report_html_browser.py): a strict parse, and every number on the page against the JSON.

check_page(html_text, report_json, whatif_json) returns a list of problems (empty: good); extra
maps more path prefixes to their JSON ({"diff": `ovl diff --json`} for `ovl diff --html`) and
sections names the sections the page must have.
  * Structure: a doctype first; every non-void element closed by its own end tag, in order
    (no implicit closing, which browsers would do silently); no duplicate attribute or id;
    no block element inside <p>; no negative or malformed width, height or radius; the six
    sections present.
  * Numbers: every element with data-j names a value of the JSON (dot path; "A-B" is the
    difference of two values; "whatif." paths are in `ovl whatif --json`'s output), data-v
    equals it, and the text shown is data-v in the unit data-k names, rounded as displayed.
  * No quantity (a number with a time, size or percent unit) is shown outside such elements,
    except in axis ticks and labels of pictures (classes tick, lbl, hd), file names (class
    path: a temporary folder such as ovl-ctest.a25sQ is no quantity), tooltips (<title>)
    finding messages, which must equal the JSON's message text, and whatif's error message
    when no valley could be drawn (class why: the words `ovl whatif` prints).
"""
import html.parser
import json
import math
import re

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCK = {"div", "p", "table", "section", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "details", "header",
         "main", "nav", "form", "pre", "blockquote"}
SECTIONS = ["summary", "timeline", "order", "valley", "job", "trend"]
EXEMPT_CLASSES = {"n", "tick", "lbl", "hd", "msg", "val", "why", "path"}
EXEMPT_TAGS = {"title", "style", "script"}
QUANTITY = re.compile(r"\d[\d.]*\s*(?:ns|us|µs|ms|s|%|B|KB|MB|GB|MiB|GiB)(?![A-Za-z])")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems, self.stack, self.ids, self.numbers, self.texts = [], [], set(), [], []
        self.saw_doctype = self.saw_element = False

    def where(self):
        line, col = self.getpos()
        return "line %d col %d" % (line, col)

    def handle_decl(self, decl):
        if self.saw_element or decl.lower() != "doctype html":
            self.problems.append("%s: unexpected declaration <!%s>" % (self.where(), decl))
        self.saw_doctype = True

    def open(self, tag, attrs, closes):
        if not self.saw_doctype and not self.saw_element:
            self.problems.append("no <!DOCTYPE html> before the first element")
        self.saw_element = True
        names = [a for a, _ in attrs]
        if len(names) != len(set(names)):
            self.problems.append("%s: <%s> repeats an attribute" % (self.where(), tag))
        d = dict(attrs)
        if "id" in d:
            if d["id"] in self.ids:
                self.problems.append("%s: duplicate id %r" % (self.where(), d["id"]))
            self.ids.add(d["id"])
        for dim in ("width", "height", "r"):  # browsers reject negative sizes with a console error
            if dim in d and tag not in ("svg",):
                try:
                    bad = float(d[dim]) < 0
                except ValueError:
                    bad = True
                if bad:
                    self.problems.append("%s: <%s %s=%r>" % (self.where(), tag, dim, d[dim]))
        if tag in BLOCK and any(e["tag"] == "p" for e in self.stack):
            self.problems.append("%s: <%s> inside <p>" % (self.where(), tag))
        node = {"tag": tag, "attrs": d, "text": [], "classes": set((d.get("class") or "").split())}
        if "data-j" in d:
            self.numbers.append(node)
        if not closes:
            self.stack.append(node)

    def handle_starttag(self, tag, attrs):
        self.open(tag, attrs, tag in VOID)

    def handle_startendtag(self, tag, attrs):
        self.open(tag, attrs, True)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1]["tag"] != tag:
            top = self.stack[-1]["tag"] if self.stack else "nothing"
            self.problems.append("%s: </%s> closes <%s>" % (self.where(), tag, top))
            return
        self.stack.pop()

    def handle_data(self, data):
        for node in self.stack:
            node["text"].append(data)
        exempt = any(n["tag"] in EXEMPT_TAGS or n["classes"] & EXEMPT_CLASSES for n in self.stack)
        if not exempt:
            for m in QUANTITY.finditer(data):
                self.problems.append("%s: quantity %r shown without its JSON path" % (self.where(), m.group(0)))
        else:
            self.texts.append(data)

    def close(self):
        super().close()
        for node in self.stack:
            self.problems.append("<%s> never closed" % node["tag"])


def lookup(path, report, whatif, extra=None):
    doc = report
    if path.startswith("whatif."):
        doc, path = whatif, path[len("whatif."):]
        if doc is None:
            raise KeyError("no whatif JSON for " + path)
    for prefix, other in (extra or {}).items():
        if path.startswith(prefix + "."):
            doc, path = other, path[len(prefix) + 1:]
    for key in path.split("."):
        if key == "length":
            doc = len(doc)
        elif isinstance(doc, list):
            doc = doc[int(key)]
        else:
            doc = doc[key]
    return doc


def value_of(path, report, whatif, extra=None):
    parts = re.split(r"-(?=[a-z])", path)
    vals = [lookup(p, report, whatif, extra) for p in parts]
    if len(vals) == 1:
        return vals[0]
    if any(v is None for v in vals):
        return None
    return vals[0] - sum(vals[1:])


NS_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
BYTE_UNITS = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def shown_matches(kind, text, v):
    """Whether the text shown is v in the unit of kind, within the rounding of its digits."""
    def close(num, unit, digits_text):
        decimals = len(digits_text.split(".")[1]) if "." in digits_text else 0
        return abs(num * unit - v) <= 0.5 * 10 ** -decimals * unit * (1 + 1e-9) + 1e-9 * abs(v)
    if kind == "ns":
        m = re.fullmatch(r"(-?[\d.]+) (ns|us|ms|s)", text)
        return bool(m) and close(float(m.group(1)), NS_UNITS[m.group(2)], m.group(1))
    if kind == "bytes":
        m = re.fullmatch(r"(-?[\d.]+) (B|KB|MB|GB)", text)
        return bool(m) and close(float(m.group(1)), BYTE_UNITS[m.group(2)], m.group(1))
    if kind == "pct":
        m = re.fullmatch(r"(-?[\d.]+)%", text)
        return bool(m) and close(float(m.group(1)), 0.01, m.group(1))
    if kind == "count":
        return re.fullmatch(r"-?\d+", text) is not None and int(text) == v
    if kind == "mib":
        m = re.fullmatch(r"([\d.e+-]+) MiB", text)
        return bool(m) and math.isclose(float(m.group(1)), v, rel_tol=1e-5)
    return False


def check_numbers(page, report, whatif, extra=None):
    problems = []
    for node in page.numbers:
        a = node["attrs"]
        path, kind, text = a["data-j"], a.get("data-k"), "".join(node["text"])
        try:
            want = value_of(path, report, whatif, extra)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            problems.append("%s: not in the JSON (%s)" % (path, e))
            continue
        if kind == "text":
            if text != want:
                problems.append("%s: text differs from the JSON's" % path)
            continue
        got = a.get("data-v")
        if want is None or (isinstance(want, float) and math.isnan(want)):
            if got != "null" or text != "n/a":
                problems.append("%s: JSON null, page %r (%r)" % (path, got, text))
            continue
        if got == "null" or got is None:
            problems.append("%s: page null, JSON %r" % (path, want))
            continue
        if isinstance(want, bool) or not isinstance(want, (int, float)):
            problems.append("%s: JSON value %r is not a number" % (path, want))
            continue
        if isinstance(want, int) and re.fullmatch(r"-?\d+", got):
            same = int(got) == want
        else:
            same = math.isclose(float(got), float(want), rel_tol=1e-8, abs_tol=1e-9)
        if not same:
            problems.append("%s: page %s, JSON %r" % (path, got, want))
        elif not shown_matches(kind, text, float(got)):
            problems.append("%s: shown %r is not %s as %s" % (path, text, got, kind))
    return problems


def check_page(text, report, whatif=None, extra=None, sections=SECTIONS):
    page = Page()
    page.feed(text)
    page.close()
    problems = list(page.problems)
    for s in sections:
        if s not in page.ids:
            problems.append("section %r missing" % s)
    if not page.numbers:
        problems.append("no numbers marked with data-j")
    return problems + check_numbers(page, report, whatif, extra)


def whatif_args(text):
    """The `ovl whatif` arguments that give the page's valley, or None (no valley drawn)."""
    m = re.search(r'<div data-caps="([^"]*)"([^>]*)>', text)
    if not m:
        return None
    args = ["--bucket-mb", m.group(1)]
    for opt in ("alpha", "beta"):
        v = re.search(r'data-%s="([^"]*)"' % opt, m.group(2))
        if v:
            args += ["--" + opt, v.group(1)]
    return args
