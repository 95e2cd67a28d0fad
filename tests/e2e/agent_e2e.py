# SPDX-License-Identifier: MIT
"""Helpers for the tests of libheapkit-agent.so (tests/e2e/test_agent_*.py): programs
started with the agent preloaded, their stderr read as it comes, HTTP on loopback."""

import os
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

from heapkit_e2e import JEMALLOC_SO, check

AGENT_SO = os.environ["HEAPKIT_AGENT_SO"]
# HEAPKIT_FRAGMENTATION's malloc interposers, preloaded beside the agent.
FRAGMENTATION_SO = os.environ.get("HEAPKIT_FRAGMENTATION_SO", "")
SERVING = re.compile(r"heapkit-agent\[(\d+)\]: serving http://(\S+):(\d+)/")


class Guest:
    """A program started with `preload` in LD_PRELOAD and `env` on top of ours. Its stderr
    is collected line by line on a thread; stdin and stdout are pipes when asked."""

    def __init__(self, args, *, preload, env=None, stdin=False, stdout=False):
        environment = dict(os.environ)
        environment.pop("MALLOC_CONF", None)
        environment["LD_PRELOAD"] = " ".join(preload)
        environment.setdefault("HEAPKIT_LISTEN", "127.0.0.1:0")  # any free port
        environment.update(env or {})
        self.lines = []
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            args, env=environment, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout else subprocess.DEVNULL)
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self):
        for line in self.process.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def agent_lines(self):
        with self._changed:
            return [line for line in self.lines if "heapkit-agent[" in line]

    def wait_for(self, pattern, timeout=15):
        """The first stderr line matching `pattern` (a regex), waiting up to `timeout` s."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines:
                    if match := regex.search(line):
                        return match
                left = deadline - time.monotonic()
                check(left > 0, f"no stderr line matching {pattern!r} within {timeout} s; "
                                f"stderr: {self.lines[-20:]}")
                self._changed.wait(min(left, 0.2))

    def url(self, pid=None, timeout=15):
        """http://127.0.0.1:PORT of the agent in process `pid` (default: this one)."""
        pid = pid or self.process.pid
        match = self.wait_for(rf"heapkit-agent\[{pid}\]: serving http://(\S+):(\d+)/", timeout)
        return f"http://{match.group(1)}:{match.group(2)}"

    def stop(self, timeout=10):
        end(self.process, timeout)


def end(process, timeout=10):
    """SIGTERM, then SIGKILL after `timeout` s; waits for it either way."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def free_port():
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url, *, method="GET", data=None, headers=None, timeout=30):
    """(status, headers, body bytes); an HTTP error status is an answer, not an exception."""
    request = urllib.request.Request(url, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def fetch(url, path, target, **kwargs):
    """Saves a 200 answer of url+path to `target`; fails the test on any other status."""
    status, _, body = http(url + path, **kwargs)
    check(status == 200, f"GET {path}: {status} {body[:300]!r}")
    with open(target, "wb") as f:
        f.write(body)
    return target


def refused(url, timeout=2):
    """True when nothing accepts a connection at `url` (http://host:port)."""
    try:
        urllib.request.urlopen(url + "/", timeout=timeout)
    except urllib.error.HTTPError:
        return False
    except (urllib.error.URLError, ConnectionError, OSError):
        return True
    return False


def listening_ports(pid):
    """TCP ports process `pid` holds a listening socket for (from /proc)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for row in f.read().splitlines()[1:]:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


__all__ = ["AGENT_SO", "FRAGMENTATION_SO", "JEMALLOC_SO", "Guest", "end", "fetch", "free_port", "http", "refused",
           "listening_ports"]
