# SPDX-License-Identifier: MIT
"""Helpers for the tests of libheapkit-runtime through the example service
(examples/service.cpp): started on a free port, asked over HTTP, stopped with its stderr."""

import atexit
import os
import re
import subprocess
import sys
import urllib.request

from heapkit_e2e import check

SERVICE = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")


def skip_under_sanitizers():
    if "libasan" in subprocess.run(["ldd", SERVICE], capture_output=True, text=True).stdout:
        print("SKIP: sanitizer build: the jemalloc service cannot run under ASan")
        sys.exit(77)


class Service:
    """The example service with `env` on top of ours, run through `wrapper` (e.g. setpriv)
    when given; its stderr is read when it stops."""

    def __init__(self, env, wrapper=()):
        environment = dict(os.environ, **env)
        self.process = subprocess.Popen([*wrapper, SERVICE, "0"], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=environment,
                                        cwd="/")
        atexit.register(self.process.kill)  # a failed check leaves no service behind
        self.base = self.process.stdout.readline().strip().replace("listening on ", "")
        check(self.base.startswith("http://127.0.0.1:"), f"service said {self.base!r}")

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=120) as answer:
            return answer.read()

    def indexer_runs(self):
        return {result: int(count) for result, count in re.findall(
            r'^heapkit_indexer_runs_total\{result="(\w+)"\} (\d+)$',
            self.get("/metrics").decode(), re.M)}

    def stop(self):
        """The runtime's lines on its stderr ("heapkit[PID]: ..."), once it has ended."""
        self.process.terminate()
        _, err = self.process.communicate(timeout=30)
        check(self.process.returncode == 0, f"service exit status {self.process.returncode}: {err}")
        return [line for line in err.splitlines() if line.startswith("heapkit[")]
