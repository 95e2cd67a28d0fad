# SPDX-License-Identifier: MIT
"""bash completion (cmd/completion/heapkit.bash), loaded over the bash-completion package's
helpers, offers each tool's flags as its --help lists them (no more, no less), the values
the tools accept for --sample, --frame, --colors and --compress-level (the lists in --help,
each value accepted by the tool), directories or files where a path is wanted, and, after
disable_aslr, the completion of the program it runs."""

import os
import re
import sys

from heapkit_e2e import BASH_COMPLETION, SOURCE_DIR, check, complete, run, tool, workdir

if not os.path.exists(BASH_COMPLETION):
    print(f"SKIP: {BASH_COMPLETION} is absent (install bash-completion)")
    sys.exit(77)
script = os.path.join(os.path.dirname(os.path.abspath(SOURCE_DIR)), "cmd", "completion",
                      "heapkit.bash")
env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(tool("heapfold")),
                                            os.environ.get("PATH", "")]))


def offered(*words, cwd=None):
    return complete(script, *words, cwd=cwd, env=env)


def help_flags(text):
    """Every flag in --help's option column ("  -o,--output FILE   ...")."""
    flags = set()
    for match in re.finditer(r"^ {2}(-[^\s]+)", text, re.M):
        flags.update(match.group(1).split(","))
    return flags


def help_values(text, flag):
    """The values --help lists for `flag`: "--sample TYPE   what: a (default), b, c"."""
    line = next(l for l in text.splitlines() if re.match(rf"^ {{2}}{flag}\s", l))
    listed = re.split(r"\s{2,}", line.strip(), maxsplit=1)[1].split(": ", 1)[1]
    return sorted(value.split()[0] for value in listed.split(", "))


def accepted(name, flag, value):
    """Whether the tool takes `flag value`: it goes on to complain about the dump instead.
    heapfold's flame graph options need --svg."""
    svg = ["--svg"] if name == "heapfold" else []
    proc = run([tool(name), *svg, flag, value, "/nonexistent/dump.heap"], check=False)
    return proc.returncode == 1 and "/nonexistent/dump.heap" in proc.stderr


# The case the issue names: heapfold --sam<TAB>, heapfold --sample <TAB>.
check(offered("heapfold", "--sam") == ["--sample"], f"--sam: {offered('heapfold', '--sam')}")
samples = ["alloc_objects", "alloc_space", "byte_seconds", "cross_thread_objects",
           "cross_thread_space", "fragmentation_objects", "fragmentation_space", "inuse_objects",
           "inuse_space", "temporary_objects", "temporary_space"]
check(offered("heapfold", "--sample", "") == samples,
      f"--sample: {offered('heapfold', '--sample', '')}")
check(offered("jeprof2pprof", "--sample", "inuse_") == ["inuse_objects", "inuse_space"],
      "jeprof2pprof --sample inuse_")
check(offered("heapfold", "--sample", "=", "alloc_s") == ["alloc_space"], "--sample=alloc_s")

for name in ("jeprof2pprof", "heapfold"):
    help_text = run([tool(name), "--help"]).stdout
    listed, flags = help_flags(help_text), set(offered(name, "-"))
    check(listed == flags, f"{name}: in --help only: {sorted(listed - flags)}; "
                           f"completed only: {sorted(flags - listed)}")
    value_flags = {"--sample": samples}
    if name == "heapfold":
        value_flags["--frame"] = offered(name, "--frame", "")
        value_flags["--colors"] = offered(name, "--colors", "")
    for flag, values in value_flags.items():
        check(values == help_values(help_text, flag),
              f"{name} {flag}: completed {values}, --help lists {help_values(help_text, flag)}")
        for value in values:
            check(accepted(name, flag, value), f"{name} does not take {flag} {value}")
    # --sample's names are checked once the profile is read (a pprof names its own types):
    # test_bad_inputs refuses --sample bogus, test_pprof_input a type a pprof lacks.

levels = offered("jeprof2pprof", "--compress-level", "")
check(levels == [str(n) for n in range(10)], f"--compress-level: {levels}")
check(all(accepted("jeprof2pprof", "--compress-level", n) for n in levels) and
      not accepted("jeprof2pprof", "--compress-level", "10"), "compress levels 0-9 accepted")

# Paths: any file for the dumps and -o, directories only for --sysroot and --debug-dir.
work = workdir()
os.mkdir(os.path.join(work, "rootfs"))
for name in ("jeprof.1.0.f.heap", "old.heap.gz"):
    open(os.path.join(work, name), "w").close()
check(offered("heapfold", "", cwd=work) == ["jeprof.1.0.f.heap", "old.heap.gz", "rootfs"],
      f"dumps: {offered('heapfold', '', cwd=work)}")
check(offered("jeprof2pprof", "--base", "old", cwd=work) == ["old.heap.gz"], "--base old")
check(offered("heapfold", "--sysroot", "", cwd=work) == ["rootfs"], "--sysroot")
check(offered("heapfold", "--focus", "", cwd=work) == [], "--focus takes a regex, not a file")

# disable_aslr: its own flags, the program's name, then that program's completion.
aslr_help = run([tool("disable_aslr"), "--help"]).stdout
aslr_flags = set(re.findall(r"(?<![\w-])--[a-z]*", aslr_help))
check(set(offered("disable_aslr", "-")) == aslr_flags,
      f"disable_aslr: {offered('disable_aslr', '-')} against --help's {sorted(aslr_flags)}")
check("heapfold" in offered("disable_aslr", "heapf"), "disable_aslr heapf")
check(offered("disable_aslr", "heapfold", "--sam") == ["--sample"], "disable_aslr heapfold --sam")
check(offered("disable_aslr", "--", "heapfold", "--sample", "alloc_") ==
      ["alloc_objects", "alloc_space"], "disable_aslr -- heapfold --sample alloc_")
# jestat: its flags as --help lists them; files for the statistics and every option.
jestat_help = run([tool("jestat"), "--help"]).stdout
check(set(offered("jestat", "-")) == help_flags(jestat_help),
      f"jestat: {offered('jestat', '-')} against --help's {sorted(help_flags(jestat_help))}")
check(offered("jestat", "--smaps", "old", cwd=work) == ["old.heap.gz"], "jestat --smaps old")
# heapkit-index: its flags as --help lists them; directories for the directory options.
index_help = run([tool("heapkit-index"), "--help"]).stdout
check(set(offered("heapkit-index", "-")) == help_flags(index_help),
      f"heapkit-index: {offered('heapkit-index', '-')} against --help's "
      f"{sorted(help_flags(index_help))}")
print("ok")
