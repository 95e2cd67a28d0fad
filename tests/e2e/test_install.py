# SPDX-License-Identifier: MIT
"""meson install puts the tools, the library, the agent, its headers, pkg-config file, man pages and
bash completions (where bash-completion's loader finds them) under the prefix; only the
front door and the types it exposes are installed (and no libiberty function exported), each
header compiles on its own, and a program built with `pkg-config --cflags --libs heapkit`
alone goes dump -> pprof and dump -> folded through the front door."""

import os
import re
import subprocess

from heapkit_e2e import (BASH_COMPLETION, check, completion_loaded, fixture, go_pprof,
                         parse_folded, run, run_fixture, workdir)

build = os.environ["HEAPKIT_BUILD_ROOT"]
destdir = workdir()
run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", destdir])
prefix = destdir + run(["meson", "introspect", "--buildoptions", build]).stdout.split(
    '"name": "prefix", "value": "')[1].split('"')[0]

found = {os.path.relpath(os.path.join(d, f), prefix) for d, _, fs in os.walk(prefix) for f in fs}
for tool in ("jeprof2pprof", "heapfold", "disable_aslr", "jestat", "heapkit-index"):
    check(f"bin/{tool}" in found, f"bin/{tool} not installed: {sorted(found)}")
    check(f"share/man/man1/{tool}.1" in found, f"man page of {tool} not installed")
    check(f"share/bash-completion/completions/{tool}" in found,
          f"bash completion of {tool} not installed: {sorted(found)}")
    if os.path.exists(BASH_COMPLETION):
        check(completion_loaded(os.path.join(prefix, "share"), tool),
              f"bash-completion's loader does not find {tool}'s completion under {prefix}")
check(any(f.startswith("lib") and "/libheapkit.so" in f for f in found), "libheapkit not installed")
# The preloadable agent, at a path of its own under the library directory, and its page.
# A sanitizer build has no agent (its runtime must come first in a process): meson's
# environment says so with an empty HEAPKIT_AGENT_SO.
if os.environ.get("HEAPKIT_AGENT_SO"):
    for library in ("libheapkit-agent.so", "libheapkit-agent-core.so"):
        check(any(f.startswith("lib") and f.endswith("/heapkit/" + library) for f in found),
              f"{library} not installed: {sorted(found)}")
else:
    print("skipping the agent's install check: this build has no agent (sanitizers)")
check("share/man/man7/heapkit-agent.7" in found, "heapkit-agent(7) not installed")
# libiberty is linked in for its demangler; its functions are not libheapkit's to export.
library = next(os.path.join(prefix, f) for f in found
               if f.startswith("lib") and os.path.basename(f).startswith("libheapkit.so.")
               and not os.path.islink(os.path.join(prefix, f)))
exported = run(["nm", "-D", "--defined-only", library]).stdout.split()
leaked = [name for name in ("cplus_demangle", "rust_demangle", "xmalloc", "xexit") if name in exported]
check(not leaked, f"libheapkit exports libiberty's functions: {leaked}")
check(any(f.endswith("pkgconfig/heapkit.pc") for f in found), "heapkit.pc not installed")
headers = sorted(f for f in found if f.startswith("include/heapkit/"))
check("include/heapkit/heapkit.hpp" in headers, f"headers: {headers}")
# libheapkit's API: the front door and the stages' public faces it includes, and the stats
# stage's (jestat's call); the runtime's headers are another library's.
core = [h for h in headers if not h.startswith("include/heapkit/runtime/")]
check(len(core) <= 13, f"{len(core)} libheapkit headers installed, at most 13 wanted: {core}")

# Every installed header compiles alone against the installed tree.
include = os.path.join(prefix, "include")
for header in headers:
    source = f'#include "{os.path.relpath(os.path.join(prefix, header), include)}"\nint main() {{}}\n'
    proc = subprocess.run(["c++", "-std=c++20", "-fsyntax-only", "-I", include, "-x", "c++", "-"],
                          input=source, capture_output=True, text=True)
    check(proc.returncode == 0, f"{header} does not compile alone:\n{proc.stderr}")

