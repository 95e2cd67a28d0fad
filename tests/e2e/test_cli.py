# SPDX-License-Identifier: MIT
"""Every tool answers --help and --version, and every flag in --help is in its man page."""

import os
import re
import shutil

from heapkit_e2e import MAN_DIR, check, run, tool

for name in ("jeprof2pprof", "heapfold", "disable_aslr", "jestat", "heapkit-index"):
    help_text = run([tool(name), "--help"]).stdout
    version = run([tool(name), "--version"]).stdout
    check("(heapkit) " in version, f"{name} --version: {version!r}")
    page_path = os.path.join(MAN_DIR, f"{name}.1")
    with open(page_path) as f:
        page = f.read().replace("\\-", "-")
    for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", help_text))):
        check(flag in page, f"{name}: {flag} is in --help but not in {page_path}")
    for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", page))):
        check(flag in help_text or flag in ("--colors", "--countname", "--raw", "--collapsed",
                                            "--inuse_space", "--no-pie"),
              f"{name}: {flag} is in the man page but not in --help")
    if shutil.which("man") and shutil.which("groff"):
        rendered = run(["man", "-l", "-Tutf8", page_path], env=dict(os.environ, MANWIDTH="80"))
        plain = re.sub(r".\x08", "", rendered.stdout)  # drop overstrike bold
        check(name in plain and "SYNOPSIS" in plain and "EXIT STATUS" in plain,
              f"man -l {page_path} rendered nothing useful")
print("ok")
