# SPDX-License-Identifier: MIT
"""The bad-input catalog: each case's message (with file:line where there is one), exit
status, and no output file left behind; damaged binaries and DWARF are warnings, never
crashes. Runs under the sanitizer build in CI as well."""

import os
import re
import shutil

from heapkit_e2e import check, fixture, run, run_fixture, tool, workdir, write_file

directory = workdir()
real_dump = run_fixture(fixture("alloc_c_pie"), directory)
with open(real_dump) as f:
    REAL = f.read()
HEAD = "heap_v2/1\n  t*: 1: 4096 [1: 4096]\n"
MAPS = "\nMAPPED_LIBRARIES:\n555500001000-555500002000 r-xp 00001000 fe:00 1  /nonexistent/app\n"


def write(name, data):
    return write_file(directory, name, data)


def fails(path, pattern, *flags):
    """Both tools reject `path` with exit 1, a message matching `pattern`, no output."""
    for name in ("heapfold", "jeprof2pprof"):
        out = os.path.join(directory, f"{name}.out")
        if os.path.exists(out):
            os.remove(out)  # left by an earlier case that succeeded
        proc = run([tool(name), *flags, path, "-o", out], check=False)
        check(proc.returncode == 1, f"{name} {path}: exit {proc.returncode}: {proc.stderr[-500:]!r}")
        check(re.search(pattern, proc.stderr), f"{name} {path}: {proc.stderr[-500:]!r} !~ {pattern!r}")
        check(not os.path.exists(out), f"{name} {path}: output left behind")
        check(not [f for f in os.listdir(directory) if ".tmp." in f], "temporary file left")


def succeeds(path, *flags):
    """Both tools accept `path` (exit 0) and write their output; returns heapfold's."""
    for name in ("jeprof2pprof", "heapfold"):
        out = os.path.join(directory, f"{name}.out")
        proc = run([tool(name), *flags, path, "-o", out], check=False)
        check(proc.returncode == 0, f"{name} {path}: exit {proc.returncode}: {proc.stderr[-500:]!r}")
        check(os.path.getsize(out) > 0 or name == "heapfold", f"{name} {path}: empty output")
    with open(os.path.join(directory, "heapfold.out")) as f:
        return f.read(), proc.stderr


fails(write("nul.heap", HEAD + "@ 0x1\0 0x2\n"), r"nul\.heap:3: NUL byte")
fails(write("version.heap", "heap_v3/1\n" + HEAD[10:]), r"version\.heap:1: unsupported heap profile header")
fails(write("huge.heap", HEAD + "@ 0x1\n  t*: 9223372036854775808: 1 [0: 0]\n" + MAPS),
      r"huge\.heap:4: expected a non-negative integer below 2\^63")
fails(write("maps_garbage.heap", HEAD + "@ 0x1\n  t*: 1: 4096 [1: 4096]\n\nMAPPED_LIBRARIES:\nzzz\n"),
      r"maps_garbage\.heap:7: expected a maps line")

# pprof profiles: one heapkit wrote, cut short (plain and gzipped); one whose sample type
# names string 5 of a table of 2; a sample naming a location that is not there.
import gzip  # noqa: E402
run([tool("jeprof2pprof"), real_dump, "-o", os.path.join(directory, "real.pb.gz")])
with open(os.path.join(directory, "real.pb.gz"), "rb") as f:
    PPROF = gzip.decompress(f.read())
