# SPDX-License-Identifier: MIT
"""Turns measured rows into the tables the harness prints (markdown, readable as plain
text). Ratios are taken round by round (see measure.py), wall and CPU time apart."""

from dataclasses import dataclass

from measure import paired

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

    def ratio(self, row, reference, seconds="wall"):
        """How many times longer `row` took than `reference`, round by round. CPU seconds
        come in microseconds (wait4): a run counted as 0 took under one, and is counted as
        one (the ratio is then a lower bound, never a division by zero)."""
        tick = 1e-6
        return paired(row.result, reference.result, lambda a, b: max(a, tick) / max(b, tick),
                      seconds)

    def symbolize_seconds(self, seconds="wall"):
        """heapkit's symbolization alone: jeprof2pprof end to end (cold cache) less
        jeprof2pprof --no-symbolize, round by round. (Not heapfold: its output spells
        every frame's name out per stack, so naming frames also costs it writing.)"""
        return paired(self.row("jeprof2pprof, cold cache", "jeprof2pprof").result,
                      self.row("jeprof2pprof --no-symbolize").result,
                      lambda a, b: a - b, seconds)


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


def result_line(m, row):
    if not row.result:
        return (m.input.name, row.tool, "-", "-", "-", "-", "-", "-", row.note)
    r = row.result
    runs = f"{len(r.wall)} of {r.wanted} runs (--budget)" if len(r.wall) < r.wanted else ""
    return (m.input.name, row.tool, f"{r.median:.3f}", f"{min(r.wall):.3f}–{max(r.wall):.3f}",
            f"{r.cpu_median:.3f}", f"{r.peak_kib / 1024:.0f}",
            f"{m.ratio(row, m.heapfold):.2f}×", f"{m.ratio(row, m.heapfold, 'cpu'):.2f}×",
            "; ".join(filter(None, (row.note, runs))))


def results_table(measured):
    return markdown(("input", "tool", "median s", "min–max s", "CPU s", "peak RSS MiB",
                     "time vs heapfold", "CPU vs heapfold", "note"),
                    [result_line(m, row) for m in measured for row in m.rows])


def growth_lines(series, size, cost):
    """Per input of a series: its size, wall and CPU seconds, CPU µs per unit, and how
    much faster than the input the CPU time grew since the previous input (1 = linear,
    below 1 = fixed costs amortized)."""
    lines, previous = [], None
    for m in series:
        wall, cpu = cost(m, "wall"), cost(m, "cpu")
        growth = "" if previous is None else \
            f"{(cpu / previous[1]) / (size(m) / previous[0]):.2f}"
        lines.append((m.input.name, size(m), f"{wall:.3f}", f"{cpu:.3f}",
                      f"{cpu / size(m) * 1e6:.2f}", growth))
        previous = (size(m), cpu)
    return lines


def median_of(row_of):
    """cost(m, seconds) for growth_lines: the median of the row `row_of(m)`."""
    def cost(m, seconds):
        result = row_of(m).result
        return result.median if seconds == "wall" else result.cpu_median
    return cost


def scaling_tables(stack_series, address_series):
    """Cost against stack count and symbolization cost against unique addresses, one
    table per cost; and whether heapkit's costs grew linearly, judged on CPU time (which
    the machine's other load inflates less). llvm-symbolizer's is shown, not judged."""
    tables, factors = [], []
    for title, unit, series, size, costs in (
        ("stacks", "stack", stack_series, lambda m: m.input.stacks,
         (("heapfold", median_of(lambda m: m.heapfold), True),
          ("heapfold --no-symbolize",
           median_of(lambda m: m.row("heapfold --no-symbolize")), True))),
        ("unique addresses", "address", address_series, lambda m: m.input.addresses,
         (("heapkit symbolization (jeprof2pprof, cold less --no-symbolize)",
           lambda m, seconds: m.symbolize_seconds(seconds), True),
          ("llvm-symbolizer",
           median_of(lambda m: m.row("llvm-symbolizer --inlining")), False))),
    ):
        if len(series) < 2:
            continue
        for label, cost, judged in costs:
            lines = growth_lines(series, size, cost)
            if judged:
                factors += [float(line[5]) for line in lines if line[5]]
            tables.append(f"{label} against {title}:\n" + markdown(
                ("input", title, "median s", "CPU s", f"CPU µs per {unit}",
                 "CPU growth vs previous"), lines))
    if not factors:
        return ""
    verdict = "linear" if max(factors) <= LINEAR_SLACK else "NOT linear"
    return ("\n\n".join(tables) + f"\n\nheapkit's scaling: {verdict} (largest CPU growth "
            f"factor {max(factors):.2f}; 1 = linear, limit {LINEAR_SLACK})")
