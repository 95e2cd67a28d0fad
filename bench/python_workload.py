# SPDX-License-Identifier: MIT
"""What CPython runs under jemalloc profiling for the benchmarks: allocations from many
parts of the interpreter (import machinery, the compiler, json, re, decimal, unicode,
dicts and lists growing). Deterministic."""

import importlib
import random

MODULES = (
    "argparse ast asyncio base64 bisect calendar collections concurrent.futures configparser "
    "contextlib copy csv dataclasses datetime decimal difflib email.message email.parser enum "
    "fractions functools gzip hashlib heapq html.parser http.client inspect io ipaddress "
    "itertools json logging lzma mimetypes operator pathlib pickle pprint queue random re "
    "shlex shutil sqlite3 statistics string struct subprocess tarfile tempfile textwrap "
    "threading tokenize typing unittest urllib.parse uuid xml.dom.minidom xml.etree.ElementTree "
    "zipfile zlib").split()


def json_work(rng):
    import json

    documents = [{"id": i, "name": f"item-{i}", "tags": [rng.random() for _ in range(i % 17)],
                  "nested": {"k": str(i) * (i % 9)}} for i in range(2000)]
    text = json.dumps(documents)
    return len(json.loads(text))


def re_work(rng):
    import re

    patterns = [re.compile(rf"(\w+)-{i}(\d*)[a-f]{{{i % 5},}}") for i in range(200)]
    words = " ".join(f"word{rng.randrange(10**6)}-{i % 200}abc" for i in range(5000))
    return sum(len(p.findall(words)) for p in patterns[:50])


def decimal_work():
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    total = Decimal(0)
    for i in range(1, 3000):
        total += Decimal(1) / Decimal(i) ** 2
    return total


def compile_work():
    import ast

    source = "\n".join(f"def f{i}(x):\n    return [x * {i} for _ in range({i % 7})]"
                       for i in range(300))
    return len(compile(ast.parse(source), "<bench>", "exec").co_consts)


def main():
    rng = random.Random(1)
    for module in MODULES:
        importlib.import_module(module)
    json_work(rng)
    re_work(rng)
    decimal_work()
    compile_work()


if __name__ == "__main__":
    main()
