# SPDX-License-Identifier: MIT
"""The cache directory cannot be turned against its user (issue 35, high 1 and 2): links
planted under the names a run writes (debian-packages.tmp.<pid>, an address index, a
builder's lock file) leave what they lead to untouched, a FIFO behind one does not hang the run,
and the output is right; a cache directory someone else owns, or others may write without
the sticky bit, is refused in one line and the tools run on without it. -o through a link
someone else could plant is replaced, not followed into a FIFO."""

import os
import re
import shutil
import stat
import subprocess

from heapkit_e2e import check, fixture, run, run_fixture, tool, workdir

directory = workdir()
dump = run_fixture(fixture("alloc_c_pie"), directory)
victim = os.path.join(directory, "victim")
precious = "the user's own file\n"
with open(victim, "w") as f:
    f.write(precious)


def heapfold(cache, *args, index="never"):
    """heapfold with `cache`, ended after 20 s: rc 124 means it hung."""
    return subprocess.run(["timeout", "20", tool("heapfold"), *args, dump], capture_output=True,
                          text=True, env=dict(os.environ, HEAPKIT_CACHE_DIR=cache,
                                              HEAPKIT_INDEX=index))


def build_id(path):
    return re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]).stdout).group(1)


def check_victim(what):
    check(open(victim).read() == precious, f"{what}: the victim file was written")


expected = run([tool("heapfold"), "--no-cache", dump]).stdout

# The debian-packages temporary under every pid the next run may have.
cache = os.path.join(directory, "planted")
os.mkdir(cache, 0o700)
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for pid in range(last + 1, last + 2002):
    os.symlink(victim, os.path.join(cache, f"debian-packages.tmp.{pid}"))
proc = heapfold(cache)
check(proc.returncode == 0 and proc.stdout == expected, f"planted links: {proc.stderr}")
check_victim("debian-packages.tmp.<pid> links")
packages = os.path.join(cache, "debian-packages")
if os.path.lexists(packages):
    check(stat.S_ISREG(os.lstat(packages).st_mode), "debian-packages is not a regular file")
else:
    print("SKIP the debian-packages file check: nothing asked dpkg-query here")

# An address index and a builder's lock file that lead to a FIFO or to the victim: the
# run (which makes the index again, --index now) neither follows them nor hangs.
program_id = build_id(fixture("alloc_c_pie"))
fifo = os.path.join(directory, "fifo")
os.mkfifo(fifo)
for target in (fifo, victim):
    cache = workdir()
    run([tool("heapkit-index"), "--cache-dir", cache, fixture("alloc_c_pie")])
    entries = [os.path.join(cache, name, program_id) for name in os.listdir(cache)
               if name.startswith("index-")]
    check(len(entries) == 1, f"no address index was made: {os.listdir(cache)}")
    entries.append(os.path.join(os.path.dirname(entries[0]), ".locks", program_id))
    for entry in entries:
        if os.path.lexists(entry):
            os.remove(entry)
        os.symlink(target, entry)
    proc = heapfold(cache, index="now")
    check(proc.returncode != 124, f"a cache entry linked to {target} hung heapfold")
    check(proc.returncode == 0 and proc.stdout == expected,
          f"cache entries linked to {target}: exit {proc.returncode}, {proc.stderr}")
    proc = subprocess.run(["timeout", "20", tool("heapkit-index"), "--cache-dir", cache,
                           fixture("alloc_c_pie")], capture_output=True, text=True)
    check(proc.returncode == 0, f"heapkit-index over a link to {target}: {proc.returncode} "
          f"{proc.stderr}")
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced")
    check_victim(f"cache entries linked to {target}")

# A cache directory others may write, or another user's: one line, and no cache.
unsafe = os.path.join(directory, "shared")
os.mkdir(unsafe)
os.chmod(unsafe, 0o777)
proc = heapfold(unsafe)
said = [line for line in proc.stderr.splitlines() if unsafe in line]
check(proc.returncode == 0 and proc.stdout == expected, f"0777 cache: {proc.stderr}")
check(len(said) == 1 and "warning: cache not used" in said[0] and "mode 0777" in said[0]
      and "HEAPKIT_CACHE_DIR" in said[0], f"0777 cache: not one line saying why: {proc.stderr!r}")
check(os.listdir(unsafe) == [], f"the refused cache was written: {os.listdir(unsafe)}")
os.chmod(unsafe, 0o1777)  # sticky: others cannot rename our files away
proc = heapfold(unsafe)
check(proc.returncode == 0 and "cache not used" not in proc.stderr, f"1777 cache: {proc.stderr}")
proc = subprocess.run([tool("heapkit-index"), "--cache-dir", os.path.join(directory, "shared2"),
                       fixture("alloc_c_pie")], capture_output=True, text=True)
check(proc.returncode == 0, f"heapkit-index into a new directory: {proc.stderr}")
if os.geteuid() == 0:
    theirs = os.path.join(directory, "theirs")
    os.mkdir(theirs, 0o755)
    shutil.chown(theirs, "nobody")
    proc = heapfold(theirs)
    said = [line for line in proc.stderr.splitlines() if theirs in line]
    check(proc.returncode == 0 and proc.stdout == expected, f"nobody's cache: {proc.stderr}")
    check(len(said) == 1 and "belongs to uid" in said[0], f"nobody's cache: {proc.stderr!r}")
    check(os.listdir(theirs) == [], "another user's cache was written")
    proc = subprocess.run([tool("heapkit-index"), "--cache-dir", theirs, fixture("alloc_c_pie")],
                          capture_output=True, text=True)
    check(proc.returncode == 1 and "cache not used" in proc.stderr,
          f"heapkit-index into nobody's cache: {proc.returncode} {proc.stderr!r}")
else:
    print("SKIP the other user's cache: chown needs root")

# -o through a link in a directory others may write: the link is replaced, the FIFO not
# opened (which would hang, waiting for a reader).
shared_tmp = os.path.join(directory, "tmp")
os.mkdir(shared_tmp)
os.chmod(shared_tmp, 0o777)
out = os.path.join(shared_tmp, "out.folded")
os.symlink(fifo, out)
proc = subprocess.run(["timeout", "20", tool("heapfold"), "--no-cache", dump, "-o", out],
                      capture_output=True, text=True)
check(proc.returncode == 0, f"-o a link to a FIFO: exit {proc.returncode}, {proc.stderr}")
check(not os.path.islink(out) and open(out).read() == expected, "-o link was not replaced")
check(stat.S_ISFIFO(os.stat(fifo).st_mode), "-o: the FIFO was replaced")
print("ok")
