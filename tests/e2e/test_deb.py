# SPDX-License-Identifier: MIT
"""`dpkg-buildpackage -b -us -uc` builds the Debian packages from a clean copy of the source
tree (what git holds, as in a fresh clone); lintian finds no error in them; they hold the
tools, man pages, bash completions, the agent, both libraries, the headers and the pkg-config files,
named after the SONAMEs and depending on the packages of every library the binaries load
and of every header and pkg-config module the -dev files name. Unpacked into a scratch
root (dpkg -x), the installed tools run and fold a real dump, man renders their pages,
bash-completion's loader finds the completions, and a program compiled with pkg-config
against the -dev files alone folds the dump through the front door and reads telemetry
through the runtime library."""

import glob
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

from heapkit_e2e import (BASH_COMPLETION, JEMALLOC_SO, SOURCE_DIR, check, completion_loaded, fixture,
                         leaf_is, parse_folded, run, run_fixture, sum_where, workdir)

TOOLS = ("jeprof2pprof", "heapfold", "disable_aslr", "jestat")
PACKAGES = ("heapkit", "libheapkit0", "libheapkit-dev")

for program in ("dpkg-buildpackage", "dh", "git"):
    if not shutil.which(program):
        print(f"SKIP: {program} is absent: the Debian packages cannot be built here "
              f"(tests/install-packages.sh installs debhelper and dpkg-dev)")
        sys.exit(77)
source = os.path.dirname(os.path.abspath(SOURCE_DIR))
if run(["git", "-C", source, "rev-parse", "--show-toplevel"], check=False).returncode != 0:
    print(f"SKIP: {source} is not a git checkout: no clean copy to build the packages from")
    sys.exit(77)


def long_run(args, log_path, **kwargs):
    """Runs a step of minutes with its output in `log_path`; fails with the log's end."""
    started = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.run(args, stdout=log, stderr=subprocess.STDOUT, timeout=1500,
                              **kwargs)
    with open(log_path) as log:
        text = log.read()
    check(proc.returncode == 0, f"{' '.join(args)} exited {proc.returncode}:\n{text[-6000:]}")
    return text, time.monotonic() - started


# A clean copy: the committed tree, with uncommitted edits to tracked files (git stash
# create makes a commit of them without touching the work tree), and nothing else.
work = workdir()
git_env = dict(os.environ, GIT_AUTHOR_NAME="test_deb", GIT_AUTHOR_EMAIL="test_deb@localhost",
               GIT_COMMITTER_NAME="test_deb", GIT_COMMITTER_EMAIL="test_deb@localhost")
# The index's file stamps first brought up to date (a copied tree's are stale, and stash
# create then exits 1, saying nothing).
run(["git", "-C", source, "update-index", "-q", "--refresh"], check=False)
snapshot = run(["git", "-C", source, "stash", "create"], env=git_env).stdout.strip() or "HEAD"
tree = os.path.join(work, "heapkit")
archive = subprocess.run(["git", "-C", source, "archive", "--prefix=heapkit/", snapshot],
                         capture_output=True, check=True).stdout
subprocess.run(["tar", "-x", "-C", work], input=archive, check=True)

# Not meson test's environment: its LD_LIBRARY_PATH (this build's libheapkit) would be what
# dpkg-shlibdeps finds first, and MALLOC_PERTURB_ only slows the compilers.
env = {k: v for k, v in os.environ.items()
       if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "MALLOC_PERTURB_")}
env["DEB_BUILD_OPTIONS"] = f"parallel={os.cpu_count() or 1}"
build_log, seconds = long_run(["dpkg-buildpackage", "-b", "-us", "-uc"],
                              os.path.join(work, "build.log"), cwd=tree, env=env)
print(f"dpkg-buildpackage -b -us -uc took {seconds:.0f} s")
warned = [l for l in build_log.splitlines() if l.startswith("dpkg-shlibdeps: warning")]
check(not warned, f"dpkg-shlibdeps: {warned}")

