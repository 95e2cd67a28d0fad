# SPDX-License-Identifier: MIT
"""Turns measured rows into the tables the harness prints (markdown, readable as plain
text) and into the verdicts on issue 5's four targets."""

from dataclasses import dataclass

MIB = 1 << 20
# A cost that grows more than this much faster than its input is not called linear
# (the machine is shared: timings jitter by tens of percent).
LINEAR_SLACK = 1.5


@dataclass
class Measured:
    """Everything taken on one input."""
    input: object  # inputs.Input
    rows: list  # tools.Row
    parse_mbps: float
    parse_method: str
    debug_bytes: int  # .debug_* bytes of the modules its stacks hit

    def row(self, *labels):
        """The first measured row whose tool is one of `labels`, else None."""
        return next((r for r in self.rows if r.tool in labels and r.result), None)

    @property
    def heapfold(self):
        return self.row("heapfold, cold cache", "heapfold")

    @property
    def symbolize_seconds(self):
        """heapkit's symbolization alone: jeprof2pprof end to end (cold cache) less
        jeprof2pprof --no-symbolize, medians of the same run. (Not heapfold: its output
        spells every frame's name out per stack, so naming frames also costs it writing.)"""
        return (self.row("jeprof2pprof, cold cache", "jeprof2pprof").result.median -
                self.row("jeprof2pprof --no-symbolize").result.median)


def markdown(header, lines):
    widths = [max(len(str(c)) for c in column) for column in zip(header, *lines)]
    out = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(header, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(line, widths)) + " |"
            for line in lines]
    return "\n".join(out)


def inputs_table(measured):
    lines = [(m.input.name, f"{m.input.size / MIB:.1f}", m.input.stacks, m.input.addresses,
              len(m.input.vaddrs), f"{m.debug_bytes / MIB:.1f}", f"{m.parse_mbps:.0f}",
              m.parse_method) for m in measured]
    return markdown(("input", "dump MiB", "stacks", "unique addresses", "modules hit",
                     "their debug info MiB", "parse MB/s", "parse measured by"), lines)


def results_table(measured):
    lines = []
    for m in measured:
        reference = m.heapfold.result.median
        for row in m.rows:
            if not row.result:
                lines.append((m.input.name, row.tool, "-", "-", "-", "-", "-", row.note))
                continue
            r = row.result
            runs = f"{len(r.wall)} of {r.wanted} runs (--budget)" if len(r.wall) < r.wanted \
                else ""
            lines.append((m.input.name, row.tool, f"{r.median:.3f}",
                          f"{min(r.wall):.3f}–{max(r.wall):.3f}", f"{r.cpu_median:.3f}",
                          f"{r.peak_kib / 1024:.0f}", f"{r.median / reference:.2f}×",
                          "; ".join(filter(None, (row.note, runs)))))
    return markdown(("input", "tool", "median s", "min–max s", "CPU s", "peak RSS MiB",
                     "time vs heapfold", "note"), lines)


def growth_lines(series, size, cost):
    """Per-unit cost of each input of a series, and how much faster than its input the
    cost grew from the previous one (1 = linear, below 1 = fixed costs amortized)."""
    lines, previous = [], None
    for m in series:
        seconds = cost(m)
        growth = "" if previous is None else \
            f"{(seconds / previous[1]) / (size(m) / previous[0]):.2f}"
        lines.append((m.input.name, size(m), f"{seconds:.3f}",
                      f"{seconds / size(m) * 1e6:.2f}", growth))
        previous = (size(m), seconds)
    return lines


