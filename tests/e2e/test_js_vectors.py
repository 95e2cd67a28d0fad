# SPDX-License-Identifier: MIT
"""The pages' JavaScript (lib/heapkit/emit/js/, report/report_*.js): each file parses
(node --check), the SVG flame graph and the HTML report carry each of their files verbatim
(so what is checked here is what is embedded), and matcher.js, amount.js and flame.js's label fitting agree with the
C++ on tests/vectors/filters_and_amounts.json (tests/unit/test_vectors_filters_and_amounts.cpp
runs the same file through filter_stacks and quantity)."""

import glob
import os
import shutil
import subprocess
import sys

from heapkit_e2e import check, fixture, run, tool, workdir, write_synthetic_dump

NODE = shutil.which("node") or shutil.which("nodejs")
if not NODE:
    print("SKIP: no node (Debian package nodejs)")
    sys.exit(77)

SOURCE = os.environ["HEAPKIT_SOURCE_DIR"]  # tests/
EMIT = os.path.join(SOURCE, "..", "lib", "heapkit", "emit")
shared = [os.path.join(EMIT, "js", name) for name in ("matcher.js", "amount.js", "flame.js")]
svg_files = shared + [os.path.join(EMIT, "js", "flame_svg.js")]
report_files = shared + sorted(glob.glob(os.path.join(EMIT, "..", "report", "report_*.js")))
for path in sorted(set(svg_files + report_files)):
    checked = subprocess.run([NODE, "--check", path], capture_output=True, text=True)
    check(checked.returncode == 0, f"node --check {path}: {checked.stderr}")


def text_of(path):
    with open(path) as f:
        return f.read()


directory = workdir()
svg = subprocess.run([fixture("flame_from_folded")], input="main;work 100\n", capture_output=True,
                     text=True, check=True).stdout
dump = write_synthetic_dump(os.path.join(directory, "synthetic.heap"), 10)
report = os.path.join(directory, "report.html")
run([tool("heapfold"), "--html", dump, "-o", report])
html = text_of(report)
for page, text, files in (("the SVG", svg, svg_files), ("the report", html, report_files)):
    for path in files:
        check(text_of(path) in text, f"{page} does not carry {os.path.basename(path)} verbatim")

vectors = os.path.join(SOURCE, "vectors", "filters_and_amounts.json")
result = subprocess.run([NODE, os.path.join(SOURCE, "vectors", "check_vectors.js"), vectors,
                         *shared], capture_output=True, text=True)
print(result.stdout, end="")
check(result.returncode == 0, f"the JavaScript disagrees with the vectors: {result.stderr}")
print(f"{len(set(svg_files + report_files))} files parse and are embedded; ok")
