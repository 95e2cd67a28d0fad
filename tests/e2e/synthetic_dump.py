# SPDX-License-Identifier: MIT
"""The synthetic dump the large-input tests and the benchmarks share (no environment
needed to import it)."""


def write_synthetic_dump(path, stacks, size=4096, binary="/nonexistent/app"):
    """A heap_v2 dump of `stacks` distinct 4-frame stacks of one object of `size` bytes
    each, in `binary`, a file that is nowhere by default (nothing to symbolize); returns
    `path`."""
    total = min(stacks * size, 2**63 - 1)  # what the reader takes
    with open(path, "w") as f:
        f.write(f"heap_v2/524288\n  t*: {stacks}: {total} [{stacks}: {total}]\n")
        f.writelines(f"@ 0x7f0000001010 0x{0x555500001000 + (i % 4093) * 16:x} "
                     f"0x{0x555500002000 + (i // 4093) * 16:x} 0x555500003000\n"
                     f"  t*: 1: {size} [1: {size}]\n" for i in range(stacks))
        f.write("\nMAPPED_LIBRARIES:\n"
                f"555500000000-555500010000 r-xp 00000000 fe:00 1  {binary}\n")
    return path
