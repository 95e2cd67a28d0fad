# SPDX-License-Identifier: MIT
"""The real flamegraph.pl reads heapfold's collapsed stacks (plain, --threads, and two dumps
diffed by difffolded.pl) as they are meant; and heapfold --svg draws the same frames as
flamegraph.pl does from those stacks: every frame wider than 0.5% of the total, with its
value, percentage and, in a differential graph, its change."""

import os
import subprocess

from heapkit_e2e import (check, fixture, flame_frames, flame_paths, flamegraph_tool,
                         folded_paths, run, run_fixture, tool, workdir, write_file)

flamegraph = flamegraph_tool("flamegraph.pl")
difffolded = flamegraph_tool("difffolded.pl")
if flamegraph is None or difffolded is None:
    raise SystemExit(77)  # meson's "skipped"

directory = workdir()
plugin = fixture("libplugin_fixture.so")
dumps = {
    "alloc_cpp": run_fixture(fixture("alloc_cpp"), directory, preload=False),
    "inline_cpp": run_fixture(fixture("inline_cpp"), directory, args=[plugin]),
    "inline_cpp_no_plugin": run_fixture(fixture("inline_cpp"), directory),
    "threads": run_fixture(fixture("threads"), directory, preload=False),
}

# flamegraph.pl at a width where each count is many pixels, its positions exact enough to
# find every frame's parent, and nothing left out: its frames are then the whole tree.
EXACT = ["--width", "2000000000", "--minwidth", "0"]


def flamegraph_svg(folded_path, *args):
    proc = run(["perl", flamegraph, *EXACT, *args, folded_path])
    check("Ignored" not in proc.stderr, f"flamegraph.pl skipped lines of {folded_path}: "
          f"{proc.stderr.strip()}")
    return proc.stdout


def significant(paths, total):
    """{path: summed value} of the paths holding more than 0.5% of the total."""
    summed = {path: sum(f["value"] for f in frames) for path, frames in paths.items()}
    return {path: value for path, value in summed.items() if value * 200 > total}


def compare(what, ours_svg, theirs_svg):
    """heapfold's frames above 0.5% against flamegraph.pl's; returns flamegraph.pl's paths."""
    ours, theirs = flame_paths(flame_frames(ours_svg)), flame_paths(flame_frames(theirs_svg))
    total = theirs[("all",)][0]["value"]
    check(ours[("all",)][0]["value"] == total,
          f"{what}: total {ours[('all',)][0]['value']}, flamegraph.pl {total}")
    ours_big, theirs_big = significant(ours, total), significant(theirs, total)
    check(ours_big == theirs_big,
          f"{what}: frames above 0.5% differ:\n only heapfold: "
          f"{sorted(set(ours_big.items()) - set(theirs_big.items()))}\n only flamegraph.pl: "
          f"{sorted(set(theirs_big.items()) - set(ours_big.items()))}")
    split = 0
    for path in theirs_big:
        check(len(ours[path]) == 1, f"{what}: heapfold drew {path} {len(ours[path])} times")
        mine = ours[path][0]
        if len(theirs[path]) == 1:
            check(mine["title"] == theirs[path][0]["title"],
                  f"{what}: title {mine['title']!r}, flamegraph.pl {theirs[path][0]['title']!r}")
            continue
        # flamegraph.pl sorts whole lines and can draw one function twice under a caller;
        # summed, its parts are heapfold's one frame (values compared above).
        split += 1
        if mine["delta"] is not None:
            their_delta = sum(float(f["delta"]) for f in theirs[path])
            check(abs(float(mine["delta"]) - their_delta) <= 0.01 * len(theirs[path]),
                  f"{what}: {path} changed {mine['delta']}%, flamegraph.pl {their_delta:+.2f}%")
    print(f"{what}: {len(theirs_big)} frames above 0.5% agree with flamegraph.pl's "
          f"({split} drawn in parts by flamegraph.pl)")
    return theirs


def heapfold_folded(name, args):
    text = run([tool("heapfold"), *args, dumps[name]]).stdout
    return text, write_file(directory, f"{name}{'_'.join(args)}.folded".replace("/", ""), text)


