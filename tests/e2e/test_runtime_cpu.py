# SPDX-License-Identifier: MIT
"""CPU profiles, heap deltas and flame graph pages of the example service, read by the
real consumers: go tool pprof (Go's /debug/pprof/profile), jeprof --text (gperftools'
format at /pprof/profile), the flame graph parser for the SVG pages."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from heapkit_e2e import (check, flame_frames, go_pprof, html_data, pprof_raw, pprof_total, run,
                         tool, workdir)

service = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")
# As in test_runtime.py: jemalloc and ASan cannot share a process. The sampler's own
# sanitized run is the unit test runtime/cpu_sampler (16 threads at 1000 Hz).
if "libasan" in subprocess.run(["ldd", service], capture_output=True, text=True).stdout:
    print("sanitizer build: the jemalloc service cannot run under ASan; skipping")
    sys.exit(77)
directory = workdir()
heapfold = tool("heapfold")
HOT = "burn_cpu_hot_loop"


def request(path):
    try:
        with urllib.request.urlopen(base + path, timeout=120) as answer:
            return answer.status, answer.read(), answer.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        return error.code, error.read(), ""


def saved(name, body):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(body)
    return path


def check_live_page(url, capture):
    """In a browser (when there is one): the page names the process and the capture time,
    not jemalloc's "prof.dump", and its control captures the heap again, keeping the view."""
    if shutil.which("chromium") is None:
        print("the served page in a browser: skipped, no chromium")
        return
    from cdp import Browser
    with Browser() as browser:
        browser.open(url + "#view=flame")
        browser.evaluate("window.heapkitReady.then(function(){return 1;})")
        shown = browser.evaluate("document.getElementById('sources').textContent")
        first = browser.evaluate("window.heapkitReport.data.capture.unixMillis")
        check(first >= capture["unixMillis"], f"the browser's page was captured at {first}")
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(first // 1000))
        check(f"{os.path.basename(service)} (pid {process.pid}), captured {when} UTC" in shown
              and "prof.dump" not in shown, f"the served page says {shown!r}")
        shot = os.environ.get("HEAPKIT_KEEP_SCREENSHOTS")
        if shot:
            browser.screenshot(os.path.join(shot, "served.png"))
        time.sleep(0.01)
        browser.click("#capture-again")
        browser.wait_for("Page.loadEventFired")
        browser.evaluate("window.heapkitReady.then(function(){return 1;})")
        again = browser.evaluate("window.heapkitReport.data.capture.unixMillis")
        view = browser.evaluate("document.querySelector('#tabs button.active').textContent")
        check(again > first and view == "Flame Graph",
              f"Capture again: {first} then {again}, on the view {view!r}")
        print(f"the served page: {shown!r}; captured again {again - first} ms later")


env = dict(os.environ, HEAPKIT_EXAMPLE_BURN="1", HEAPKIT_EXAMPLE_GROW="1")
process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True, env=env)
try:
    base = process.stdout.readline().strip().replace("listening on ", "")
    check(base.startswith("http://127.0.0.1:"), f"service said {base!r}")
    host, port = base.removeprefix("http://").split(":")

    # Go's CPU profile, and a second profile asked for meanwhile: 409.
    answers = {}
    first = threading.Thread(
        target=lambda: answers.update(go=request("/debug/pprof/profile?seconds=3")))
    first.start()
    time.sleep(1)
    status, body, _ = request("/pprof/profile?seconds=1")
    check(status == 409 and b"already" in body, f"concurrent profile: {status} {body!r}")
    first.join()
    status, body, _ = answers["go"]
    check(status == 200 and body[:2] == b"\x1f\x8b", f"/debug/pprof/profile: {status} {body[:80]!r}")
    profile = saved("cpu.pb.gz", body)
    top = go_pprof("-top", profile).stdout
    print(top)
    check("Type: cpu" in top, "go tool pprof does not see a CPU profile")
    types, samples, _ = pprof_raw(profile)
    check(types == ["samples", "cpu"], f"sample types {types}")
    total = pprof_total(samples, "cpu", lambda frames: True)
    hot = pprof_total(samples, "cpu", lambda frames: any(HOT in f for f in frames))
    print(f"{HOT}: {hot} of {total} cpu ns")
    check(total > 0 and hot > total / 2, f"{HOT} carries {hot} of {total} ns")
    lines = top.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["flat", "flat%"])
    check(HOT in lines[header + 1], f"{HOT} is not the top function:\n{top}")

    # symbolize=0: the frames are left for the server side, addresses and mappings kept.
    status, body, _ = request("/debug/pprof/profile?seconds=1&symbolize=0")
    _, bare, mappings = pprof_raw(saved("bare.pb.gz", body))
    check(status == 200 and bare and not any(HOT in " ".join(s["frames"]) for s in bare),
          "symbolize=0 still named frames")
    check(any("example_service" in m for m in mappings), f"mappings: {mappings}")

    # heapfold opens both as CPU profiles: the totals go tool pprof gives, the hot loop
    # named, in the unsymbolized one by heapkit's symbolizer from the mapped file.
    for path, raw in ((profile, samples), (os.path.join(directory, "bare.pb.gz"), bare)):
        for sample_type in ("samples", "cpu"):
            folded = run([heapfold, "--sample", sample_type, path]).stdout
            stacks = {line.rpartition(" ")[0]: int(line.rpartition(" ")[2])
                      for line in folded.splitlines()}
            check(sum(stacks.values()) == pprof_total(raw, sample_type, lambda frames: True),
                  f"heapfold --sample {sample_type} {path}: {sum(stacks.values())}")
            check(any(HOT in stack for stack in stacks), f"heapfold {path}: no {HOT}")
    svg = run([heapfold, "--svg", "--sample", "samples", profile]).stdout
    check("Flame Graph of samples" in svg and HOT in svg, "heapfold --svg of the CPU profile")

    # A client that leaves (curl -m1) ends its profile: the profiler is free again, and
    # SIGPROF is the process's own, long before the 20 s it asked for.
    with socket.create_connection((host, int(port))) as gone:
        gone.sendall(f"GET /debug/pprof/profile?seconds=20 HTTP/1.1\r\nHost: {host}\r\n\r\n"
                     .encode())
        time.sleep(1)
    for attempt in range(8):  # well under the abandoned profile's 20 s
        status, body, _ = request("/debug/pprof/profile?seconds=1")
        if status != 409:
            break
        time.sleep(1)
    check(status == 200 and body[:2] == b"\x1f\x8b",
          f"a profile after an abandoned one: {status} {body[:120]!r}")
    caught = next(line for line in open(f"/proc/{process.pid}/status") if line.startswith("SigCgt"))
    check(not int(caught.split()[1], 16) & (1 << (signal.SIGPROF - 1)),
          f"SIGPROF still handled after the profiles: {caught.strip()}")

    # Out of bounds: 400 with the reason.
    for query in ("seconds=0", "seconds=301", "seconds=ten", "frequency=0", "frequency=1001",
                  "debug=1", "colour=red"):
        status, body, _ = request(f"/debug/pprof/profile?{query}")
        check(status == 400 and body, f"?{query}: {status} {body!r}")
    # Go's debug=1 (its text form): what is served instead, not a bare range error.
    for page, instead in (("/debug/pprof/profile", b"/pprof/profile/flamegraph"),
                          ("/debug/pprof/heap", b"/debug/pprof/heap.folded")):
        status, body, _ = request(f"{page}?debug=1")
        check(status == 400 and b"only debug=0 is served" in body and b"go tool pprof -top" in body
              and instead in body, f"{page}?debug=1: {status} {body!r}")

    # jeprof's remote CPU protocol: the gperftools format, names through /pprof/symbol.
    jeprof_env = dict(os.environ, HOME=directory, JEPROF_TMPDIR=directory)
    text = run(["jeprof", "--text", "--seconds=2", f"{base}/pprof/profile"], env=jeprof_env).stdout
    print(text)
    rows = [line for line in text.splitlines() if "%" in line]
    check(rows and HOT in rows[0], f"jeprof --text does not put {HOT} first:\n{text}")
    # A CPU profile's --raw form carries the binary profile after its symbols.
    raw = run(["jeprof", "--raw", "--seconds=1", f"{base}/pprof/profile"], env=jeprof_env,
              binary=True).stdout
    check(raw.startswith(b"--- symbol\n") and HOT.encode() in raw and b"--- profile" in raw,
          f"jeprof --raw on /pprof/profile: {raw[:300]!r}")

    # PostHog-style aliases and flame graph pages.
    status, body, _ = request("/pprof/profile/report?seconds=1&frequency=200")
    types, samples, _ = pprof_raw(saved("report.pb.gz", body))
    check(status == 200 and types == ["samples", "cpu"], f"/pprof/profile/report: {status}")
    status, body, kind = request("/pprof/profile/flamegraph?seconds=1&width=800")
    check(status == 200 and kind.startswith("image/svg+xml"), f"cpu flamegraph: {status} {kind}")
    frames = flame_frames(body.decode())
    check(any(HOT in f["name"] for f in frames), f"no {HOT} in the CPU flame graph")
    check(b'width="800"' in body[:2000], "width= not applied")
    status, body, kind = request("/pprof/heap/flamegraph?width=900")
    check(status == 200 and kind.startswith("image/svg+xml"), f"heap flamegraph: {status} {body!r}")
    check(any("open_sessions" in f["name"] for f in flame_frames(body.decode())),
          "no open_sessions in the heap flame graph")
    status, body, _ = request("/pprof/heap/report")
    check(status == 200 and "open_sessions" in go_pprof("-top", saved("h.pb.gz", body)).stdout,
          "/pprof/heap/report")
    # heapfold --html's page of the live heap: its data (gzipped JSON in base64) names
    # open_sessions, has the heap's four types, and no source excerpt.
    asked = time.time()
    status, body, kind = request("/debug/pprof/ui?sample=inuse_objects")
    answered = time.time()
    check(status == 200 and kind.startswith("text/html"), f"/debug/pprof/ui: {status} {kind}")
    data = html_data(body)
    # It says which process and when: the service's pid and name, the time it was asked.
    capture = data.get("capture") or {}
    check(capture.get("pid") == process.pid and capture.get("program") == os.path.basename(service)
          and asked * 1000 - 1 <= capture.get("unixMillis", 0) <= answered * 1000 + 1,
          f"/debug/pprof/ui's capture {capture}: pid {process.pid}, asked at {asked}-{answered}")
    check_live_page(f"{base}/debug/pprof/ui", capture)
    check([t["name"] for t in data["types"]] ==
          ["inuse_space", "inuse_objects", "alloc_space", "alloc_objects"] and
          data["types"][data["type"]]["name"] == "inuse_objects" and
          any("open_sessions" in name for name in data["strings"]) and "sourceFiles" not in data,
          f"/debug/pprof/ui's data: {data['types']}, type {data['type']}, "
          f"{sorted(data)}")
    check(request("/pprof/profile/flamegraph?width=5")[0] == 400, "width=5 accepted")

    # Heap delta: what grew during the window, not what was there before it.
    status, body, _ = request("/debug/pprof/heap?seconds=2")
    check(status == 200, f"/debug/pprof/heap?seconds=2: {status} {body[:200]!r}")
    _, samples, _ = pprof_raw(saved("delta.pb.gz", body))
    grown = pprof_total(samples, "inuse_space", lambda frames: any("grow_slowly" in f for f in frames))
    before = pprof_total(samples, "inuse_space", lambda frames: any("open_sessions" in f for f in frames))
    print(f"delta: grow_slowly {grown} bytes, open_sessions {before} bytes")
    check(grown > 16384 * 20, f"grow_slowly grew {grown} bytes in 2 s")
    check(before == 0, f"open_sessions (allocated before the window) shows {before}")
    check(request("/debug/pprof/heap?seconds=0")[0] == 400, "heap seconds=0 accepted")

    # allocs: alloc_space by default.
    status, body, _ = request("/debug/pprof/allocs")
    top = go_pprof("-top", saved("allocs.pb.gz", body)).stdout
    check(status == 200 and "Type: alloc_space" in top, f"/debug/pprof/allocs:\n{top[:400]}")

    # A long profile runs apart from the server's event threads: while it runs, new
    # connections (spread over every thread) answer at once, and stopping the service
    # cuts it short instead of waiting out its 60 s.
    long_profile = threading.Thread(target=lambda: answers.update(
        long=request("/debug/pprof/profile?seconds=60")), daemon=True)
    long_profile.start()
    time.sleep(1)
    slowest = 0.0
    for _ in range(12):
        started = time.monotonic()
        check(request("/metrics")[0] == 200, "/metrics during a long profile")
        slowest = max(slowest, time.monotonic() - started)
    print(f"/metrics during a 60 s profile: slowest {slowest * 1000:.0f} ms of 12")
    check(slowest < 5, f"/metrics waited {slowest:.1f} s behind a CPU profile")
    started = time.monotonic()
    process.terminate()
    process.wait(timeout=60)
    stopped = time.monotonic() - started
    print(f"stopped {stopped:.2f} s after SIGTERM during the profile")
    check(stopped < 10, f"stopping waited {stopped:.1f} s for the profile")
finally:
    process.terminate()
    process.wait(timeout=30)
check(process.returncode == 0, f"service exit status {process.returncode}")
print("ok")
