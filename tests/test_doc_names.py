"""Every file the documentation names exists (issue 33: names that outlived their files, such as
collective_results.c or libinject/nccl_names.c, sent readers looking for nothing).

Scans the Markdown files of the repository and the comments of its C sources for names of
source, script and documentation files (NAME.c, .h, .md, .sh, .py; `NAME.c/.h` for both) and
checks that each is a file of the repository (by its path, or by its name anywhere in it).
Names of files that are not the repository's are listed below with why.

usage: test_doc_names.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

NOT_OURS = {
    "train.py": "the user's training script in usage examples",
    "nccl.h": "NCCL's header, from the toolkit",
    "src/include/plugin/profiler/profiler_v4.h": "NCCL's source, whose published facts the plugin ABI follows",
    "profiler_v5.h": "NCCL's source, beside profiler_v4.h",
    "store/schema_def.h": "generated from schema/ovl.sql at build time",
    "bench/results/workloads-table.md": "what the command shown writes",
}
NAME = re.compile(r"(?<![A-Za-z0-9_./<-])([A-Za-z0-9_][A-Za-z0-9_./-]*\.(?:c|h|md|sh|py))(?![A-Za-z0-9_>])")
BOTH = re.compile(r"([A-Za-z0-9_./-]+)\.c/\.h\b")  # "trace_file.c/.h": both files
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def main():
    root = sys.argv[1]
    r = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: %s is not a git checkout: %s" % (root, r.stderr.strip()))
        return 77
    files = r.stdout.split()
    have = set(files)
    bases = {os.path.basename(f) for f in files}
    missing = []
    for f in files:
        if f.startswith("tests/data/") or not re.search(r"\.(md|c|h)$", f):
            continue
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        if not f.endswith(".md"):
            text = "\n".join(COMMENT.findall(text))
        text = BOTH.sub(r"\1.c \1.h", text)
        for n in set(NAME.findall(text)):
            if n in have or os.path.basename(n) in bases or n in NOT_OURS:
                continue
            missing.append("%s: names %s, which is not a file of the repository" % (f, n))
    for m in sorted(missing):
        print(m)
    print("%d files of the repository; %d names in their docs and comments that are none of them" % (len(files), len(missing)))
    return 1 if missing else 0


sys.exit(main())
