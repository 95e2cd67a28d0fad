# SPDX-License-Identifier: MIT
"""A service that runs as another user than the one whose environment it has (a daemon
that dropped to `nobody`) cannot write the cache directory its environment names: the
runtime says so once, keeps its address indexes in a directory that user can write, and
still has heapkit-index name the profile out of process (no fallback to naming in the
service). An indexer that cannot run at all is said once on stderr, with why."""

import atexit
import glob
import os
import shutil
import sys
import tempfile

from heapkit_e2e import check, check_names_like_llvm, closed_to_nobody, pprof_raw, tool
from runtime_e2e import SERVICE, Service, skip_under_sanitizers

if os.geteuid() != 0:
    print("SKIP: needs root to run the service as nobody")
    sys.exit(77)
skip_under_sanitizers()
if closed := closed_to_nobody(SERVICE):
    print(f"SKIP: nobody cannot read the service's build ({closed} is closed to other users): "
          f"build the project where other users can read it to run this test")
    sys.exit(77)

# Root's, readable by all, writable by root alone: the cache a root-started service names.
directory = tempfile.mkdtemp(prefix="heapkit-e2e-user-")
atexit.register(shutil.rmtree, directory, True)
os.chmod(directory, 0o755)
root_cache = os.path.join(directory, "root-cache")
os.mkdir(root_cache, 0o755)
# nobody's fallback is one directory kept across starts: begin without it, remove it after.
shutil.rmtree("/tmp/heapkit-cache-65534", True)
made_before = set(glob.glob("/tmp/heapkit-cache-*"))
# The private directories the service makes itself, removed too.
atexit.register(lambda: [shutil.rmtree(made, True)
                         for made in set(glob.glob("/tmp/heapkit-cache-*")) - made_before])


def start(indexer):
    env = dict(HEAPKIT_CACHE_DIR=root_cache, HEAPKIT_INDEXER=indexer, HOME="/root",
               TMPDIR="/tmp", HEAPKIT_QUIET="")
    return Service(env, ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"])


# 1. The cache falls back to a private directory of nobody's; the indexer names the profile.
service = start(tool("heapkit-index"))
profile = os.path.join(directory, "heap.pb.gz")
for name in ("heap.pb.gz", "again.pb.gz"):
    with open(os.path.join(directory, name), "wb") as f:
        f.write(service.get("/debug/pprof/heap"))
runs = service.indexer_runs()
lines = [line for line in service.stop() if "no symbols beyond .dynsym" not in line]
check(runs == {"ok": 1, "failed": 0}, f"indexer runs as nobody: {runs}; stderr {lines}")
check(not os.listdir(root_cache), f"nobody wrote root's cache: {os.listdir(root_cache)}")
check(len(lines) == 1 and root_cache in lines[0] and "not writable" in lines[0],
      f"the fallback is not said once: {lines}")
fallback = lines[0].rsplit(" go to ", 1)[-1]
check(fallback.startswith("/tmp/heapkit-cache-"), f"fallback {fallback!r}")
status = os.stat(fallback)
check(status.st_uid == 65534 and status.st_mode & 0o777 == 0o700,
      f"{fallback}: uid {status.st_uid}, mode {status.st_mode & 0o777:o}")
check(os.listdir(os.path.join(fallback, "index-2")), f"no index in {fallback}")
_, samples, mappings = pprof_raw(profile)
check(any("(anonymous namespace)::open_sessions()" in s["frames"] for s in samples),
      "open_sessions not named")
check_names_like_llvm(samples, mappings, SERVICE)

# 2. An indexer that cannot run: one line on stderr, saying which and why. The fallback is
# emptied, not removed: its indexes would spare the indexer, and the directory itself is
# to be used again.
for entry in os.scandir(fallback):
    shutil.rmtree(entry.path) if entry.is_dir(follow_symlinks=False) else os.unlink(entry.path)
missing = os.path.join(directory, "no-such-indexer")
service = start(missing)
service.get("/debug/pprof/heap")
service.get("/debug/pprof/heap")
runs = service.indexer_runs()
service_lines = service.stop()
lines = [line for line in service_lines
         if "address indexes go to" not in line and "no symbols beyond .dynsym" not in line]
check(runs == {"ok": 0, "failed": 1}, f"missing indexer: {runs}")
# The second start used the first one's fallback again: one directory for nobody, however
# many times the service starts (issue 45, item 14).
check(set(glob.glob("/tmp/heapkit-cache-*")) - made_before <= {fallback},
      f"a second start made another fallback: {set(glob.glob('/tmp/heapkit-cache-*')) - made_before}")
again = [line for line in service_lines if "address indexes go to" in line]
check(again and again[0].endswith(" go to " + fallback), f"the second start fell back to {again}")
check(len(lines) == 1 and missing in lines[0] and "No such file" in lines[0],
      f"the failing indexer is not said once with why: {lines}")
print("ok")
