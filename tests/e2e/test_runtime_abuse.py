# SPDX-License-Identifier: MIT
"""The example service under load and attack, on loopback only, each case bounded in time:
slow clients, connections past the limit, header floods, a POST without a body, a token
checked before the body, small answers on a kept-alive connection, 8 profile requests at
once under `ulimit -n` 256, 96 and 40, and control toggled while profiles are served;
200 slowloris connections from another address, Host rebinding and cross-site requests,
ambiguous framing, heap deltas that hold no conversion slot while they wait, control off
unless the service turns it on. Every case runs and says ok or FAIL; the test fails if any
did. HEAPKIT_BUILD_ROOT names the build whose example service is attacked."""

import gzip
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

service = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")
# ASan's allocator and jemalloc cannot share a process, and its timing would make the
# time bounds below meaningless.
if "libasan" in subprocess.run(["ldd", service], capture_output=True, text=True).stdout:
    print("sanitizer build: the jemalloc service cannot run under ASan; skipping")
    sys.exit(77)

failures = []


def expect(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


def start(env=None, fd_limit=None):
    def limit():
        if fd_limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, **(env or {})), preexec_fn=limit)
    line = process.stdout.readline().strip()
    port = int(line.rsplit(":", 1)[1])
    return process, port


def stop(process, what):
    began = time.monotonic()
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    took = time.monotonic() - began
    expect(process.returncode == 0 and took < 5,
           f"{what}: SIGTERM ends the service in {took:.1f} s, status {process.returncode}")


def exchange(port, raw, timeout=5.0):
    """Sends `raw`, returns (status, headers, body, seconds) of one answer; status 0 when
    none came in `timeout` (or the connection broke first)."""
    began = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip()
                       for k, _, v in (line.partition(":") for line in lines[1:])}
            length = int(headers.get("content-length", "0"))
            while len(body) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
            status = int(lines[0].split()[1]) if lines[0].startswith("HTTP/") else 0
            return status, headers, body, time.monotonic() - began
    except OSError:
        return 0, {}, b"", time.monotonic() - began


def get(port, path, timeout=5.0, headers=""):
    return exchange(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n"
                    .encode(), timeout)


def peak_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def dribble(sockets, request):
    """A thread sending `request` on every socket a byte at a time, every half second, until
    the event it returns with is set."""
    stop_sending = threading.Event()

    def send_bytes():
        for i in range(len(request)):
            for sock in sockets:
                try:
                    sock.send(request[i:i + 1])
                except OSError:
                    pass
            if stop_sending.wait(0.5):
                return

    sender = threading.Thread(target=send_bytes)
    sender.start()
    return sender, stop_sending


def slow_clients():
    """64 sockets that send a request one byte every half second hold no server thread."""
    process, port = start()
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
    sender, stop_sending = dribble(sockets, b"GET /pprof/conf HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    time.sleep(1)
    times = []
    for path in ("/pprof/conf", "/metrics", "/pprof/conf", "/metrics", "/pprof/cmdline"):
        status, _, _, took = get(port, path, timeout=3)
        times.append(took if status == 200 else float("inf"))
    stop_sending.set()
    sender.join()
    expect(max(times) < 1, "64 slow clients: others answered within 1 s, slowest "
           f"{max(times):.3f} s")
    stop(process, "with 64 slow clients")
    for sock in sockets:
        sock.close()


def connection_limit():
    """130 connections that send nothing fill max_connections (128): the next request is
    told 503 with Retry-After at once instead of waiting in a queue."""
    process, port = start()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(130)]
    time.sleep(0.2)
    status, headers, _, took = get(port, "/pprof/conf", timeout=3)
    expect(status == 503 and "retry-after" in headers and took < 1,
           f"past max_connections: {status} in {took:.2f} s, headers {sorted(headers)}")
    for sock in idle:
        sock.close()
    time.sleep(0.2)
    expect(get(port, "/pprof/conf")[0] == 200, "after the idle connections left: 200")
    stop(process, "after the connection limit")