# 1. Collapsed stacks read by flamegraph.pl: every line taken, every frame where it belongs
#    with the value the lines give it (names with spaces, templates, '&', annotations).
#    Then heapfold --svg against flamegraph.pl on the same stacks.
cases = [
    ("alloc_cpp", [], []),
    ("alloc_cpp", ["--sample", "alloc_objects"], ["--countname", "objects"]),
    ("inline_cpp", ["--frame", "function+line", "--annotate-inline"], []),
    ("inline_cpp", ["--sample", "alloc_space", "--keep-allocator-frames"], []),
    ("inline_cpp", ["--reverse", "--inverted"], ["--reverse", "--inverted"]),
]
for name, args, svg_args in cases:
    heapfold_args = [a for a in args if a not in ("--reverse", "--inverted")]
    text, folded = heapfold_folded(name, heapfold_args)
    countname = "objects" if "alloc_objects" in args else "bytes"
    theirs_svg = flamegraph_svg(folded, "--countname", countname, *svg_args)
    what = f"heapfold {' '.join(args)} {name}"
    if not svg_args:
        theirs = flame_paths(flame_frames(theirs_svg))
        drawn = {path: sum(f["value"] for f in frames) for path, frames in theirs.items()}
        check(drawn == folded_paths(text),
              f"{what}: flamegraph.pl read the stacks otherwise:\n"
              f"{sorted(set(drawn.items()) ^ set(folded_paths(text).items()))}")
    ours_svg = run([tool("heapfold"), "--svg", *args, dumps[name]]).stdout
    compare(what, ours_svg, theirs_svg)

# 2. --threads: flamegraph.pl renders the same totals, each stack under its thread's frame.
plain_text, plain_folded = heapfold_folded("threads", [])
threads_text, threads_folded = heapfold_folded("threads", ["--threads"])
plain = flame_paths(flame_frames(flamegraph_svg(plain_folded, "--countname", "bytes")))
theirs_svg = flamegraph_svg(threads_folded, "--countname", "bytes")
by_thread = compare("heapfold --threads threads",
                    run([tool("heapfold"), "--svg", "--threads", dumps["threads"]]).stdout,
                    theirs_svg)
check(by_thread[("all",)][0]["value"] == plain[("all",)][0]["value"],
      "--threads changed the total flamegraph.pl draws")
threads = {path[1] for path in by_thread if len(path) == 2}
check({"alpha worker", "beta"} <= threads, f"thread frames {threads}")
for path, frames in plain.items():
    summed = sum(f["value"] for t in threads for f in by_thread.get(("all", t, *path[1:]), []))
    if len(path) > 1:
        check(summed == sum(f["value"] for f in frames),
              f"{path}: {summed} over the threads, {sum(f['value'] for f in frames)} in all")

# 3. A differential graph: the same program without and with its plugin (which keeps
#    50 x 16384 more bytes), diffed by difffolded.pl, drawn by flamegraph.pl and heapfold's
#    writer (the test tool flame_from_folded: heapfold itself reads dumps).
_, before = heapfold_folded("inline_cpp_no_plugin", [])
_, after = heapfold_folded("inline_cpp", [])
diff_text = run(["perl", difffolded, before, after]).stdout
diff = write_file(directory, "diff.folded", diff_text)
check(all(len(line.split(" ")) >= 3 for line in diff_text.splitlines()), "difffolded.pl output")
ours_svg = subprocess.run([os.path.join(os.path.dirname(plugin), "flame_from_folded"),
                           "--differential"], input=diff_text, capture_output=True, text=True,
                          check=True).stdout
theirs = compare("differential (difffolded.pl)", ours_svg,
                 flamegraph_svg(diff, "--countname", "bytes"))
ours = flame_paths(flame_frames(ours_svg))
after_total = sum(int(line.rsplit(" ", 1)[1]) for line in diff_text.splitlines())
check(ours[("all",)][0]["value"] == after_total, "differential widths are not the after counts")
grew = [frames[0] for path, frames in ours.items() if path[-1] == "plugin_keep"]
check(len(grew) == 1 and float(grew[0]["delta"]) > 0, f"plugin_keep did not grow: {grew}")
check(grew[0]["value"] == 50 * 16384 and
      grew[0]["delta"] == f"+{100 * 50 * 16384 / after_total:.2f}",
      f"plugin_keep: {grew[0]['title']}")
red = [int(c) for c in grew[0]["fill"][4:-1].split(",")]
check(red[0] == 255 and red[1] < 255 and red[1] == red[2], f"plugin_keep is not red: {red}")
unchanged = [frames[0] for path, frames in ours.items() if path[-1] == "shared_block"]
check(unchanged and unchanged[0]["delta"] == "0.00" and unchanged[0]["fill"] == "rgb(255,255,255)",
      f"shared_block changed: {unchanged}")
print("ok")
