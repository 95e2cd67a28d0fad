# SPDX-License-Identifier: MIT
"""An -O2 C++ fixture with always_inline helpers, a linked shared library and a dlopen'ed
plugin: every frame's name, file and line agree with the source markers and with
llvm-symbolizer, and go tool pprof shows the inline chain."""

import os

from heapkit_e2e import (check, check_near, elf_vaddr, fixture, go_pprof, heapfold, llvm_frames,
                         mapping_ranges, marker_line, pprof_raw, run, run_fixture, sum_where,
                         tool, workdir)

directory = workdir()
plugin = fixture("libplugin_fixture.so")
dump = run_fixture(fixture("inline_cpp"), directory, args=[plugin])
src = "inline_cpp.cpp"

# Inline chain with the line executing in each function, from the markers.
chain = (f"geometry::build_grids() ({src}:{marker_line(src, 'build_grids')});"
         f"geometry::Grid<double>::allocate(unsigned long) ({src}:{marker_line(src, 'allocate')})_[i];"
         f"geometry::Grid<double>::raw_cells(unsigned long) ({src}:{marker_line(src, 'raw_cells')})_[i]")
lines = heapfold("--frame", "function+line", "--annotate-inline", dump)
check_near(sum(v for s, v in lines.items() if s.endswith(chain)), 200 * 8192,
           f"inline chain {chain}\nin {list(lines)}")

stacks = heapfold(dump)
check_near(sum_where(stacks, lambda f: f[-3:] == ["geometry::build_grids()",
                                                    "geometry::Grid<double>::allocate(unsigned long)",
                                                    "geometry::Grid<double>::raw_cells(unsigned long)"]),
           200 * 8192, "inline frames expanded in the default style")
check_near(sum_where(stacks, lambda f: f[-1] == "shared_block"), 100 * 4096,
           "shared_block in the linked library")
check_near(sum_where(stacks, lambda f: f[-1] == "plugin_keep"), 50 * 16384,
           "plugin_keep in the dlopen'ed plugin")
check(any(s.endswith("main;geometry::build_grids()") for s in stacks),
      f"build_grids' own allocation missing: {list(stacks)}")

# Every named location agrees with llvm-symbolizer, level by level.
out = os.path.join(directory, "inline.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", out])
_, samples, mappings = pprof_raw(out)
ranges = mapping_ranges(mappings)
ours_modules = {fixture("inline_cpp"), fixture("libshared_fixture.so"), plugin}
compared = 0
for sample in samples:
    for address, mapping_id, ours in sample["locations"]:
        start, _, offset, path = ranges.get(mapping_id, (0, 0, 0, ""))
        if os.path.realpath(path) not in {os.path.realpath(m) for m in ours_modules}:
            continue
        theirs = llvm_frames(path, elf_vaddr(path, address - start + offset))
        got = [(name, os.path.basename(file), int(line)) for name, file, line in ours]
        want = [(name, os.path.basename(file).replace("??", ""), line) for name, file, line in theirs]
        check(got == want, f"{path}+{address - start + offset:#x}: heapkit {got}\nllvm {want}")
        compared += 1
check(compared >= 6, f"only {compared} locations compared with llvm-symbolizer")

traces = go_pprof("-traces", "-lines", "-symbolize=none", out).stdout
check(f"geometry::Grid<double>::raw_cells {os.path.join(os.environ['HEAPKIT_SOURCE_DIR'], 'fixtures', src)}"
      in traces.replace("/../", "/") or f"{src}:{marker_line(src, 'raw_cells')}" in traces,
      f"go tool pprof -traces -lines lacks the inline frame with its line:\n{traces[:2000]}")
check("(inline)" in traces, "go tool pprof does not mark inlined frames")
print("ok")
