# SPDX-License-Identifier: MIT
"""Stripped binaries: DWARF found through a build-id tree (--debug-dir) and through
.gnu_debuglink (CRC checked); a binary with only .dynsym still names its exports; a
search that finds nothing locally loads libdebuginfod only when DEBUGINFOD_URLS is set."""

import os
import re
import shutil

from heapkit_e2e import (SOURCE_DIR, check, fixture, heapfold, marker_line, parse_folded, run,
                         run_fixture, tool, workdir)

hold_line = f"hold_pages (alloc_c.c:{marker_line('alloc_c.c', 'hold_pages')})"


def stripped_copy(directory, name):
    """A copy of the C fixture without symbols or DWARF, and its debug file."""
    app = os.path.join(directory, name)
    shutil.copy(fixture("alloc_c_pie"), app)
    run(["objcopy", "--only-keep-debug", app, app + ".debug"])
    run(["strip", "--strip-all", app])
    return app, app + ".debug"


def build_id(path):
    return re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]).stdout).group(1)


def has_line(dump, *flags):
    stacks = heapfold("--frame", "function+line", *flags, dump)
    return any(s.endswith(hold_line) for s in stacks), stacks


# Build-id tree under a directory given with --debug-dir.
directory = workdir()
app, debug = stripped_copy(directory, "by_build_id")
tree = os.path.join(directory, "debug-tree")
identity = build_id(app)
os.makedirs(os.path.join(tree, ".build-id", identity[:2]))
shutil.move(debug, os.path.join(tree, ".build-id", identity[:2], identity[2:] + ".debug"))
dump = run_fixture(app, directory)
found, stacks = has_line(dump)
check(not found, "names found without the debug directory")
check(any(re.search(r";by_build_id!0x[0-9a-f]+$", s) for s in stacks),
      f"stripped frames not shown as their function's start: {list(stacks)}")
found, stacks = has_line(dump, "--debug-dir", tree)
check(found, f"--debug-dir build-id tree not used: {list(stacks)}")

# .gnu_debuglink, with the debug file in .debug/ next to the binary.
directory = workdir()
app, debug = stripped_copy(directory, "by_link")
run(["objcopy", f"--add-gnu-debuglink={debug}", app])
os.makedirs(os.path.join(directory, ".debug"))
shutil.move(debug, os.path.join(directory, ".debug", "by_link.debug"))
dump = run_fixture(app, directory)
found, stacks = has_line(dump)
check(found, f".gnu_debuglink in .debug/ not followed: {list(stacks)}")
# A debug file of another build under the same name fails the CRC check: not used.
other = os.path.join(directory, "other")
shutil.copy(fixture("alloc_c_nopie"), other)
run(["objcopy", "--only-keep-debug", other, os.path.join(directory, ".debug", "by_link.debug")])
found, stacks = has_line(dump)
check(not found, f"a debug file with the wrong CRC was used: {list(stacks)}")

# Only .dynsym: exported functions keep their names, without lines.
directory = workdir()
app = os.path.join(directory, "dynsym_only")
run(["cc", "-g", "-O1", "-rdynamic", "-o", app, os.path.join(SOURCE_DIR, "fixtures", "alloc_c.c")])
run(["strip", "--strip-all", app])
check(".symtab" not in run(["readelf", "-S", app]).stdout, "strip left .symtab")
dump = run_fixture(app, directory)
stacks = heapfold(dump)
check(any(s.endswith("main;hold_pages") for s in stacks), f"dynsym names missing: {list(stacks)}")
# A relative --debug-dir or --sysroot is taken against the working directory: libdwfl
# itself would skip a relative directory for build-id lookups. The debug file is only
# where those options point, and the tool runs from a directory apart from the binary's.
directory = workdir()
app, debug = stripped_copy(directory, "relative")
identity = build_id(app)
dump = run_fixture(app, directory)
cwd = workdir()
in_tree = os.path.join(".build-id", identity[:2], identity[2:] + ".debug")
for root in ("tree", "root/usr/lib/debug"):
    os.makedirs(os.path.dirname(os.path.join(cwd, root, in_tree)))
    shutil.copy(debug, os.path.join(cwd, root, in_tree))
os.remove(debug)
os.makedirs(os.path.join(cwd, "root", directory.lstrip("/")))
shutil.copy(app, os.path.join(cwd, "root", directory.lstrip("/"), "relative"))
for flags in (["--debug-dir", "tree"], ["--sysroot", "root"]):
    stacks = parse_folded(run([tool("heapfold"), "--frame", "function+line", *flags, dump],
                              cwd=cwd).stdout)
    # Under --sysroot jemalloc is not found: its frames stay, unnamed, leafward.
    check(any(hold_line in s.split(";") for s in stacks),
          f"relative {' '.join(flags)}: no lines from the debug file: {list(stacks)}")

# Nothing local for a stripped binary: elfutils 0.188 would dlopen libdebuginfod (and
# libcurl, gnutls, krb5...) anyway; heapkit asks it only when servers are configured.
directory = workdir()
app, debug = stripped_copy(directory, "no_debuginfod")
os.remove(debug)
dump = run_fixture(app, directory)


def loads_debuginfod(**env):
    traced = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
    traced.update(LD_DEBUG="files", DEBUGINFOD_CACHE_PATH=workdir(), DEBUGINFOD_TIMEOUT="2",
                  **env)
    proc = run([tool("heapfold"), "--no-cache", dump], env=traced)
    return "libdebuginfod" in proc.stderr


check(not loads_debuginfod(), "libdebuginfod loaded with DEBUGINFOD_URLS unset")
check(not loads_debuginfod(DEBUGINFOD_URLS=""), "libdebuginfod loaded with DEBUGINFOD_URLS empty")
if "libdebuginfod.so.1" in run(["/sbin/ldconfig", "-p"]).stdout:
    # A closed port: the lookup fails at once, but the library is asked.
    check(loads_debuginfod(DEBUGINFOD_URLS="http://127.0.0.1:9"),
          "libdebuginfod not loaded although DEBUGINFOD_URLS is set")
else:
    print("skipped the DEBUGINFOD_URLS=... half: libdebuginfod1 is not installed")
print("ok")
