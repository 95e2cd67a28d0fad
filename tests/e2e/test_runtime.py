# SPDX-License-Identifier: MIT
"""The example service (libheapkit-runtime linked into a C++ program) on a loopback
port: real jeprof reads it through its remote protocol, go tool pprof reads its
/debug/pprof/heap, profiling is switched off and on over HTTP, every error status."""

import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request

from heapkit_e2e import (check, check_near, go_pprof, heapfold, pprof_raw, pprof_total, run,
                         tool, workdir)

service = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")
# In a sanitizer build the runtime library is ASan-instrumented, and ASan's allocator and
# jemalloc cannot share a process: the service cannot run there. The handler's unit tests
# still run sanitized.
if "libasan" in subprocess.run(["ldd", service], capture_output=True, text=True).stdout:
    print("sanitizer build: the jemalloc service cannot run under ASan; skipping")
    sys.exit(77)
directory = workdir()
# The in-process naming, without an indexer (test_runtime_index has the indexes): the
# files and frames kept between requests are what this test counts.
os.environ["HEAPKIT_INDEXER"] = ""


def request(path, method="GET", body=None):
    req = urllib.request.Request(base + path, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def peak_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


# A non-loopback address is refused unless the service opts in.
refused = run([service, "0", "0.0.0.0"], check=False)
check(refused.returncode == 1 and "refusing" in refused.stderr, f"0.0.0.0: {refused.stderr!r}")

def start(*args, env=None):
    process = subprocess.Popen([service, *args], stdout=subprocess.PIPE, text=True, env=env)
    address = process.stdout.readline().strip().replace("listening on ", "")
    check(address.startswith("http://127.0.0.1:"), f"service said {address!r}")
    return process, address


def stop(process):
    process.terminate()
    process.wait(timeout=30)
    check(process.returncode == 0, f"service exit status {process.returncode}")


# jemalloc loaded, profiling off (the environment overrides the program's malloc_conf).
process, base = start("0", env=dict(os.environ, MALLOC_CONF="prof:false"))
status, body = request("/pprof/heap")
check(status == 403 and b"not enabled" in body, f"prof:false: {status} {body!r}")
check(request("/metrics")[0] == 200, "/metrics without profiling")
stop(process)

# A bearer token, when configured, is required; it is never taken from the command line.
on_argv = run([service, "0", "127.0.0.1", "s3cret"], check=False)
check(on_argv.returncode == 1 and "HEAPKIT_TOKEN" in on_argv.stderr, f"argv: {on_argv.stderr!r}")
process, base = start("0", "127.0.0.1", env=dict(os.environ, HEAPKIT_TOKEN="s3cret"))
check(request("/pprof/conf")[0] == 401, "no token: not 401")
check(b"s3cret" not in request("/pprof/cmdline")[1], "token readable through /pprof/cmdline")
# jeprof fetches with curl, which reads its options from $CURL_HOME/.curlrc: the header
# goes there, and the token stays out of URLs and command lines.
curl_home = os.path.join(directory, "curl_home")
os.makedirs(curl_home, exist_ok=True)
jeprof_env = dict(os.environ, HOME=directory, JEPROF_TMPDIR=directory)
refused = run(["jeprof", "--raw", f"{base}/pprof/heap"], env=jeprof_env, check=False)
check("open_sessions" not in refused.stdout, "jeprof without the token got a profile")
with open(os.path.join(curl_home, ".curlrc"), "w") as f:
    f.write('header = "Authorization: Bearer s3cret"\n')
fetched = run(["jeprof", "--raw", f"{base}/pprof/heap"], env=dict(jeprof_env, CURL_HOME=curl_home))
check("(anonymous namespace)::open_sessions()" in fetched.stdout,
      "jeprof with the token in $CURL_HOME/.curlrc did not get a named profile")
req = urllib.request.Request(base + "/pprof/conf", headers={"Authorization": "Bearer s3cret"})
with urllib.request.urlopen(req, timeout=60) as answer:
    check(answer.status == 200, "right token refused")
stop(process)

process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True)
try:
    base = process.stdout.readline().strip().replace("listening on ", "")
    check(base.startswith("http://127.0.0.1:"), f"service said {base!r}")

    # Real jeprof, remote protocol: /pprof/symbol, /pprof/cmdline, /pprof/heap, POST symbols.
    env = dict(os.environ, HOME=directory, JEPROF_TMPDIR=directory)
    fetched = run(["jeprof", "--raw", f"{base}/pprof/heap"], env=env)
    raw = os.path.join(directory, "service.prof")
    with open(raw, "w") as f:
        f.write(fetched.stdout)
    check(fetched.stdout.startswith("--- symbol\n"), "jeprof --raw wrote no symbolized profile")
    check("(anonymous namespace)::open_sessions()" in fetched.stdout,
          "jeprof did not get names from POST /pprof/symbol")
    stacks = heapfold(raw)
    sessions = sum(v for s, v in stacks.items() if "(anonymous namespace)::open_sessions()" in s)
    check_near(sessions, 64 * 16384, "open_sessions through jeprof --raw")
    check(any("(anonymous namespace)::fill_cache()" in s for s in stacks), "fill_cache missing")
    converted = os.path.join(directory, "service.pb.gz")
    run([tool("jeprof2pprof"), raw, "-o", converted])
    check("open_sessions" in go_pprof("-top", converted).stdout, "jeprof2pprof lost the names")

    # Go style: gzipped pprof, symbolized in the process.
    before = peak_rss_kb(process.pid)
    status, body = request("/debug/pprof/heap")
    after = peak_rss_kb(process.pid)
    print(f"in-process symbolization: peak RSS {before} KiB -> {after} KiB")
    check(status == 200 and body[:2] == b"\x1f\x8b", f"/debug/pprof/heap: {status}")
    served = os.path.join(directory, "served.pb.gz")
    with open(served, "wb") as f:
        f.write(body)
    check("open_sessions" in go_pprof("-top", served).stdout, "go tool pprof lacks open_sessions")
    _, samples, mappings = pprof_raw(served)
    check_near(pprof_total(samples, "inuse_space",
                           lambda frames: "(anonymous namespace)::open_sessions()" in frames),
               64 * 16384, "open_sessions in /debug/pprof/heap")
    # heapfold opens the page's answer: go tool pprof's total, its names.
    stacks = heapfold(served)
    check(sum(stacks.values()) == pprof_total(samples, "inuse_space", lambda frames: True)
          and any("open_sessions" in stack for stack in stacks), "heapfold /debug/pprof/heap")
    status, body = request("/debug/pprof/heap?symbolize=0&threads=1")
    with open(served, "wb") as f:
        f.write(body)
    _, bare, bare_mappings = pprof_raw(served)
    # ... and names its unnamed form from the service's file, as it names a dump's.
    stacks = heapfold(served)
    check(sum(stacks.values()) == pprof_total(bare, "inuse_space", lambda frames: True)
          and any("open_sessions" in stack for stack in stacks), "heapfold of symbolize=0")
    check(status == 200 and not any("open_sessions" in " ".join(s["frames"]) for s in bare),
          "symbolize=0 still named frames")
    check("[FN]" not in bare_mappings[0], "symbolize=0 mapping claims functions")
    status, body = request("/debug/pprof/heap.folded?sample=alloc_space")
    check(status == 200 and b"open_sessions" in body, f"heap.folded: {status}")
    status, body = request("/debug/pprof/heap.folded?threads=1")
    check(any(line.startswith(b"main service thread;") and b"open_sessions" in line
              for line in body.splitlines()), "thread.prof.name not in ?threads=1 stacks")

    # The service's files are opened once and kept, their frames remembered: more
    # profiles open nothing new, and their lookups are answered from memory.
    def symbolizer_metric(name):
        text = request("/metrics")[1].decode()
        return int(re.search(rf"^{re.escape(name)} (\d+)$", text, re.M).group(1))

    opened = symbolizer_metric("heapkit_symbolizer_files_opened_total")
    held = symbolizer_metric("heapkit_symbolizer_files")
    hits = symbolizer_metric('heapkit_symbolizer_lookups_total{result="hit"}')
    check(opened > 0 and held == opened, f"symbolizer files: {opened} opened, {held} held")
    for _ in range(3):
        check(request("/debug/pprof/heap")[0] == 200, "repeated /debug/pprof/heap")
    check(symbolizer_metric("heapkit_symbolizer_files_opened_total") == opened,
          "files opened again for later profiles")
    check(symbolizer_metric('heapkit_symbolizer_lookups_total{result="hit"}') > hits,
          "later profiles' frames were not answered from memory")

    # Control: off, on, reset with a new sampling rate.
    check(request("/pprof/conf", "POST")[0] == 400, "POST /pprof/conf without a setting")
    check(request("/pprof/conf?prof.active:maybe", "POST")[0] == 400, "bad prof.active value")
    status, body = request("/pprof/conf?prof.active:false", "POST")
    check(status == 200 and body.startswith(b"prof.active:false"), f"deactivate: {body!r}")
    check(request("/pprof/conf")[1].startswith(b"prof.active:false"), "GET /pprof/conf")
    status, body = request("/pprof/heap")
    check(status == 403 and b"not active" in body, f"dump while inactive: {status} {body!r}")
    check(request("/pprof/conf?prof.active:true", "POST")[0] == 200, "reactivate")
    status, body = request("/pprof/conf?prof.reset:3", "POST")
    check(status == 403 and b"min_lg_sample" in body, f"reset under the floor: {status} {body!r}")
    status, body = request("/pprof/conf?prof.reset:12", "POST")
    check(status == 200 and body.strip().endswith(b"prof.lg_sample:12"), f"reset: {body!r}")
    status, body = request("/pprof/heap")
    check(status == 200 and body.startswith(b"heap_v2/4096\n"), f"after reset: {body[:20]!r}")
    # An empty profile right after the reset is still a profile, of every sample type.
    for sample in ("alloc_space", "inuse_space"):
        status, body = request(f"/debug/pprof/heap?sample={sample}")
        check(status == 200 and body[:2] == b"\x1f\x8b", f"{sample} after reset: {status} {body!r}")

    # Errors.
    check(request("/no/such/page")[0] == 404, "404")
    check(request("/pprof/heap", "DELETE")[0] == 405, "405")
    # A declared body over the limit is refused from the headers alone, unread.
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1600000\r\n\r\n")
        check(sock.recv(4096).startswith(b"HTTP/1.1 413 "), "413")
    # A malformed chunk size is a malformed request, not an empty body.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                     b"\r\nzz\r\n0x1\r\n0\r\n\r\n")
        answer = sock.recv(4096)
        check(answer.startswith(b"HTTP/1.1 400 "), f"bad chunk size: {answer[:40]!r}")
    check(request("/debug/pprof/heap?threads=2")[0] == 400, "400")
    status, body = request("/metrics")
    check(status == 200 and b"heapkit_jemalloc_allocated_bytes" in body, "/metrics")
    # jestat's reconciliation of the service's own figures, and a gauge per row.
    for row in (b'heapkit_jemalloc_waterfall_bytes{row="dirty"} ',
                b'heapkit_rss_split_bytes{part="other_anonymous"} '):
        check(row in body, f"/metrics lacks {row!r}")
    status, body = request("/debug/jemalloc/stats?format=json")
    check(status == 200, f"/debug/jemalloc/stats?format=json: {status} {body[:200]!r}")
    report = json.loads(body)
    with open(f"/proc/{process.pid}/status") as f:
        vm_rss = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
    rss = {row["key"]: row["bytes"] for row in report["rss"]}
    check_near(rss["rss"], vm_rss, "the page's RSS against /proc/PID/status", 0.1)
    allocator = {row["key"]: row["bytes"] for row in report["allocator"]}
    # jemalloc's resident figure is an upper bound (dirty pages count whether touched or
    # not): only its share of the RSS split is bounded by the RSS.
    check(0 < allocator["allocated"] <= allocator["active"] <= allocator["resident"] and
          0 < rss["jemalloc_resident"] <= rss["rss"], f"the page's figures: {allocator} {rss}")
    status, body = request("/debug/jemalloc/stats")
    check(status == 200 and b"From the heap profile to jemalloc's address space" in body,
          f"/debug/jemalloc/stats: {body[:200]!r}")
    status, body = request("/debug/jemalloc/stats?format=html")
    check(status == 200 and body.startswith(b"<!DOCTYPE html>") and b"<svg " in body and
          b"<pre>" in body and b"= RSS" in body, f"format=html: {body[:200]!r}")
    check(request("/debug/jemalloc/stats?format=pdf")[0] == 400, "format=pdf")
finally:
    stop(process)
print("ok")
