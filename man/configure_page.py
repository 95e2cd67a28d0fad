#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes a man page as installed from its source, which reads as it is (man -l): the
title line's "heapkit" gets the version, and each `.ds NAME VALUE` line named on the
command line (NAME=VALUE) gets this build's value in place of the source's default.

    configure_page.py INPUT OUTPUT VERSION [NAME=VALUE ...]"""

import re
import sys

source, target, version, *strings = sys.argv[1:]
values = dict(pair.split("=", 1) for pair in strings)
lines = []
with open(source) as f:
    for line in f:
        if line.startswith(".TH ") and ' "heapkit" ' in line:
            line = line.replace(' "heapkit" ', f' "heapkit {version}" ', 1)
        match = re.match(r"^\.ds (\S+) ", line)
        if match and match.group(1) in values:
            line = f".ds {match.group(1)} {values.pop(match.group(1))}\n"
        lines.append(line)
if values:
    sys.exit(f"{source}: no .ds line for {', '.join(values)}")
with open(target, "w") as f:
    f.writelines(lines)