version = run(["dpkg-parsechangelog", "-S", "Version"], cwd=tree).stdout.strip()
project = run(["meson", "introspect", "--projectinfo", os.environ["HEAPKIT_BUILD_ROOT"]]).stdout
meson_version = re.search(r'"version": "([^"]+)"', project).group(1)
check(version == meson_version,
      f"debian/changelog says {version}, meson.build's project() {meson_version}")
arch = run(["dpkg-architecture", "-qDEB_HOST_ARCH"]).stdout.strip()
multiarch = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
debs = {name: os.path.join(work, f"{name}_{version}_{arch}.deb") for name in PACKAGES}
for name, path in debs.items():
    check(os.path.exists(path), f"{path} not built: {sorted(os.listdir(work))}")

# lintian: no error (its warnings are printed, for the record).
changes = os.path.join(work, f"heapkit_{version}_{arch}.changes")
if shutil.which("lintian"):
    lintian = subprocess.run(["lintian", "--display-info", changes],
                             capture_output=True, text=True, timeout=600)
    print(f"lintian:\n{lintian.stdout}{lintian.stderr}", end="")
    errors = [l for l in lintian.stdout.splitlines() if l.startswith("E: ")]
    check(not errors and lintian.returncode == 0, f"lintian errors: {errors}")
else:
    print("lintian is absent: its checks are skipped (tests/install-packages.sh installs it)")


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


def depends(deb):
    """{package: [version constraints]} of the Depends field."""
    result = {}
    for item in field(deb, "Depends").split(","):
        match = re.match(r"^\s*([^\s(]+)\s*(?:\((.*)\))?", item)
        result.setdefault(match.group(1).split(":")[0], []).append(match.group(2) or "")
    return result


def owner(path):
    """The Debian package that installed `path` on this machine, or None."""
    proc = run(["dpkg-query", "-S", path], check=False)
    return proc.stdout.split(":")[0].strip() if proc.returncode == 0 else None


# What each package holds, as paths under the root.
contents = {}
for name, deb in debs.items():
    listing = run(["dpkg-deb", "-c", deb]).stdout
    contents[name] = {line.split(None, 5)[5].split(" -> ")[0].lstrip(".")
                      for line in listing.splitlines()}
libdir = f"/usr/lib/{multiarch}"
wanted = {
    "heapkit": [f"/usr/bin/{t}" for t in TOOLS] +
               [f"/usr/share/man/man1/{t}.1.gz" for t in TOOLS] +
               [f"/usr/share/bash-completion/completions/{t}" for t in TOOLS] +
               [f"/usr/lib/{multiarch}/heapkit/libheapkit-agent.so",
                f"/usr/lib/{multiarch}/heapkit/libheapkit-agent-core.so",
                f"/usr/lib/{multiarch}/heapkit/libheapkit-fragmentation.so",
                "/usr/share/man/man7/heapkit-agent.7.gz"],
    "libheapkit0": [f"{libdir}/libheapkit.so.0", f"{libdir}/libheapkit-runtime.so.0",
                    f"{libdir}/libheapkit.so.{version}",
                    f"{libdir}/libheapkit-runtime.so.{version}"],
    "libheapkit-dev": [f"{libdir}/libheapkit.so", f"{libdir}/libheapkit-runtime.so",
                       f"{libdir}/pkgconfig/heapkit.pc", f"{libdir}/pkgconfig/heapkit-runtime.pc",
                       "/usr/include/heapkit/heapkit.hpp",
                       "/usr/include/heapkit/runtime/handler.hpp"],
}
for name, paths in wanted.items():
    for path in paths:
        check(path in contents[name], f"{name} lacks {path}: {sorted(contents[name])}")
headers = sorted(p for p in contents["libheapkit-dev"] if p.endswith(".hpp"))
# install_headers() in lib/: 21 (runtime/request.hpp, Request and Response, which
# handler.hpp includes; stats/options.hpp, jestat's call)
check(len(headers) == 21, f"{len(headers)} headers in libheapkit-dev: {headers}")