def header_flood():
    """8 requests at once with 2,000 x 8 KB headers each: 431, memory bounded."""
    process, port = start()
    baseline = peak_rss_kb(process.pid)
    header = b"X-Flood-%d: " + b"f" * 8000 + b"\r\n"
    statuses = []

    def flood():
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            try:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                for i in range(2000):
                    sock.sendall(header % i)
                sock.sendall(b"\r\n")
            except OSError:
                pass  # the server stopped reading: its answer may be waiting
            try:
                statuses.append(sock.recv(64))
            except OSError:
                statuses.append(b"")

    threads = [threading.Thread(target=flood) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    grew = peak_rss_kb(process.pid) - baseline
    # A refused flood may end in a reset before its answer is read; none may get a 200.
    expect(not any(s.startswith(b"HTTP/1.1 200") for s in statuses) and
           any(s.startswith(b"HTTP/1.1 431") for s in statuses),
           f"header flood: 431, never 200 ({sorted(set(s[:12] for s in statuses))})")
    expect(grew < 32 * 1024, f"header flood: peak RSS grew {grew} KiB (< 32 MiB)")
    status, _, _, _ = get(port, "/metrics")
    expect(status == 200, "header flood: the service still answers")
    stop(process, "after the header flood")


def post_without_body():
    """The README's own control command: a POST with no body and no Content-Length."""
    process, port = start()
    status, _, body, took = exchange(
        port, b"POST /pprof/conf?prof.active:true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    expect(status == 200 and took < 0.1,
           f"POST without a body: {status} in {took * 1000:.0f} ms (< 100 ms)")
    stop(process, "after a POST without a body")


def token_before_body():
    """A wrong token is answered from the headers: the declared 1 MB body is never sent."""
    process, port = start(env={"HEAPKIT_TOKEN": "s3cret"})
    status, headers, _, took = exchange(
        port, b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n"
        b"Content-Length: 1000000\r\n\r\n", timeout=3)
    expect(status == 401 and took < 1, f"wrong token, body unsent: {status} in {took:.2f} s")
    expect(headers.get("www-authenticate", "").lower().startswith("bearer"),
           f"401 says WWW-Authenticate: Bearer ({headers.get('www-authenticate')!r})")
    status, _, _, _ = get(port, "/pprof/conf", headers="Authorization: bearer s3cret\r\n")
    expect(status == 200, f"scheme in lower case (RFC 7235): {status}")
    stop(process, "with a token")


def kept_alive_latency():
    """Small answers on one kept-alive connection do not wait for delayed ACKs (Nagle):
    ~40 ms each without TCP_NODELAY. The bound is loose; bench/runtime_load.py measures."""
    process, port = start()
    took = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        for _ in range(40):
            began = time.monotonic()
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = sock.makefile("rb")
            length = 0
            for line in iter(answer.readline, b"\r\n"):
                if not line:
                    break  # closed: the connection was not kept alive
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if len(answer.read(length)) != length or length == 0:
                took.append(float("inf"))
                break
            took.append(time.monotonic() - began)
    median = statistics.median(took)
    expect(median < 0.02, f"/metrics kept alive: median {median * 1000:.1f} ms (< 20 ms)")
    stop(process, "after kept-alive requests")


def heap_profiles_at_once(port, clients, rounds):
    """`clients` threads asking for /debug/pprof/heap `rounds` times each; every answer."""
    answers = []

    def fetch():
        for _ in range(rounds):
            answers.append(get(port, "/debug/pprof/heap", timeout=60))

    threads = [threading.Thread(target=fetch) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def descriptor_limit(limit):
    """ulimit -n LIMIT, 8 profile requests at once, 5 rounds: each answer is a named 200 or
    a clean 503."""
    process, port = start(fd_limit=limit)
    answers = heap_profiles_at_once(port, 8, 5)
    bad = []
    named = 0
    for status, headers, body, _ in answers:
        if status == 200 and body[:2] == b"\x1f\x8b" and b"open_sessions" in gzip.decompress(body):
            named += 1
        elif not (status == 503 and "retry-after" in headers):
            bad.append((status, body[:80]))
    expect(not bad and named > 0,
           f"ulimit -n {limit}, 8 at once: {named} named 200s of {len(answers)}, bad: {bad[:3]}")
    stop(process, f"under ulimit -n {limit}")


def starved_of_descriptors():
    """ulimit -n 40: too few descriptors to name a profile. Every answer is a named 200, a
    503, or a 500 that says why; never a 200 with frames left unnamed, never a 400."""
    process, port = start(fd_limit=40)
    answers = heap_profiles_at_once(port, 8, 3)
    bad = []
    for status, headers, body, _ in answers:
        named = status == 200 and body[:2] == b"\x1f\x8b" and b"open_sessions" in gzip.decompress(body)
        if not (named or status == 503 or (status == 500 and len(body) > 10)):
            bad.append((status, body[:60]))
    expect(not bad, f"ulimit -n 40: no unnamed 200 nor 400 among {len(answers)}: {bad[:3]}")
    stop(process, "under ulimit -n 40")


def symbol_memory():
    """Eight 1 MB POST /pprof/symbol at once: memory is bounded by the conversions let run
    at once (2), not by the requests (cpp-httplib: 8 at once, +227 to +276 MiB peak here)."""
    process, port = start()
    raw = get(port, "/pprof/heap", timeout=60)[2].decode("latin-1")
    addresses = list(dict.fromkeys(word for line in raw.splitlines() if line.startswith("@")
                                   for word in line.split()[1:]))
    body = "+".join(addresses * (1 + 1_000_000 // (16 * len(addresses))))
    body = body[:1_000_000].rsplit("+", 1)[0].encode()
    baseline = peak_rss_kb(process.pid)
    statuses = []

    def post():
        head = (f"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        statuses.append(exchange(port, head + body, timeout=60)[0])

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    grew = (peak_rss_kb(process.pid) - baseline) // 1024
    expect(set(statuses) <= {200, 503} and 200 in statuses and grew < 160,
           f"8 x 1 MB /pprof/symbol: {sorted(statuses)}, peak RSS +{grew} MiB (< 160)")
    stop(process, "after 8 symbol requests")


def toggles_under_load():
    """prof.active switched off and on while profiles and metrics are served."""
    process, port = start()
    deadline = time.monotonic() + 3
    bad = []
    valid = {"/debug/pprof/heap": {200, 403, 503}, "/pprof/heap": {200, 403, 503},
             "/metrics": {200}, "/debug/pprof/heap.folded": {200, 403, 503}}

    def reader(path):
        while time.monotonic() < deadline:
            status, _, body, _ = get(port, path, timeout=30)
            if status not in valid[path]:
                bad.append((path, status, body[:160]))  # the body says why

    def toggler():
        active = False
        while time.monotonic() < deadline:
            raw = f"POST /pprof/conf?prof.active:{str(active).lower()} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            status = exchange(port, raw.encode())[0]
            if status != 200:
                bad.append(("toggle", status))
            active = not active

    threads = [threading.Thread(target=reader, args=(path,)) for path in valid]
    threads += [threading.Thread(target=toggler) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expect(not bad and process.poll() is None, f"toggles under load: bad answers {bad[:5]}")
    stop(process, "after toggles under load")


def slowloris():
    """200 connections from 127.0.0.2 trickle a request head, a byte each every half second:
    /metrics from 127.0.0.1 still answers within 1 s (a per-address cap), and every one of
    them is closed by the server within its head deadline (10 s), however it trickles."""
    process, port = start()
    began = time.monotonic()
    sockets = []
    for _ in range(200):
        try:
            sockets.append(socket.create_connection(("127.0.0.1", port), timeout=2,
                                                    source_address=("127.0.0.2", 0)))
        except OSError:
            pass  # refused past the hard limit: not served either
    sender, stop_sending = dribble(
        sockets, b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 200)
    times = []
    for _ in range(6):
        time.sleep(0.5)
        status, _, _, took = get(port, "/metrics", timeout=3)
        times.append(took if status == 200 else float("inf"))
    expect(max(times) < 1, f"200 slowloris connections: /metrics from another address "
           f"answered within 1 s, slowest {max(times):.3f} s, median "
           f"{statistics.median(times):.3f} s")
    time.sleep(max(0.0, began + 11.5 - time.monotonic()))
    stop_sending.set()
    sender.join()
    still_open = 0
    for sock in sockets:
        sock.settimeout(0.05)
        try:
            while sock.recv(65536):
                pass
        except socket.timeout:
            still_open += 1
        except OSError:
            pass
        sock.close()
    expect(still_open == 0, f"slowloris: {still_open} of {len(sockets)} connections still "
           "open 11.5 s after they began (head deadline 10 s)")
    stop(process, "after 200 slowloris connections")


def answers(port, raw):
    """Every byte the server sends for `raw` until it closes (at most 5 s)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except OSError:
            pass
        return data


def rebinding_and_cross_site():
    """DNS rebinding (a Host that is not this server) and a browser's cross-site request
    (Origin, Sec-Fetch-Site) are refused; the same requests from the server's own names
    and origin are not."""
    process, port = start()
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example"):
        status = get_with_host(port, "/pprof/heap", host)
        expect(status == 403, f"Host: {host} gets {status} (403)")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        status = get_with_host(port, "/pprof/cmdline", host)
        expect(status == 200, f"Host: {host} gets {status} (200)")
    form = "application/x-www-form-urlencoded"
    for origin, want in (("http://evil.example", 403), ("null", 403),
                         (f"http://127.0.0.1:{port}", 200)):
        status = exchange(port, (
            f"POST /pprof/conf?prof.active:true HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Origin: {origin}\r\nContent-Type: {form}\r\nContent-Length: 1\r\n\r\nx").encode())[0]
        expect(status == want, f"POST /pprof/conf from Origin {origin}: {status} ({want})")
    status, _, _, took = get(port, "/debug/pprof/profile?seconds=30", timeout=5,
                             headers="Sec-Fetch-Site: cross-site\r\n")
    expect(status == 403 and took < 1, f"a cross-site GET of a CPU profile: {status} in "
           f"{took:.2f} s (403 at once)")
    stop(process, "after rebinding and cross-site requests")


def get_with_host(port, path, host):
    return exchange(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                    .encode())[0]


def framing():
    """Ambiguous or oversized requests: one clean answer each, with a single status line."""
    process, port = start()
    head = b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for what, raw, want in (
            ("two Content-Lengths", head + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\n0x1",
             b"400"),
            ("Content-Length and chunked",
             head + b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n0x1\r\n0\r\n\r\n",
             b"400"),
            ("Content-Length: -1", head + b"Content-Length: -1\r\n\r\n", b"400"),
            ("a 20 KB header", b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
             b"b" * 20000 + b"\r\n\r\n", b"431")):
        data = answers(port, raw)
        expect(data.startswith(b"HTTP/1.1 " + want + b" ") and data.count(b"HTTP/1.1 ") == 1,
               f"{what}: {data[:40]!r}, {data.count(b'HTTP/1.1 ')} status line(s) "
               f"(one {want.decode()})")
    query = "&".join("a=1" for i in range(400))
    status, _, _, took = get(port, f"/pprof/cmdline?{query}", timeout=3)
    expect(status != 0 and took < 1, f"400 query parameters ({len(query)} bytes): {status} "
           f"in {took:.2f} s")
    stop(process, "after ambiguous requests")


def deltas_in_flight():
    """Two heap deltas of 8 s in flight hold no conversion slot while they wait (only for
    their dumps): /debug/pprof/heap and /pprof/heap answer 200 meanwhile, and the deltas
    themselves 200."""
    process, port = start()
    deltas = []

    def delta():
        deltas.append(get(port, "/debug/pprof/heap?seconds=8", timeout=40)[0])

    began = time.monotonic()
    threads = [threading.Thread(target=delta) for _ in range(2)]
    for thread in threads:
        thread.start()

    def during_window(path):
        """200 once the deltas' first dumps are done (a 503 before that is fair)."""
        status = 0
        while time.monotonic() < began + 6:
            status = get(port, path, timeout=20)[0]
            if status == 200:
                break
            time.sleep(0.3)
        return status

    during = [during_window(path) for path in ("/debug/pprof/heap", "/pprof/heap")]
    for thread in threads:
        thread.join()
    expect(during == [200, 200] and deltas == [200, 200],
           f"2 deltas in flight: heap pages meanwhile {during}, the deltas {deltas}")
    stop(process, "after two deltas")


def control_off_unless_enabled():
    """The library's default: POST /pprof/conf is refused unless the service allows it (the
    example does, unless HEAPKIT_EXAMPLE_CONTROL=0)."""
    process, port = start(env={"HEAPKIT_EXAMPLE_CONTROL": "0"})
    status, _, body, _ = exchange(
        port, b"POST /pprof/conf?prof.reset:12 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    expect(status == 403 and b"allow_control" in body, f"control off: {status} {body!r}")
    status, _, body, _ = get(port, "/pprof/conf")
    expect(status == 200 and b"prof.lg_sample:0" in body, f"the rate unchanged: {body!r}")
    stop(process, "with control off")


for case in (slow_clients, connection_limit, header_flood, post_without_body, token_before_body,
             kept_alive_latency, symbol_memory, toggles_under_load, slowloris,
             rebinding_and_cross_site, framing, deltas_in_flight, control_off_unless_enabled):
    case()
# The limit, and a tighter one that only the limit on conversions at once holds.
for limit in (256, 96):
    descriptor_limit(limit)
starved_of_descriptors()
if failures:
    sys.exit(f"FAIL: {len(failures)} case(s): " + "; ".join(failures))
print("ok")
