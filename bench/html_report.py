#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Measures heapfold --html: the page's size against the gzipped pprof of the same dump
(jeprof2pprof), the CPU and peak memory writing it takes against --svg's, and in headless
Chromium (tests/e2e/cdp.py) the first useful paint (Top's table filled, from navigation,
and by when that row was painted), each interaction (select a function, switch the sample
type, search, zoom, focus, ignore, hide and their undo, Callers / Callees and a caller
chosen there) from the input to the next frame, with the renderer's main thread's CPU time
in that span (CDP's Performance metrics in thread ticks: on a loaded machine the wall
times stretch several-fold, that time much less), and the tab's JavaScript memory (CDP's
Runtime.getHeapUsage, typed arrays' buffers included, after a garbage collection).

Usage: bench/html_report.py [--build-dir build] [--million] [--pattern REGEX] DUMP...
--million adds test_large_input.py's dump (1M stacks of 4 frames, --no-symbolize)."""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

# Records when Top's table first has a row (the first useful paint: the writer's rows, in the
# HTML ahead of the data, or the page's), whatever the page does, and by when it is painted:
# a task queued from the next animation frame runs after that frame's paint.
WATCH_TOP = """(function(){new MutationObserver(function(m,o){
  if(document.querySelector('#top tbody tr')){window.benchTopAt=performance.now();o.disconnect();
    requestAnimationFrame(function(){setTimeout(function(){
      window.benchTopPaintedAt=performance.now();},0);});}
}).observe(document,{childList:true,subtree:true});})();"""
# The first contentful paint, if it came once Top had a row (it then shows the row), else
# the task after the row's frame: by when the row was on the screen.
TOP_PAINTED = """(function(){var fcp=performance.getEntriesByName('first-contentful-paint')[0];
  var after=window.benchTopPaintedAt||-1;
  return fcp&&fcp.startTime>=window.benchTopAt?Math.min(fcp.startTime,after):after;})()"""


def timed(browser, action):
    """Milliseconds from `action` (JavaScript run in the page) to the next frame after the
    page has settled (its debounced or background work done, where it says so)."""
    return browser.evaluate(
        "(async function(){var t=performance.now();" + action + ";"
        "var r=window.heapkitReport;if(r&&r.settled){await r.settled();}"
        "document.body.offsetHeight;"
        "await new Promise(function(d){requestAnimationFrame(function(){setTimeout(d,0);});});"
        "return performance.now()-t;})()")


def main_thread_ms(browser):
    """The renderer's main thread's task time so far, in CPU time (Performance.enable's
    threadTicks): what an interaction cost the page, whatever else the machine ran."""
    metrics = browser.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration") * 1000


def heap_mib(browser):
    browser.send("HeapProfiler.collectGarbage")
    usage = browser.send("Runtime.getHeapUsage")
    return round((usage["usedSize"] + usage.get("backingStorageSize", 0)) / 2**20, 1)


def click_js(selector):
    return f"document.querySelector({json.dumps(selector)}).click()"


def refine_js(kind, pattern):
    return (f"document.getElementById('refine-kind').value={json.dumps(kind)};"
            f"document.getElementById('refine-pattern').value={json.dumps(pattern)};"
            "document.getElementById('refine-add').click()")


def measure_page(page, pattern):
    from cdp import Browser
    # A million stacks may take the page (before this work: minutes) past cdp.py's 30 s.
    Browser.send.__kwdefaults__["timeout"] = 900
    with Browser() as browser:
        browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_TOP})
        browser.send("Performance.enable", {"timeDomain": "threadTicks"})
        start = time.monotonic()
        browser.open(f"file://{page}")
        browser.evaluate("window.heapkitReady.then(function(){return 1;})")
        loaded = (time.monotonic() - start) * 1000
        top_at = browser.evaluate(
            "new Promise(function(done){var tries=0;(function look(){"
            "if(window.benchTopAt||++tries>3000)done(window.benchTopAt||-1);"
            "else setTimeout(look,20);})();})")
        ready = browser.evaluate("window.heapkitReadyAt")
        painted = browser.evaluate(TOP_PAINTED)
        heap_loaded = heap_mib(browser)
        first_row = "#top tbody tr td.name"
        undo = click_js("#refinements button[data-undo]")
        steps = [
            ("select (Top click)", click_js(first_row)),
            ("flame graph tab", click_js("#tabs button[data-view=flame]")),
            ("open a \u2026 block (if any)", "var b=document.querySelector('#flame div.merged');"
                                            "if(b)b.click()"),
            ("zoom (frame click)", "document.querySelectorAll('#flame div[data-node]')[1].click()"),
            ("switch type", "var s=document.getElementById('type');s.value=1;"
                            "s.dispatchEvent(new Event('change'))"),
            ("search", "var i=document.getElementById('search');i.value='a';"
                       "i.dispatchEvent(new Event('input'))"),
            ("focus", refine_js("focus", pattern)),
            ("undo focus", undo),
            ("ignore", refine_js("ignore", pattern)),
            ("undo ignore", undo),
            ("hide", refine_js("hide", pattern)),
            ("undo hide", undo),
            ("callers/callees tab", click_js("#tabs button[data-view=peek]")),
            ("select a caller (Peek)", click_js("#peek tbody tr.caller, #peek tbody tr.callee")),
            ("top tab", click_js("#tabs button[data-view=top]")),
        ]
        times, cpu = {}, {}
        for name, action in steps:
            before = main_thread_ms(browser)
            times[name] = timed(browser, action)
            cpu[name] = main_thread_ms(browser) - before
        # Search typed as a person types it, 80 ms a key: from the last key to the answer.
        browser.evaluate("(function(){var i=document.getElementById('search');i.value='';"
                         "i.dispatchEvent(new Event('input'));})()")
        before = main_thread_ms(browser)
        times["type 'Dict' (last key to answer)"] = browser.evaluate(
            "(async function(){var i=document.getElementById('search');var t=0;"
            "for(const v of ['D','Di','Dic','Dict']){"
            "await new Promise(function(d){setTimeout(d,80);});t=performance.now();"
            "i.value=v;i.dispatchEvent(new Event('input'));}"
            "var r=window.heapkitReport;if(r.settled){await r.settled();}"
            "document.body.offsetHeight;"
            "await new Promise(function(d){requestAnimationFrame(function(){setTimeout(d,0);});});"
            "return performance.now()-t;})()")
        # The four keys' work, not the last one's alone (the pauses cost nothing).
        cpu["type 'Dict' (all four keys)"] = main_thread_ms(browser) - before
        heap_end = heap_mib(browser)
        errors = browser.errors()
        return loaded, top_at, painted, ready, heap_loaded, heap_end, times, cpu, errors