root = os.path.join(work, "root")
for deb in debs.values():
    run(["dpkg", "-x", deb, root])
lib_path = root + libdir

# The library package is named after the SONAMEs (both change with the version together).
for library in ("libheapkit", "libheapkit-runtime"):
    dynamic = run(["objdump", "-p", f"{lib_path}/{library}.so.{version}"]).stdout
    soname = re.search(r"SONAME\s+(\S+)", dynamic).group(1)
    check(soname == f"{library}.so.0", f"{library}'s SONAME is {soname}")

# Every library an ELF file loads comes from a package its package depends on.
ours = {"libheapkit.so.0": "libheapkit0", "libheapkit-runtime.so.0": "libheapkit0"}
for name, deb in debs.items():
    needs = depends(deb)
    for path in sorted(contents[name]):
        full = root + path
        if os.path.islink(full) or not os.path.isfile(full) or not (
                path.startswith("/usr/bin/") or ".so." in path or path.endswith(".so")):
            continue
        for soname in re.findall(r"NEEDED\s+(\S+)", run(["objdump", "-p", full]).stdout):
            package = ours.get(soname)
            if package is None:
                # dpkg knows a library by the path its package gave, /lib or /usr/lib.
                found = [f for d in (f"/lib/{multiarch}", libdir, "/lib64")
                         for f in glob.glob(f"{d}/{soname}")]
                found += [os.path.realpath(f) for f in found]
                package = next((p for p in map(owner, found) if p), None)
                check(package, f"{path} needs {soname}, which no package here installed")
            check(package == name or package in needs,
                  f"{path} ({name}) needs {soname} from {package}, not in Depends {needs}")
# The tools link libheapkit statically (cmd/static): heapkit needs libheapkit0 only where a
# file of it loads the library, and then the very version (no stable ABI).
needs_version = depends(debs["heapkit"]).get("libheapkit0")
check(needs_version in (None, [f"= {version}"]),
      f"heapkit's libheapkit0 dependency: {needs_version} (the exact version: no stable ABI)")

# Every header and pkg-config module the -dev files name comes from a Depends of it.
dev_needs = depends(debs["libheapkit-dev"])
check(dev_needs.get("libheapkit0") == [f"= {version}"], f"libheapkit-dev: {dev_needs}")
for header in headers:
    with open(root + header) as f:
        for include in re.findall(r"^#include <([^>]+)>", f.read(), re.M):
            package = owner(f"/usr/include/{include}")
            if package and package not in ("libc6-dev", "linux-libc-dev"):
                check(package in dev_needs,
                      f"{header} includes <{include}> from {package}, not in Depends {dev_needs}")
for pc in ("heapkit", "heapkit-runtime"):
    with open(f"{lib_path}/pkgconfig/{pc}.pc") as f:
        text = f.read()
    for line in re.findall(r"^Requires(?:\.private)?:(.*)$", text, re.M):
        for module in re.findall(r"([A-Za-z][\w.+-]*)(?:\s*[<>=]+\s*\S+)?", line):
            if module in ("heapkit", "heapkit-runtime"):
                continue
            pc_dir = run(["pkg-config", "--variable=pcfiledir", module]).stdout.strip()
            package = owner(os.path.join(pc_dir, f"{module}.pc"))
            check(package in dev_needs,
                  f"{pc}.pc requires {module} from {package}, not in Depends {dev_needs}")

# The installed tools, from the scratch root.
tool_env = dict(os.environ, LD_LIBRARY_PATH=lib_path)
for name in TOOLS:
    said = run([f"{root}/usr/bin/{name}", "--version"], env=tool_env).stdout
    check(said.strip() == f"{name} (heapkit) {meson_version}", f"{name} --version: {said!r}")
