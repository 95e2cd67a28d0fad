#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Measures heapfold --html: the page's size against the gzipped pprof of the same dump
(jeprof2pprof), the time to write it, and in headless Chromium (tests/e2e/cdp.py) the
first paint and each interaction (select a function, switch the sample type, search,
zoom) as the page's own clock sees it, layout included.

Usage: bench/html_report.py [--build-dir build] [--million] DUMP...
--million adds test_large_input.py's dump (1M stacks of 4 frames, --no-symbolize)."""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))


def timed(browser, action):
    """Milliseconds `action` (JavaScript run in the page) takes, with the layout it causes."""
    return browser.evaluate("(function(){var t=performance.now();" + action +
                            ";document.body.offsetHeight;return performance.now()-t;})()")


def measure_page(page, args):
    from cdp import Browser
    with Browser() as browser:
        start = time.monotonic()
        browser.open(f"file://{page}")
        browser.evaluate("window.heapkitReady.then(function(){return 1;})")
        loaded = (time.monotonic() - start) * 1000
        paint = browser.evaluate(
            "new Promise(function(done){var tries=0;(function look(){"
            "var p=performance.getEntriesByType('paint');"
            "if(p.length||++tries>100)done(p.length?p[p.length-1].startTime:-1);"
            "else setTimeout(look,20);})();})")
        ready = browser.evaluate("window.heapkitReadyAt")
        first_row = "document.querySelector('#top tbody tr td.name')"
        steps = {
            "select (Top click)": f"{first_row}.click()",
            "flame graph tab": "document.querySelector('#tabs button[data-view=flame]').click()",
            "zoom (frame click)": "document.querySelectorAll('#flame div')[1].click()",
            "switch type": "var s=document.getElementById('type');s.value=1;"
                           "s.dispatchEvent(new Event('change'))",
            "search": "var i=document.getElementById('search');i.value='a';"
                      "i.dispatchEvent(new Event('input'))",
            "callers/callees tab": "document.querySelector('#tabs button[data-view=peek]').click()",
            "refine (focus)": "document.getElementById('refine-pattern').value='main';"
                              "document.getElementById('refine-add').click()",
        }
        times = {name: timed(browser, action) for name, action in steps.items()}
        errors = browser.errors()
        return loaded, paint, ready, times, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--million", action="store_true")
    parser.add_argument("dumps", nargs="*")
    args = parser.parse_args()
    os.environ.setdefault("HEAPKIT_BIN_DIR", os.path.join(args.build_dir, "cmd"))
    for name in ("HEAPKIT_FIXTURE_DIR", "HEAPKIT_MAN_DIR", "HEAPKIT_JEMALLOC_SO"):
        os.environ.setdefault(name, "")
    import subprocess
    work = tempfile.mkdtemp(prefix="heapkit-html-bench-")
    inputs = [(os.path.basename(d), d, []) for d in args.dumps]
    if args.million:
        from synthetic_dump import write_synthetic_dump
        inputs.append(("million", write_synthetic_dump(os.path.join(work, "million.heap"),
                                                       1_000_000), ["--no-symbolize"]))
    for name, dump, flags in inputs:
        tools = os.path.join(args.build_dir, "cmd")
        page, pprof = os.path.join(work, name + ".html"), os.path.join(work, name + ".pb.gz")
        start = time.monotonic()
        subprocess.run([os.path.join(tools, "heapfold"), "-q", *flags, "--html", dump, "-o", page],
                       check=True)
        written = time.monotonic() - start
        subprocess.run([os.path.join(tools, "jeprof2pprof"), "-q", *flags, dump, "-o", pprof],
                       check=True)
        html_size, pprof_size = os.path.getsize(page), os.path.getsize(pprof)
        with open(page, "rb") as f:
            import gzip
            html_gz = len(gzip.compress(f.read()))
        loaded, paint, ready, times, errors = measure_page(page, args)
        print(json.dumps({"input": name, "html_bytes": html_size, "html_gzipped": html_gz,
                          "pprof_gz_bytes": pprof_size, "ratio": round(html_size / pprof_size, 2),
                          "write_s": round(written, 2), "load_ms": round(loaded),
                          "first_paint_ms": round(paint), "views_drawn_ms": round(ready),
                          "interactions_ms": {k: round(v, 1) for k, v in times.items()},
                          "console_errors": errors}, indent=1))


if __name__ == "__main__":
    main()
