# SPDX-License-Identifier: MIT
"""/debug/jemalloc/log on the example service under load (its churn: HEAPKIT_EXAMPLE_CHURN=1
makes a 256-byte scratch object freed at once and a 512-byte message freed by a consumer
thread every millisecond; clients ask for /metrics the whole time): the allocation log of
the window as pprof (read by go tool pprof; the scratch site never cross-thread, the message
site always, each object's size as the fixture's), as the table, as a flame graph; one log
at a time; bad queries refused; the log file jemalloc wrote removed with its directory.
(The server's own threads are not profiled: their allocations are not in the log.)"""

import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from heapkit_e2e import check, flame_frames, go_pprof, pprof_raw, workdir

service = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")
if "libasan" in subprocess.run(["ldd", service], capture_output=True, text=True).stdout:
    print("sanitizer build: the jemalloc service cannot run under ASan; skipping")
    sys.exit(77)
directory = workdir()
private_tmp = workdir()  # the service's TMPDIR: where the page makes its directory


def request(path):
    try:
        with urllib.request.urlopen(base + path, timeout=120) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class Load:
    """Clients asking for /metrics until stopped (at most 10000 requests each), keeping the
    server's threads busy while the log runs."""

    def __init__(self, clients=2):
        self.stop = threading.Event()
        self.done = []
        self.threads = [threading.Thread(target=self.run) for _ in range(clients)]
        for thread in self.threads:
            thread.start()

    def run(self):
        for _ in range(10000):
            if self.stop.is_set():
                return
            status, _ = request("/metrics")
            if status == 200:
                self.done.append(status)

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()


TYPES = ["alloc_objects", "alloc_space", "temporary_objects", "temporary_space", "byte_seconds",
         "cross_thread_objects", "cross_thread_space"]
env = dict(os.environ, MALLOC_CONF="prof_time_resolution:high", TMPDIR=private_tmp,
           HEAPKIT_EXAMPLE_CHURN="1")
process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True, env=env)
try:
    base = process.stdout.readline().strip().replace("listening on ", "")
    check(base.startswith("http://127.0.0.1:"), f"service said {base!r}")
    load = Load()
    try:
        # pprof over 3 s, and a second log asked for meanwhile: 409.
        answers = {}
        first = threading.Thread(
            target=lambda: answers.update(pprof=request("/debug/jemalloc/log?seconds=3")))
        first.start()
        time.sleep(1)
        status, body = request("/debug/jemalloc/log?seconds=1&format=text")
        check(status == 409 and b"already" in body, f"concurrent log: {status} {body!r}")
        first.join()
        status, body = answers["pprof"]
        check(status == 200 and body[:2] == b"\x1f\x8b", f"log pprof: {status} {body[:200]!r}")
        profile = os.path.join(directory, "log.pb.gz")
        with open(profile, "wb") as f:
            f.write(body)
        types, samples, _ = pprof_raw(profile)
        check(types == TYPES, f"sample types {types}")
        def site(name):
            """alloc_objects, alloc_space and cross_thread_objects of the site's samples."""
            chosen = [x["by_type"] for x in samples if any(name in f for f in x["frames"][:1])]
            return [sum(v[t] for v in chosen) for t in ("alloc_objects", "alloc_space",
                                                        "cross_thread_objects")]

        objects, space, cross = site("make_scratch")
        print(f"make_scratch: {objects} objects, {space} bytes, {cross} cross-thread")
        check(objects > 0 and space == 256 * objects and cross == 0, "make_scratch's objects")
        objects, space, cross = site("make_message")
        print(f"make_message: {objects} objects, {space} bytes, {cross} cross-thread")
        check(objects > 0 and space == 512 * objects and cross == objects, "make_message's objects")
        check(len(load.done) > 0, "no /metrics request was answered during the log")
        for s in samples:
            v = s["by_type"]
            check(v["temporary_objects"] <= v["alloc_objects"] and
                  v["cross_thread_objects"] <= v["alloc_objects"], f"sample {v}")
        top = go_pprof("-top", "-sample_index=temporary_objects", profile).stdout
        check("temporary_objects" in top, f"go tool pprof -sample_index=temporary_objects:\n{top}")

        # The table, and a flame graph of byte_seconds.
        status, body = request("/debug/jemalloc/log?seconds=1&format=text&sample=temporary_objects")
        table = body.decode()
        check(status == 200 and table.startswith("allocation log:") and
              "by temporary_objects" in table and "<=1ms" in table, f"text: {status} {table[:300]!r}")
        rows = {line.split()[-1]: line.split() for line in table.splitlines()[2:]}
        scratch = next((r for r in rows.values() if "make_scratch" in r[-1]), None)
        check(scratch is not None and scratch[10] == "0.0%", f"make_scratch's row:\n{table}")
        message = next((r for r in rows.values() if "make_message" in r[-1]), None)
        check(message is not None and message[10] == "100.0%", f"make_message's row:\n{table}")
        status, body = request("/debug/jemalloc/log?seconds=1&format=svg&sample=byte_seconds")
        check(status == 200 and b"<svg" in body[:400], f"svg: {status} {body[:200]!r}")
        frames = flame_frames(body.decode())
        check(frames and "Allocation log: byte_seconds" in body.decode(), "svg title")
        status, body = request("/debug/jemalloc/log?seconds=1&format=lifetimes")
        check(status == 200 and b"Lifetimes of objects" in body and b"make_message" in body,
              f"lifetimes: {status} {body[:300]!r}")
    finally:
        load.finish()

    for query, part in (("seconds=0", b"seconds"), ("seconds=61", b"seconds"),
                        ("format=html", b"format"), ("sample=inuse_space", b"sample"),
                        ("colour=red", b"colour")):
        status, body = request(f"/debug/jemalloc/log?{query}")
        check(status == 400 and part in body, f"{query}: {status} {body!r}")
    # Nothing left where the logs were written.
    check(os.listdir(private_tmp) == [], f"left in TMPDIR: {os.listdir(private_tmp)}")
finally:
    process.terminate()
    process.wait(timeout=30)

# A log already running since startup (MALLOC_CONF=prof_log:true): the page says so and how
# to stop it, not jemalloc's bare EFAULT ("Bad address").
env["MALLOC_CONF"] = "prof_log:true"
process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True, env=env,
                           cwd=directory)  # where jemalloc writes that log at exit
try:
    base = process.stdout.readline().strip().replace("listening on ", "")
    status, body = request("/debug/jemalloc/log?seconds=1&format=text")
    check(status == 409 and b"already running" in body and b"prof_log:true" in body and
          b'mallctl("prof.log_stop"' in body, f"a log running since startup: {status} {body!r}")
finally:
    process.terminate()
    process.wait(timeout=30)
print("ok")