dump = run_fixture(fixture("alloc_c_pie"), work)
folded = parse_folded(run([f"{root}/usr/bin/heapfold", dump], env=tool_env).stdout)
check(sum_where(folded, leaf_is("hold_pages")) == 4096000, f"installed heapfold: {folded}")

for name in TOOLS:
    page = f"{root}/usr/share/man/man1/{name}.1.gz"
    rendered = run(["man", "-l", "-Tutf8", page], env=dict(os.environ, MANWIDTH="80")).stdout
    plain = re.sub(r".\x08", "", rendered)
    check("SYNOPSIS" in plain and name in plain and f"heapkit {meson_version}" in plain,
          f"man -l {page}: {plain[:400]!r}")
    if os.path.exists(BASH_COMPLETION):
        check(completion_loaded(f"{root}/usr/share", name),
              f"bash-completion's loader does not find {name}'s completion in the package")

# The agent as installed, in a program that knows nothing of it: it serves /metrics, and
# its page names where it is installed.
agent = f"{root}/usr/lib/{multiarch}/heapkit/libheapkit-agent.so"
host = subprocess.Popen([fixture("agent_host")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True,
                        env=dict(os.environ, LD_PRELOAD=f"{JEMALLOC_SO} {agent}",
                                 MALLOC_CONF="prof:true", HEAPKIT_LISTEN="127.0.0.1:0",
                                 HEAPKIT_START_DELAY_MS="0"))
try:
    said = host.stderr.readline()
    served = re.search(r"serving (http://\S+/)", said)
    check(served, f"the installed agent said {said!r}")
    with urllib.request.urlopen(served.group(1) + "metrics", timeout=30) as answer:
        check(b"heapkit_jemalloc_allocated_bytes" in answer.read(), "no jemalloc gauge")
finally:
    host.stdin.close()
    host.wait(timeout=30)
page = run(["man", "-l", "-Tutf8", f"{root}/usr/share/man/man7/heapkit-agent.7.gz"],
           env=dict(os.environ, MANWIDTH="120")).stdout
check(f"/usr/lib/{multiarch}/heapkit/libheapkit-agent.so" in re.sub(r".\x08", "", page),
      "heapkit-agent(7) does not name the installed agent")

# A program that knows only the -dev files, through pkg-config.
USER = r"""
#include <heapkit/heapkit.hpp>
#include <heapkit/runtime/telemetry.hpp>
#include <cstdio>

int main(int argc, char** argv) {
    heapkit::Input input{argv[1], std::nullopt};
    auto loaded = heapkit::load_profile({&input, 1}, {});
    if (!loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
        return 1;
    }
    auto text = heapkit::write_folded(loaded->profile, {});
    if (!text) {
        return 1;
    }
    std::fputs(text->c_str(), stdout);
    auto telemetry = heapkit::runtime::read_telemetry(nullptr);
    std::fprintf(stderr, "Rss %llu\n",
                 static_cast<unsigned long long>(telemetry.smaps_rollup["Rss"]));
}
"""
pc_env = dict(os.environ, PKG_CONFIG_PATH=f"{lib_path}/pkgconfig")
flags = run(["pkg-config", f"--define-variable=prefix={root}/usr", "--cflags", "--libs",
             "heapkit-runtime"], env=pc_env).stdout.split()
check(f"-I{root}/usr/include" in flags and f"-L{lib_path}" in flags,
      f"pkg-config does not point into the scratch root: {flags}")
user = os.path.join(work, "user.cpp")
with open(user, "w") as f:
    f.write(USER)
program = os.path.join(work, "user")
run(["c++", "-std=c++20", user, "-o", program, *flags])
proc = run([program, dump], env=tool_env)
check(sum_where(parse_folded(proc.stdout), leaf_is("hold_pages")) == 4096000,
      f"the -dev files' program folded: {proc.stdout!r}")
check(int(proc.stderr.split()[-1]) > 0, f"runtime telemetry: {proc.stderr!r}")
print("ok")
