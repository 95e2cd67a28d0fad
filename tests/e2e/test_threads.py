# SPDX-License-Identifier: MIT
"""Two threads named through thread.prof.name: --threads shows both names."""

import os

from heapkit_e2e import (check, check_near, fixture, heapfold, pprof_raw, run, run_fixture,
                         tool, workdir)

directory = workdir()
dump = run_fixture(fixture("threads"), directory, preload=False)

stacks = heapfold("--threads", dump)
alpha = sum(v for s, v in stacks.items() if s.startswith("alpha worker;") and s.endswith(";alpha_work"))
beta = sum(v for s, v in stacks.items() if s.startswith("beta;") and s.endswith(";beta_work"))
check_near(alpha, 300 * 4096, "alpha worker's alpha_work")
check_near(beta, 200 * 8192, "beta's beta_work")

plain = heapfold(dump)
check(not any(s.startswith(("alpha worker;", "beta;")) for s in plain), "thread frames without --threads")

out = os.path.join(directory, "threads.pb.gz")
run([tool("jeprof2pprof"), "--threads", dump, "-o", out])
_, samples, _ = pprof_raw(out)
labelled = {s["labels"].get("thread") for s in samples if s["frames"][0] == "alpha_work"}
check(labelled == {"alpha worker"}, f"alpha_work samples labelled {labelled}")
labelled = {s["labels"].get("thread") for s in samples if s["frames"][0] == "beta_work"}
check(labelled == {"beta"}, f"beta_work samples labelled {labelled}")
print("ok")
