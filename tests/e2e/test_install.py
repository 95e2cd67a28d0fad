# SPDX-License-Identifier: MIT
"""meson install puts the tools, the library, its headers, pkg-config file and man pages
under the prefix, and the installed headers compile on their own."""

import os
import subprocess

from heapkit_e2e import check, run, workdir

build = os.environ["HEAPKIT_BUILD_ROOT"]
destdir = workdir()
run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", destdir])
prefix = destdir + run(["meson", "introspect", "--buildoptions", build]).stdout.split(
    '"name": "prefix", "value": "')[1].split('"')[0]

found = {os.path.relpath(os.path.join(d, f), prefix) for d, _, fs in os.walk(prefix) for f in fs}
for tool in ("jeprof2pprof", "heapfold", "disable_aslr"):
    check(f"bin/{tool}" in found, f"bin/{tool} not installed: {sorted(found)}")
    check(f"share/man/man1/{tool}.1" in found, f"man page of {tool} not installed")
check(any(f.startswith("lib") and "/libheapkit.so" in f for f in found), "libheapkit not installed")
check(any(f.endswith("pkgconfig/heapkit.pc") for f in found), "heapkit.pc not installed")
headers = sorted(f for f in found if f.startswith("include/heapkit/"))
check("include/heapkit/pipeline.hpp" in headers, f"headers: {headers}")

# Every installed header compiles alone against the installed tree.
include = os.path.join(prefix, "include")
for header in headers:
    source = f'#include "{os.path.relpath(os.path.join(prefix, header), include)}"\nint main() {{}}\n'
    proc = subprocess.run(["c++", "-std=c++20", "-fsyntax-only", "-I", include, "-x", "c++", "-"],
                          input=source, capture_output=True, text=True)
    check(proc.returncode == 0, f"{header} does not compile alone:\n{proc.stderr}")
print("ok")
