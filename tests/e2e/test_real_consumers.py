# SPDX-License-Identifier: MIT
"""Real jeprof, the reference reader, agrees with heapfold on the same dumps."""

from heapkit_e2e import check, fixture, heapfold, run, run_fixture, workdir


def jeprof_collapsed(program, dump, column):
    """jeprof's lines, as a list: it repeats stacks and prints zero values."""
    proc = run(["jeprof", "--collapsed", f"--{column}", program, dump])
    return [int(line.rpartition(" ")[2]) for line in proc.stdout.splitlines()]


for program, preload in ((fixture("alloc_c_pie"), True), (fixture("alloc_c_nopie"), True),
                         (fixture("alloc_cpp"), False)):
    dump = run_fixture(program, workdir(), preload=preload)
    for column in ("inuse_space", "alloc_space", "inuse_objects", "alloc_objects"):
        ours = heapfold("--sample", column, dump)
        theirs = jeprof_collapsed(program, dump, column)
        # jeprof truncates each stack's float; heapkit rounds it: one unit per line apart.
        slack = len(ours) + len(theirs)
        total_ours, total_theirs = sum(ours.values()), sum(theirs)
        check(abs(total_ours - total_theirs) <= slack,
              f"{program} {column}: heapfold total {total_ours}, jeprof {total_theirs}")
print("ok")
