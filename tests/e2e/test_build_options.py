# SPDX-License-Identifier: MIT
"""The build's own promises: the version is written once (project(version:)) and reaches
every tool and man page; -Dfuzzing=true configures with the test suite left on, and
asks for the sanitizer it needs."""

import json
import os
import re
import shutil
import subprocess

from heapkit_e2e import MAN_DIR, SOURCE_DIR, check, run, tool, workdir

source_root = os.path.dirname(os.path.abspath(SOURCE_DIR))
build = os.environ["HEAPKIT_BUILD_ROOT"]
version = json.loads(run(["meson", "introspect", "--projectinfo", build]).stdout)["version"]

for name in ("jeprof2pprof", "heapfold", "disable_aslr", "jestat"):
    printed = run([tool(name), "--version"]).stdout.strip()
    check(printed == f"{name} (heapkit) {version}", f"{name} --version: {printed!r}")
    with open(os.path.join(MAN_DIR, f"{name}.1")) as page:
        title = next(line for line in page if line.startswith(".TH "))
    check(f'"heapkit {version}"' in title, f"{name}.1 title line: {title!r}")

# Nothing but meson.build spells the version out: every other place is generated from it.
spelled = re.compile(r"(?<![\d.])" + re.escape(version) + r"(?![\d.])")
for top in ("cmd", "lib", "man", "examples", "tests"):
    for directory, _, files in os.walk(os.path.join(source_root, top)):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            check(not spelled.search(text),
                  f"{os.path.relpath(path, source_root)} spells the version {version} out")

# libFuzzer targets need clang; configuring is enough to catch a broken meson.build (a
# whole sanitized fuzzing build with the tests was built by hand).
if shutil.which("clang") and shutil.which("clang++"):
    env = dict(os.environ, CC="clang", CXX="clang++")

    def configure(*options):
        return subprocess.run(["meson", "setup", os.path.join(workdir(), "build"), source_root,
                               "--wrap-mode=nodownload", *options], capture_output=True,
                              text=True, env=env, timeout=50)

    proc = configure("-Dfuzzing=true", "-Db_sanitize=address,undefined", "-Db_lundef=false")
    check(proc.returncode == 0,
          f"meson setup -Dfuzzing=true failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    # Without a sanitizer nothing but the fuzz targets would link: refused up front.
    proc = configure("-Dfuzzing=true")
    check(proc.returncode != 0 and "-Dfuzzing=true needs a sanitizer" in proc.stdout,
          f"meson setup -Dfuzzing=true without a sanitizer: {proc.stdout[-1500:]!r}")
else:
    print("clang not installed: the -Dfuzzing=true configure is not checked")
print("ok")