def scaling_tables(stack_series, address_series):
    """Cost against stack count and symbolization cost against unique addresses, one
    table per cost; and whether heapkit's costs grew linearly (llvm-symbolizer's are
    shown for comparison, not judged)."""
    def median(tool):
        return lambda m: m.row(tool).result.median

    tables, factors = [], []
    for title, unit, series, size, costs in (
        ("stacks", "stack", stack_series, lambda m: m.input.stacks,
         (("heapfold", lambda m: m.heapfold.result.median, True),
          ("heapfold --no-symbolize", median("heapfold --no-symbolize"), True))),
        ("unique addresses", "address", address_series, lambda m: m.input.addresses,
         (("heapkit symbolization (jeprof2pprof, cold less --no-symbolize)",
           lambda m: m.symbolize_seconds, True),
          ("llvm-symbolizer", median("llvm-symbolizer --inlining"), False))),
    ):
        if len(series) < 2:
            continue
        for label, cost, judged in costs:
            lines = growth_lines(series, size, cost)
            if judged:
                factors += [float(line[4]) for line in lines if line[4]]
            tables.append(f"{label} against {title}:\n" + markdown(
                ("input", title, "median s", f"µs per {unit}", "growth vs previous"), lines))
    if not factors:
        return ""
    verdict = "linear" if max(factors) <= LINEAR_SLACK else "NOT linear"
    return ("\n\n".join(tables) + f"\n\nheapkit's scaling: {verdict} (largest growth "
            f"factor {max(factors):.2f}; 1 = linear, limit {LINEAR_SLACK})")


def verdict(ok):
    return "met" if ok else "not met"


def targets(measured):
    """Summary lines for issue 5's targets."""
    lines = ["Targets (issue 5):"]
    jeprof = [(m, m.row("jeprof --collapsed").result.median / m.heapfold.result.median)
              for m in measured if m.row("jeprof --collapsed")]
    if jeprof:
        detail = ", ".join(f"{m.input.name} {ratio:.0f}×" for m, ratio in jeprof)
        lines.append(f"- end to end ≥ 100× faster than jeprof --collapsed: "
                     f"{verdict(min(r for _, r in jeprof) >= 100)} (heapfold, cold cache: "
                     f"{detail})")
        warm = [(m, m.row("jeprof --collapsed").result.median /
                 m.row("heapfold, warm cache").result.median)
                for m, _ in jeprof if m.row("heapfold, warm cache")]
        if warm:
            lines.append("  with a warm cache: " +
                         ", ".join(f"{m.input.name} {ratio:.0f}×" for m, ratio in warm))
    symbolize = [(m, m.row("llvm-symbolizer --inlining").result.median / m.symbolize_seconds)
                 for m in measured if m.symbolize_seconds > 0]
    detail = ", ".join(f"{m.input.name} {ratio:.1f}× ({m.symbolize_seconds:.3f} s vs "
                       f"{m.row('llvm-symbolizer --inlining').result.median:.3f} s)"
                       for m, ratio in symbolize)
    lines.append(f"- symbolization ≥ 1.5× faster than llvm-symbolizer on the same unique "
                 f"addresses: {verdict(symbolize and min(r for _, r in symbolize) >= 1.5)} "
                 f"(jeprof2pprof cold cache less its --no-symbolize: {detail})")
    largest = max(measured, key=lambda m: m.input.size)
    lines.append(f"- parse ≥ 500 MB/s: {verdict(largest.parse_mbps >= 500)} "
                 f"({largest.parse_mbps:.0f} MB/s on {largest.input.name}, "
                 f"{largest.input.size / MIB:.0f} MiB, by {largest.parse_method})")
    memory = []
    for m in measured:
        peak = max(r.result.peak_kib * 1024 for r in m.rows
                   if r.result and r.tool.startswith(("heapfold", "jeprof2pprof")))
        memory.append((m, peak, 2 * (m.input.size + m.debug_bytes)))
    detail = ", ".join(f"{m.input.name} {peak / MIB:.0f} of {bound / MIB:.0f} MiB"
                       for m, peak, bound in memory)
    lines.append(f"- peak memory < 2 × (input + debug info touched): "
                 f"{verdict(all(peak < bound for _, peak, bound in memory))} ({detail})")
    return "\n".join(lines)