def run_measured(argv):
    """CPU seconds and peak MiB of the finished `argv` (the operating system's accounting)."""
    proc = subprocess.Popen(argv)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{argv} failed: {status}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--million", action="store_true")
    parser.add_argument("--pattern", default="main",
                        help="the regex focused, ignored and hidden (default: main)")
    parser.add_argument("--skip-svg", action="store_true", help="do not time --svg")
    parser.add_argument("dumps", nargs="*")
    args = parser.parse_args()
    os.environ.setdefault("HEAPKIT_BIN_DIR", os.path.join(args.build_dir, "cmd"))
    for name in ("HEAPKIT_FIXTURE_DIR", "HEAPKIT_MAN_DIR", "HEAPKIT_JEMALLOC_SO"):
        os.environ.setdefault(name, "")
    work = tempfile.mkdtemp(prefix="heapkit-html-bench-")
    inputs = [(os.path.basename(d), d, []) for d in args.dumps]
    if args.million:
        from synthetic_dump import write_synthetic_dump
        inputs.append(("million", write_synthetic_dump(os.path.join(work, "million.heap"),
                                                       1_000_000), ["--no-symbolize"]))
    for name, dump, flags in inputs:
        heapfold = os.path.join(args.build_dir, "cmd", "heapfold")
        page, pprof = os.path.join(work, name + ".html"), os.path.join(work, name + ".pb.gz")
        start = time.monotonic()
        html_cpu, html_peak = run_measured([heapfold, "-q", *flags, "--html", dump, "-o", page])
        written = time.monotonic() - start
        svg_cpu, svg_peak = (0, 0) if args.skip_svg else run_measured(
            [heapfold, "-q", *flags, "--svg", dump, "-o", os.path.join(work, name + ".svg")])
        subprocess.run([os.path.join(args.build_dir, "cmd", "jeprof2pprof"), "-q", *flags, dump,
                        "-o", pprof], check=True)
        html_size, pprof_size = os.path.getsize(page), os.path.getsize(pprof)
        with open(page, "rb") as f:
            html_gz = len(gzip.compress(f.read()))
        loaded, top_at, painted, ready, heap_loaded, heap_end, times, cpu, errors = measure_page(
            page, args.pattern)
        print(json.dumps({
            "input": name, "dump_mib": round(os.path.getsize(dump) / 2**20, 1),
            "html_bytes": html_size, "html_gzipped": html_gz, "pprof_gz_bytes": pprof_size,
            "ratio": round(html_size / pprof_size, 2), "write_s": round(written, 2),
            "write_cpu_s": round(html_cpu, 2), "write_peak_mib": round(html_peak),
            "svg_cpu_s": round(svg_cpu, 2), "svg_peak_mib": round(svg_peak),
            "load_ms": round(loaded), "top_filled_ms": round(top_at),
            "top_painted_ms": round(painted),
            "views_drawn_ms": round(ready), "js_heap_loaded_mib": heap_loaded,
            "js_heap_end_mib": heap_end,
            "interactions_ms": {k: round(v, 1) for k, v in times.items()},
            "interactions_main_thread_cpu_ms": {k: round(v, 1) for k, v in cpu.items()},
            "console_errors": errors}, indent=1), flush=True)


if __name__ == "__main__":
    main()