fails(write("cut.pb", PPROF[:len(PPROF) // 2]), r"cut\.pb: not a pprof profile: its protobuf "
      r"encoding is damaged or cut short")
fails(write("cut.pb.gz", gzip.compress(PPROF[:len(PPROF) - 3])), r"cut\.pb\.gz: not a pprof")
TABLE = b"\x32\x00\x32\x01x"  # string_table: "", "x"
fails(write("bad_string.pb", b"\x0a\x04\x08\x05\x10\x01" + TABLE),
      r"bad_string\.pb: sample type: string index 5 is outside the string table \(2 strings\)")
fails(write("bad_location.pb", b"\x0a\x04\x08\x01\x10\x01\x12\x05\x0a\x01\x07\x10\x01" + TABLE),
      r"bad_location\.pb: no location has id 7")

# Truncated at every line and in the middle of every line: either still a valid dump
# (cut at a line boundary of the maps section) or an error naming its line.
lines = REAL.splitlines(keepends=True)
maps_at = next(i for i, line in enumerate(lines) if line.startswith("MAPPED_LIBRARIES"))
for i, line in enumerate(lines[:maps_at + 3]):
    for cut in (0, len(line) // 2):
        text = "".join(lines[:i]) + line[:cut]
        if i == 0 and cut == 0:
            continue  # the empty file, below
        path = write("cut.heap", text)
        proc = run([tool("heapfold"), "--no-symbolize", path], check=False)
        accepted = i > maps_at and proc.returncode == 0
        check(accepted or (proc.returncode == 1 and re.search(r"cut\.heap:\d+: ", proc.stderr)),
              f"cut at line {i + 1} char {cut}: exit {proc.returncode} {proc.stderr!r}")
fails(write("empty.heap", ""), r"empty\.heap: empty file")

# A one-million-frame stack is accepted; so are addresses outside every mapping.
frames = " ".join(f"0x{0x7000000000 + 16 * i:x}" for i in range(1_000_000))
out, _ = succeeds(write("deep.heap", HEAD + f"@ {frames}\n  t*: 1: 4096 [1: 4096]\n" + MAPS),
                  "--no-symbolize", "--keep-allocator-frames")
check(out.count(";") == 999_999 and out.endswith(" 4096\n"), "deep stack not printed whole")
# The root is the last address written, moved back by one as a return address.
root = f"0x{0x7000000000 + 16 * 999_999 - 1:x};"
check(out.startswith(root), f"outside-mapping frames not bare addresses: {out[:40]} vs {root}")

# A 100 MB line fails fast, at its line, without echoing it.
fails(write("long_line.heap", HEAD + "x" * 100_000_000 + "\n"), r"long_line\.heap:3: ")
os.remove(os.path.join(directory, "long_line.heap"))

# Binaries that are not what the dump says: warnings, names left out, exit 0.
app = os.path.join(directory, "app")
shutil.copy(fixture("alloc_c_pie"), app)
dump = run_fixture(app, directory)
with open(app, "w") as f:
    f.write("not an ELF file\n")
_, err = succeeds(dump)
check(f"{app}: cannot open" in err, f"non-ELF binary: {err!r}")

foreign = os.path.join(directory, "foreign.so")
shutil.copy(os.environ["HEAPKIT_JEMALLOC_SO"], foreign)
with open(foreign, "r+b") as f:
    f.seek(18)
    f.write((183).to_bytes(2, "little"))  # EM_AARCH64
shutil.copy(fixture("alloc_c_pie"), app)
_, err = succeeds(dump, "--path-map", f"{os.environ['HEAPKIT_JEMALLOC_SO']}={foreign}")
check("built for another architecture" in err, f"foreign ELF not refused: {err!r}")

# Damaged DWARF: the middle of .debug_info overwritten. Names may be lost, nothing crashes.
sections = run(["readelf", "-SW", app]).stdout
match = re.search(r"\.debug_info\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", sections)
offset, size = int(match.group(1), 16), int(match.group(2), 16)
with open(app, "r+b") as f:
    f.seek(offset + size // 4)
    f.write(bytes((i * 37 + 11) % 256 for i in range(size // 2)))
succeeds(dump)
check(run([tool("heapfold"), "--frame", "function+line", dump], check=False).returncode == 0,
      "damaged DWARF with --frame function+line")
with open(app, "r+b") as f:
    f.truncate(offset + size // 2)  # and cut off mid-section
succeeds(dump)
print("ok")