# The tools are built on the installed API alone, as any program would be: every library
# header cmd/ includes is one of those installed.
cmd = os.path.join(os.path.dirname(os.environ["HEAPKIT_SOURCE_DIR"]), "cmd")
for directory, _, names in os.walk(cmd):
    for name in (n for n in names if n.endswith((".cpp", ".hpp"))):
        with open(os.path.join(directory, name)) as f:
            for included in re.findall(r'#include "(heapkit/[^"]+)"', f.read()):
                check(f"include/{included}" in headers,
                      f"{os.path.relpath(os.path.join(directory, name), cmd)} includes "
                      f"{included}, which is not installed: {headers}")

# A program that knows only the installed tree.
FRONT_DOOR_USER = r"""
#include <heapkit/heapkit.hpp>
#include <cstdio>

int main(int argc, char** argv) {
    heapkit::Input input{argv[1], std::nullopt};
    heapkit::LoadOptions options;
    options.sample = heapkit::SampleType::alloc_space;
    auto loaded = heapkit::load_profile({&input, 1}, options);
    if (!loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
        return 1;
    }
    heapkit::PprofOptions pprof;
    pprof.default_type = options.sample;
    auto ok = heapkit::write_output(argv[2], true, [&](const heapkit::Sink& sink) {
        auto bytes = heapkit::write_pprof(loaded->profile, pprof);
        return bytes ? sink(*bytes) : tl::unexpected(bytes.error());
    });
    heapkit::FoldedOptions folded;
    folded.sample = options.sample;
    auto text = heapkit::write_folded(loaded->profile, folded);
    if (!ok || !text) {
        return 1;
    }
    std::fputs(text->c_str(), stdout);
    // The tools' one call: the same dump through the views, as a table to stderr.
    heapkit::ViewRequest request;
    request.inputs = {input};
    request.load = options;
    auto views = heapkit::load_views(request);
    heapkit::ViewOptions table;
    table.kind = heapkit::ViewKind::text;
    table.folded = folded;
    auto shown = views ? heapkit::write_view(std::move(*views), table, [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stderr);
        return heapkit::Result<void>{};
    }) : tl::unexpected(views.error());
    return shown ? 0 : 1;
}
"""
pc_dirs = sorted({os.path.dirname(os.path.join(prefix, f)) for f in found if f.endswith(".pc")})
env = dict(os.environ, PKG_CONFIG_PATH=":".join(pc_dirs))
flags = run(["pkg-config", f"--define-variable=prefix={prefix}", "--cflags", "--libs", "heapkit"],
            env=env).stdout
check(include in flags, f"pkg-config does not point into the installed tree: {flags}")
work = workdir()
source = os.path.join(work, "user.cpp")
with open(source, "w") as f:
    f.write(FRONT_DOOR_USER)
program = os.path.join(work, "user")
# A sanitizer build installs instrumented libraries: their runtime must come with the
# program, as the tools link it.
sanitized = "libasan" in run(["ldd", os.path.join(build, "cmd", "heapfold")]).stdout
sanitize = ["-fsanitize=address,undefined"] if sanitized else []
run(["c++", "-std=c++20", *sanitize, source, "-o", program, *flags.split()])
libdirs = [a[2:] for a in flags.split() if a.startswith("-L")]
dump = run_fixture(fixture("alloc_c_pie"), work)
pb = os.path.join(work, "out.pb.gz")
proc = run([program, dump, pb], env=dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs)))
folded = {stack.rpartition("main;")[2]: value for stack, value in parse_folded(proc.stdout).items()}
check(folded.get("hold_pages") == 4096000 and folded.get("churn_small") == 256000,
      f"folded output through the front door: {proc.stdout!r}")
table = {line.split()[-1]: line.split()[0] for line in proc.stderr.splitlines()[2:]}
check(table.get("hold_pages") == "3.91MB" and table.get("churn_small") == "250.00kB",
      f"the table through load_views and write_view: {proc.stderr!r}")
top = go_pprof("-top", "-sample_index=alloc_space", pb).stdout
check("hold_pages" in top and "churn_small" in top, f"go tool pprof -top: {top}")
print("ok")
