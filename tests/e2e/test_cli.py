# SPDX-License-Identifier: MIT
"""Every tool answers --help and --version, and every flag in --help is in its man page.
The source pages read as they are (no @PLACEHOLDER@ left for meson), the built ones carry
the version and this build's paths, and heapkit-agent(7) lists every page the runtime
serves."""

import os
import re
import shutil

from heapkit_e2e import MAN_DIR, SOURCE_DIR, check, run, tool

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

# A mistyped flag: the tool's name, the nearest flag, where the options are; exit 1.
for name, typo, near in (("heapfold", "--svgg", "--svg"), ("jeprof2pprof", "--outptu", "--output"),
                         ("jestat", "--jsno", "--json"), ("heapkit-index", "--cache-dri",
                                                          "--cache-dir")):
    proc = run([tool(name), typo, "x"], check=False)
    check(proc.returncode == 1 and proc.stderr.startswith(f"{name}: error: ") and
          f"{name}: {typo}: did you mean {near}?" in proc.stderr and
          f"'{name} --help' lists the options" in proc.stderr, f"{name} {typo}: {proc.stderr!r}")
proc = run([tool("heapfold"), "--zzzzzzzz", "x"], check=False)
check(proc.returncode == 1 and "did you mean" not in proc.stderr, proc.stderr)

source_man = os.path.join(os.path.dirname(os.path.abspath(SOURCE_DIR)), "man")
pages = sorted(name for name in os.listdir(source_man) if re.search(r"\.[17]$", name))
check(len(pages) == 6, f"man pages: {pages}")
for name in pages:
    with open(os.path.join(source_man, name)) as f:
        source = f.read()
    check(not re.search(r"@[A-Z_]+@", source), f"man/{name} keeps a placeholder")
    with open(os.path.join(MAN_DIR, name)) as f:
        built = f.read()
    title = next(line for line in built.splitlines() if line.startswith(".TH "))
    check(re.search(r'"heapkit \d+\.\d+', title), f"built {name}: {title!r}")
    if shutil.which("man") and shutil.which("groff"):
        for path in (os.path.join(source_man, name), os.path.join(MAN_DIR, name)):
            shown = run(["man", "-l", "-Tutf8", path], env=dict(os.environ, MANWIDTH="80")).stdout
            shown = re.sub(r".\x08", "", shown)  # drop overstrike bold
            check("NAME" in shown and "@" not in re.sub(r"\S+@\S+", "", shown),
                  f"man -l {path}: {shown[:300]!r}")
with open(os.path.join(MAN_DIR, "heapkit-agent.7")) as f:
    agent_page = f.read()
check(re.search(r"^\.ds agent /\S+/heapkit/libheapkit-agent\.so$", agent_page, re.M),
      "heapkit-agent.7 does not name the agent where this build installs it")
with open(os.path.join(os.path.dirname(source_man), "lib/heapkit/runtime/pages/routes.cpp")) as f:
    routes = set(re.findall(r'\{"(/[^"]*)"', f.read()))
agent_page = agent_page.replace("\\-", "-")
missing = sorted(route for route in routes if f"\\fB{route}\\fR" not in agent_page)
check(not missing, f"heapkit-agent(7) does not list {missing}")
print("ok")
