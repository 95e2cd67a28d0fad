# SPDX-License-Identifier: MIT
"""A dump taken where the binary lived elsewhere: --path-map, --sysroot and --binary find
it; a different build at the path is refused; a deleted mapping is followed."""

import os
import shutil

from heapkit_e2e import check, fixture, run, run_fixture, tool, workdir

directory = workdir()
original = os.path.join(directory, "srv", "app")
os.makedirs(os.path.dirname(original))
shutil.copy(fixture("alloc_c_pie"), original)
dump = run_fixture(original, directory)


def folded(*flags):
    proc = run([tool("heapfold"), *flags, dump])
    return proc.stdout, proc.stderr


def named(*flags):
    out, err = folded(*flags)
    return "main;hold_pages " in out, out, err


moved = os.path.join(directory, "elsewhere", "app")
os.makedirs(os.path.dirname(moved))
shutil.move(original, moved)

ok, out, err = named()
check(not ok and original in err and "cannot" in err, f"moved binary: {out!r} {err!r}")
# --strict: unnamed frames make the exit status 2, and the output is still written.
strict_out = os.path.join(directory, "strict.folded")
proc = run([tool("heapfold"), "--strict", dump, "-o", strict_out], check=False)
check(proc.returncode == 2 and os.path.getsize(strict_out) > 0, f"--strict: exit {proc.returncode}")
check(run([tool("heapfold"), "--strict", "--no-symbolize", dump], check=False).returncode == 0,
      "--strict --no-symbolize asks for no names, so nothing is unresolved")
ok, out, err = named("--path-map", f"{os.path.dirname(original)}={os.path.dirname(moved)}")
check(ok, f"--path-map did not find the binary: {out!r} {err!r}")
ok, out, err = named("--path-map", "/nowhere=/x", "--path-map",
                     f"{os.path.dirname(original)}={os.path.dirname(moved)}")
check(ok, "the matching --path-map entry was not used")
ok, out, err = named("--binary", moved)
check(ok, f"--binary did not name the main executable: {out!r} {err!r}")

root = os.path.join(directory, "root")
os.makedirs(os.path.dirname(root + original))
shutil.copy(moved, root + original)
# Only the program is under this root: the libraries stay unnamed (no silent fallback to
# this host's files, which may be other builds), the program is found.
out, err = folded("--sysroot", root)
check("main;hold_pages" in out and f"{root}/usr/lib" in err,
      f"--sysroot did not find the binary: {out!r} {err!r}")

# A different build at the dump's path: its layout cannot fit the mapping.
shutil.copy(fixture("alloc_c_nopie"), original)
ok, out, err = named()
check(not ok and "does not fit" in err, f"a different build was used: {out!r} {err!r}")
os.remove(original)

# The process mapped a file that was deleted afterwards (" (deleted)" in the maps).
with open(dump) as f:
    text = f.read()
deleted_dump = os.path.join(directory, "deleted.heap")
with open(deleted_dump, "w") as f:
    f.write(text.replace(f"{original}\n", f"{moved} (deleted)\n"))
proc = run([tool("heapfold"), deleted_dump])
check("main;hold_pages " in proc.stdout and "was deleted" in proc.stderr,
      f"deleted mapping: {proc.stdout!r} {proc.stderr!r}")
print("ok")
