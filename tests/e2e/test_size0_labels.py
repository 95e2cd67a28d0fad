# SPDX-License-Identifier: MIT
"""Code under a sizeless symbol (an assembly label, st_size 0) takes its name when no
sized symbol holds the address and it lies before the next symbol: the fixture's
label_alloc, and ld.so's _dl_start_user at the root of start-up stacks (when this
host has ld.so's debug file, as libc6-dbg installs it)."""

import os
import platform
import re

from heapkit_e2e import check, check_near, fixture, heapfold, run, run_fixture, workdir

directory = workdir()
dump = run_fixture(fixture("labels_main"), directory)
stacks = heapfold(dump)

if platform.machine() == "x86_64":
    check_near(sum(v for s, v in stacks.items() if s.endswith("main;label_alloc")), 40 * 12288,
               f"main;label_alloc in {list(stacks)}")
    check_near(sum(v for s, v in stacks.items() if s.endswith(";labels_at_load;label_alloc")),
               24576, f"the constructor's labels_at_load;label_alloc in {list(stacks)}")
else:
    print(f"{platform.machine()}: the fixture's label is x86-64 assembly; not checked")


def ld_so_debug_file():
    """ld.so as the dump maps it, and its debug file under /usr/lib/debug, if any."""
    with open(dump) as f:
        paths = re.findall(r"\s(/\S*/ld-linux[^/\s]*\.so\.\d+)$", f.read(), re.M)
    if not paths:
        return None, None
    notes = run(["readelf", "-n", paths[0]]).stdout
    found = re.search(r"Build ID: ([0-9a-f]+)", notes)
    if not found:
        return paths[0], None
    identity = found.group(1)
    debug = f"/usr/lib/debug/.build-id/{identity[:2]}/{identity[2:]}.debug"
    return paths[0], debug if os.path.exists(debug) else None


# The library's constructor runs from ld.so's _dl_init, called from _dl_start_user: a
# label with no size in ld.so's .symtab (in its debug file; .dynsym lacks it).
ld_so, debug = ld_so_debug_file()
if debug is None:
    print(f"no debug file for ld.so ({ld_so}): _dl_start_user not checked")
else:
    at_load = [s for s in stacks if "labels_at_load" in s.split(";")]
    check(at_load, f"no stack through labels_at_load: {list(stacks)}")
    for stack in at_load:
        check(stack.split(";")[0] == "_dl_start_user",
              f"a start-up stack does not begin at ld.so's _dl_start_user: {stack}")
print("ok")
