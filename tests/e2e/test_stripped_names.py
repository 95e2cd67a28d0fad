# SPDX-License-Identifier: MIT
"""Frames no name reaches take their function's identity from the file's call-frame
information (.eh_frame), which stripped files keep: "<file>!0x<function start>", one frame
per function in folded text, the SVG and pprof. Where to get the debug file is said, and
the debuginfod route works: a real debuginfod, started here on loopback in a network
namespace of its own, serving a directory of debug files."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from heapkit_e2e import (check, elf_vaddr, fixture, go_pprof, heapfold,
                         run, run_fixture, tool, workdir)

# The whole test runs in a network namespace with only loopback, so that the debuginfod
# it starts listens nowhere else. Root (as the suite runs in CI) can make one.
if os.environ.get("HEAPKIT_NETNS") != "1":
    if shutil.which("debuginfod") is None:
        print("SKIP debuginfod part: no debuginfod server (Debian package debuginfod); the rest runs")
    elif shutil.which("unshare") and os.geteuid() == 0 and shutil.which("ip"):
        env = dict(os.environ, HEAPKIT_NETNS="1")
        proc = subprocess.run(["unshare", "--net", "--", sys.executable, __file__], env=env,
                              timeout=120)
        sys.exit(proc.returncode)
    else:
        print("SKIP debuginfod part: not root, or no unshare (util-linux) or ip (iproute2) for the "
              "server's network namespace; the rest runs")
else:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

directory = workdir()
name = "stripped_app"
app = os.path.join(directory, name)
shutil.copy(fixture("alloc_c_pie"), app)
debug_dir = os.path.join(directory, "debug-files")
os.makedirs(debug_dir)
run(["objcopy", "--only-keep-debug", app, os.path.join(debug_dir, name + ".debug")])
run(["strip", "--strip-all", app])
check("no symbols" in run(["nm", app], check=False).stderr, "the copy still has a symbol table")

# Ground truth: where each function starts, from the unstripped build's symbol table.
starts = {}
for line in run(["nm", "--defined-only", fixture("alloc_c_pie")]).stdout.splitlines():
    address, kind, symbol = line.split()
    if kind in "Tt":
        starts[symbol] = int(address, 16)
expected = {symbol: f"{name}!0x{start:x}" for symbol, start in starts.items()}

dump = run_fixture(app, directory)
stacks = heapfold(dump)
frames = {frame for stack in stacks for frame in stack.split(";")}
anonymous = {frame for frame in frames if frame.startswith(name + "!")}
check(anonymous, f"no frame of {name} spelled as its function: {list(stacks)}")
check(anonymous <= set(expected.values()),
      f"identities {anonymous - set(expected.values())} are no function starts of {name}")
for function in ("main", "hold_pages", "keep_zeroed"):
    check(expected[function] in frames, f"{function} not shown as {expected[function]}: {frames}")
check(not any(re.search(rf"{name}\+0x", frame) for frame in frames),
      f"a frame of {name} is still an address: {frames}")

# main calls each allocating function from its own place: several return addresses, one
# frame. (--frame address shows the addresses apart.)
main_start, main_size = (int(field, 16) for field in re.search(
    r"^([0-9a-f]+) ([0-9a-f]+) T main$", run(["nm", "-S", fixture("alloc_c_pie")]).stdout,
    re.M).groups())
by_address = heapfold("--frame", "address", dump)
main_addresses = set()
for frame in {frame for stack in by_address for frame in stack.split(";")}:
    if frame.startswith(name + "+0x"):
        vaddr = elf_vaddr(app, int(frame.split("+")[1], 16))
        if main_start <= vaddr < main_start + main_size:
            main_addresses.add(frame)
check(len(main_addresses) >= 2, f"main's call sites not apart by address: {main_addresses}")
callers = [stack.split(";") for stack in stacks if "__libc_start_call_main" in stack]
below = {frames[frames.index("__libc_start_call_main") + 1] for frames in callers}
check(len(callers) >= 2 and below == {expected["main"]},
      f"main is not one frame in every stack: {list(stacks)}")

# The same identities in the SVG and in pprof (go tool pprof, the real consumer).
svg = run([tool("heapfold"), "--svg", dump]).stdout
check(expected["hold_pages"] in svg and expected["main"] in svg,
      "the SVG does not carry the functions' identities")
pprof = os.path.join(directory, "out.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", pprof])
top = go_pprof("-top", "-nodecount=100", pprof).stdout
check(expected["hold_pages"] in top and expected["main"] in top,
      f"go tool pprof does not show the identities: {top}")
check(len(re.findall(re.escape(expected["main"]) + r"$", top, re.M)) == 1,
      f"main is not one function in pprof: {top}")

# The warning: one summary line naming the file, its share and where a debug file is;
# under --verbose, what the file lacks, how the frames are shown.
quiet_env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
err = run([tool("heapfold"), dump], env=quiet_env).stderr
check(not [line for line in err.splitlines() if line.startswith(f"heapfold: warning: {app}:")],
      f"a line of {app}'s own without --verbose: {err!r}")
summary = [line for line in err.splitlines() if "without debug information" in line]
check(len(summary) == 1 and re.search(rf"information \((\S+, )*{name}[,)]", summary[0])
      and "DEBUGINFOD_URLS=" in summary[0] and "--debug-dir" in summary[0],
      f"unexpected summary: {err!r}")
err = run([tool("heapfold"), "--verbose", dump], env=quiet_env).stderr
lines = [line for line in err.splitlines()
         if line.startswith(f"heapfold: warning: {app}:") and ": no name at " not in line]
check(len(lines) == 1, f"not one warning line for {app}: {err!r}")
check("no symbol table" in lines[0] and f"shown as {name}!0x<start of their function>" in lines[0]
      and "DEBUGINFOD_URLS=" in lines[0], f"unexpected warning: {lines[0]!r}")

if os.environ.get("HEAPKIT_NETNS") == "1":
    # A real debuginfod serving the directory of debug files, on a free loopback port.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(["debuginfod", "-F", debug_dir, "-p", str(port), "-d",
                               os.path.join(directory, "debuginfod.sqlite"), "-t", "0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        build_id = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", app]).stdout).group(1)
        url = f"http://127.0.0.1:{port}"
        served = False
        for _ in range(200):  # up to 20 s for the server to start and scan the directory
            try:
                with urllib.request.urlopen(f"{url}/buildid/{build_id}/debuginfo", timeout=2) as r:
                    served = r.status == 200
                    break
            except OSError:
                time.sleep(0.1)
        check(served, f"debuginfod did not serve the debug file of {build_id}")
        env = dict(os.environ, DEBUGINFOD_URLS=url,
                   DEBUGINFOD_CACHE_PATH=os.path.join(directory, "debuginfod-cache"),
                   DEBUGINFOD_TIMEOUT="10")
        proc = run([tool("heapfold"), dump], env=env)
        named = {frame for line in proc.stdout.splitlines()
                 for frame in line.rpartition(" ")[0].split(";")}
        for function in ("main", "hold_pages", "keep_zeroed"):
            check(function in named, f"{function} not named through debuginfod: {named}")
        check(not any(frame.startswith(name + "!") for frame in named),
              f"frames still unnamed with debuginfod: {named}")
        check(f"{app}:" not in proc.stderr and not re.search(rf"[(, ]{name}[,)]", proc.stderr),
              f"still warned about {app}: {proc.stderr!r}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
print("ok")
