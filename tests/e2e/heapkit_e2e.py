# SPDX-License-Identifier: MIT
"""Shared helpers for heapkit's end-to-end tests: run fixture programs under real
jemalloc profiling, run heapkit's tools and the real consumers, parse their output."""

import glob
import html
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import zlib
from collections import Counter

from synthetic_dump import write_synthetic_dump  # noqa: F401 (for the tests)

BIN_DIR = os.environ["HEAPKIT_BIN_DIR"]
FIXTURE_DIR = os.environ["HEAPKIT_FIXTURE_DIR"]
MAN_DIR = os.environ["HEAPKIT_MAN_DIR"]
JEMALLOC_SO = os.environ["HEAPKIT_JEMALLOC_SO"]
SOURCE_DIR = os.environ.get("HEAPKIT_SOURCE_DIR", "")

PROFILE_CONF = "prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0"


def tool(name):
    return os.path.join(BIN_DIR, name)


def fixture(name):
    return os.path.join(FIXTURE_DIR, name)


def workdir():
    """A fresh directory, removed when the test process exits."""
    path = tempfile.mkdtemp(prefix="heapkit-e2e-")
    import atexit

    atexit.register(shutil.rmtree, path, True)
    return path


def write_file(directory, name, data):
    """Writes text or bytes to directory/name and returns the path."""
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def run(args, *, check=True, stdin=None, env=None, binary=False, cwd=None):
    # Every test starts with an empty cache unless it sets one (test_index_cache): tests
    # that edit a binary's debug information keep its build id. No index is made unless
    # a test asks.
    env = dict(os.environ if env is None else env)
    env.setdefault("HEAPKIT_CACHE_DIR", workdir())
    env.setdefault("HEAPKIT_INDEX", "never")
    proc = subprocess.run(args, input=stdin, capture_output=True, env=env, timeout=60,
                          text=not binary, cwd=cwd)
    if check and proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, args))} exited {proc.returncode}\n"
                 f"stdout: {proc.stdout!r}\nstderr: {proc.stderr!r}")
    return proc


def run_fixture(program, directory, *, preload=True, args=()):
    """Runs `program` with heap profiling on and returns the path of its final dump."""
    env = dict(os.environ)
    env["MALLOC_CONF"] = f"{PROFILE_CONF},prof_prefix:{directory}/jeprof"
    if preload:
        env["LD_PRELOAD"] = JEMALLOC_SO
    before = set(glob.glob(f"{directory}/jeprof.*.heap"))
    run([program, *args], env=env)
    dumps = sorted(set(glob.glob(f"{directory}/jeprof.*.f.heap")) - before)
    check(len(dumps) == 1, f"{program} left {len(dumps)} final dumps in {directory}")
    return dumps[0]


def closed_to_nobody(path):
    """Where `path` is closed to the user nobody (the first directory above it that other
    users cannot enter, else the file), tried as nobody; None where nobody can read it. A
    test of a process that drops to nobody needs the build's files open to other users: a
    clone under /root (mode 0700) is not."""
    tried = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                            "test", "-r", path], capture_output=True)
    if tried.returncode == 0:
        return None
    parts = os.path.abspath(path).split(os.sep)
    for end in range(2, len(parts)):
        directory = os.sep.join(parts[:end])
        if not os.stat(directory).st_mode & stat.S_IXOTH:
            return f"{directory} (mode {stat.S_IMODE(os.stat(directory).st_mode):04o})"
    return path


def check(condition, message):
    if not condition:
        sys.exit(f"FAIL: {message}")


def near(actual, expected, tolerance=0.01):
    return abs(actual - expected) <= tolerance * expected


def check_near(actual, expected, what, tolerance=0.01):
    check(near(actual, expected, tolerance),
          f"{what}: got {actual}, expected {expected} within {tolerance:.0%}")


def parse_folded(text):
    stacks = {}
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        check(stack and value.isdigit(), f"malformed folded line {line!r}")
        check(stack not in stacks, f"stack printed twice: {stack!r}")
        stacks[stack] = int(value)
    return stacks


def heapfold(*args):
    return parse_folded(run([tool("heapfold"), *args]).stdout)


def sum_where(stacks, predicate):
    return sum(v for s, v in stacks.items() if predicate(s.split(";")))


def leaf_is(name):
    return lambda frames: frames[-1] == name


# --- go tool pprof ---------------------------------------------------------------------

def go_pprof(*args):
    env = dict(os.environ)
    env.setdefault("HOME", tempfile.gettempdir())
    env["PPROF_TMPDIR"] = tempfile.gettempdir()
    return run(["go", "tool", "pprof", *args], env=env)


LOCATION_NAME = re.compile(r"^(.*) (\S*):(-?\d+) s=(-?\d+)(\(.*\))?$")


def pprof_raw(path, *flags):
    """Loads `path` with go tool pprof -raw (and `flags`, e.g. filters). Returns (sample_types, samples, mappings):
    samples are dicts {values, by_type, labels, frames (names, leaf first and innermost
    first), locations [(address, mapping id, [(name, file, line), ...])]}."""
    text = go_pprof("-raw", "-symbolize=none", *flags, path).stdout
    section = None
    types, samples, locations, mappings = [], [], {}, []
    last_location = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if not types:
                types = [t.split("/")[0] for t in line.replace("[dflt]", "").split()]
            elif re.match(r"^\s+[-\d\s]+:", line):
                values, _, ids = line.partition(":")
                samples.append({"values": [int(v) for v in values.split()],
                                "ids": [int(i) for i in ids.split()], "labels": {}})
            elif samples and ":[" in line:
                key, _, value = line.strip().partition(":[")
                samples[-1]["labels"][key] = value.rstrip("]")
        elif section == "Locations":
            # A location in no mapping (a pseudo-frame: M= left out) is in mapping 0.
            match = re.match(r"^\s+(\d+): (0x[0-9a-f]+)(?: M=(\d+))? ?(.*)$", line)
            if match:
                last_location = int(match.group(1))
                lines = []
                if match.group(4):
                    lines.append(LOCATION_NAME.match(match.group(4)).groups()[:3])
                locations[last_location] = (int(match.group(2), 16), int(match.group(3) or 0),
                                            lines)
            elif line.strip():
                locations[last_location][2].append(LOCATION_NAME.match(line.strip()).groups()[:3])
        elif section == "Mappings" and line.strip():
            mappings.append(line)
    for sample in samples:
        sample["locations"] = [locations[i] for i in sample["ids"]]
        sample["frames"] = [n for loc in sample["locations"] for n in ([l[0] for l in loc[2]] or ["?"])]
        sample["by_type"] = dict(zip(types, sample["values"]))
    return types, samples, mappings


def mapping_ranges(mappings):
    """{id: (start, limit, offset, path)} from pprof -raw's Mappings lines."""
    ranges = {}
    for line in mappings:
        match = re.match(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+)", line)
        ranges[int(match.group(1))] = (int(match.group(2), 16), int(match.group(3), 16),
                                       int(match.group(4), 16), match.group(5))
    return ranges


# --- ground truth ----------------------------------------------------------------------

def dump_stacks(path):
    """A heap dump's stacks read as jemalloc wrote them: [(runtime addresses, bytes in
    use)], and its executable mappings [(start, end, file offset, path)]. Under
    PROFILE_CONF (lg_prof_sample:0) every allocation is sampled: no unsampling."""
    with open(path) as f:
        lines = f.read().splitlines()
    stacks, mappings = [], []
    for i, line in enumerate(lines):
        if line.startswith("@ "):
            values = re.match(r"\s*t\*: (\d+): (\d+)", lines[i + 1])
            stacks.append(([int(a, 16) for a in line.split()[1:]], int(values.group(2))))
        mapping = re.match(r"^([0-9a-f]+)-([0-9a-f]+) r-xp ([0-9a-f]+) \S+ \d+\s+(/\S+)$", line)
        if mapping:
            start, end, offset = (int(g, 16) for g in mapping.groups()[:3])
            mappings.append((start, end, offset, mapping.group(4)))
    return stacks, mappings


def share_under(path, unnamed):
    """The share of a dump's bytes in use under stacks through any of `unnamed`
    ({file path: set of file offsets}, as heapfold prints them: return addresses moved
    back by one, so either offset counts)."""
    stacks, mappings = dump_stacks(path)

    def is_unnamed(address):
        for start, end, offset, file in mappings:
            if start <= address < end and file in unnamed:
                at = offset + address - start
                return bool({at, at - 1} & unnamed[file])
        return False

    total = sum(value for _, value in stacks)
    under = sum(value for addresses, value in stacks if any(map(is_unnamed, addresses)))
    return under / total if total else 0.0


def marker_line(source, marker):
    """The line number of `// at:marker` in a fixture source."""
    with open(os.path.join(SOURCE_DIR, "fixtures", source)) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"// at:{marker}"):
                return number
    sys.exit(f"FAIL: no marker {marker} in {source}")


def elf_vaddr(path, file_offset):
    """ELF virtual address of a file offset, through the PT_LOAD segment holding it."""
    headers = run(["readelf", "-lW", path]).stdout
    for match in re.finditer(r"LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ 0x([0-9a-f]+)", headers):
        offset, vaddr, size = (int(g, 16) for g in match.groups())
        if offset <= file_offset < offset + size:
            return vaddr + file_offset - offset
    sys.exit(f"FAIL: offset {file_offset:#x} is in no PT_LOAD segment of {path}")


def llvm_frames(path, vaddr):
    """llvm-symbolizer's inline chain at `vaddr`: [(name, file, line)], innermost first."""
    out = run(["llvm-symbolizer", "--inlining", "--functions=linkage", "--demangle",
               f"--obj={path}", hex(vaddr)]).stdout.strip().splitlines()
    frames = []
    for name, where in zip(out[0::2], out[1::2]):
        file, line = where.rsplit(":", 2)[0], int(where.rsplit(":", 2)[1])
        frames.append((name, file, line))
    return frames


# The C++ libraries' allocator plumbing, which heapkit cuts from stacks like operator new
# (emit/stacks/allocator_frames.cpp): a leaf's inline chain starts after it.
CXX_ALLOCATOR_FRAME = re.compile(
    r"^std::(__new_allocator<.*>::allocate|allocator<.*>::allocate|allocator_traits<.*>::allocate"
    r"|_Vector_base<.*>::_M_allocate|(__cxx11::)?basic_string<.*>::_M_create|__allocate_guarded<"
    r"|__detail::_Hashtable_alloc<.*>::_M_allocate_|_Rb_tree<.*>::_M_get_node"
    r"|_Deque_base<.*>::_M_allocate_|(_Fwd_list_base|(__cxx11::)?_List_base)<.*>::_M_get_node)")


def is_cxx_standard(name):
    """Whether llvm-symbolizer's demangled `name` is a function of namespace std or
    __gnu_cxx, a template's return type before it allowed: pprof's drop_frames names
    those the profile has at its leaf ends (emit/stacks/standard_frames.cpp)."""
    depth, split, end = 0, 0, len(name)
    if name.endswith(")"):  # the argument list
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                end = i
                break
    depth = 0
    for i, c in enumerate(name[:end]):
        depth += 1 if c in "<([" else -1 if c in ">)]" and depth > 0 else 0
        if c == " " and depth == 0 and not name[i + 1:].startswith(("<", "const")):
            split = i + 1
    return name[split:end].startswith(("std::", "__gnu_cxx::"))


def check_names_like_llvm(samples, mappings, binary, at_least=5):
    """Every location of `binary` in a pprof -raw profile (pprof_raw) has the inline
    chain, files and lines llvm-symbolizer gives (less the allocator plumbing and the
    standard library's frames heapkit cuts from a leaf, CXX_ALLOCATOR_FRAME and
    is_cxx_standard); at least `at_least` of them."""
    ranges = mapping_ranges(mappings)
    compared = 0
    for sample in samples:
        for address, mapping_id, ours in sample["locations"]:
            start_address, _, offset, path = ranges[mapping_id]
            if os.path.realpath(path) != os.path.realpath(binary):
                continue
            theirs = llvm_frames(path, elf_vaddr(path, address - start_address + offset))
            while len(theirs) > len(ours) and (CXX_ALLOCATOR_FRAME.match(theirs[0][0])
                                               or is_cxx_standard(theirs[0][0])):
                theirs = theirs[1:]
            got = [(os.path.basename(file), int(line)) for _, file, line in ours]
            want = [(os.path.basename(file).replace("??", ""), line) for _, file, line in theirs]
            check(got == want, f"{binary}+{address - start_address + offset:#x}: ours {ours}\n"
                               f"llvm-symbolizer {theirs}")
            compared += 1
    check(compared >= at_least, f"only {compared} of {binary}'s locations compared")


def pprof_total(samples, sample_type, predicate):
    return sum(s["by_type"][sample_type] for s in samples if predicate(s["frames"]))


# --- flame graphs ----------------------------------------------------------------------

def flamegraph_tool(name):
    """The path of flamegraph.pl or difffolded.pl at <source>/../shared/tools/flamegraph,
    or None, with the reason printed, in a checkout without ../shared."""
    root = os.path.dirname(os.path.abspath(SOURCE_DIR)) if SOURCE_DIR else ""
    path = os.path.normpath(os.path.join(root, "..", "shared", "tools", "flamegraph", name))
    if not SOURCE_DIR or not os.path.exists(path):
        print(f"skipping the checks against {name}: {path} is absent (it lives outside the "
              f"project, in ../shared/tools/flamegraph)")
        return None
    return path


# "NAME (N UNIT, P%)", "; D%" added in a differential graph, "; NOTE" where a view adds one.
FLAME_TITLE = re.compile(
    r"^(.*) \(([\d,]+) (.+?), ([\d.]+)%(?:; ([-+]?[\d.]+)%)?(?:; ([^;()]*))?\)$", re.S)
SVG = "{http://www.w3.org/2000/svg}"


def flame_frames(svg_text):
    """The frames of a flame graph SVG (heapfold's or flamegraph.pl's), parsed as XML: a list
    of dicts {title, name, value, percent, delta (None unless differential), note (None
    unless the view adds one), x, width, y, depth, fill}, in document order. Depth counts
    from the root frame "all"."""
    import xml.etree.ElementTree as ET

    document = ET.fromstring(svg_text)
    group = next(g for g in document.iter(f"{SVG}g") if g.get("id") == "frames")
    frames = []
    for g in group:
        title = g.find(f"{SVG}title").text
        rect = g.find(f"{SVG}rect")
        match = FLAME_TITLE.match(title)
        check(match, f"flame graph title {title!r} is not 'NAME (N UNIT, P%)'")
        frames.append({"title": title, "name": match.group(1),
                       "value": int(match.group(2).replace(",", "")),
                       "percent": match.group(4), "delta": match.group(5),
                       "note": match.group(6),
                       "x": float(rect.get("x")), "width": float(rect.get("width")),
                       "y": float(rect.get("y")), "fill": rect.get("fill"),
                       "label": g.find(f"{SVG}text").text or ""})
    roots = [f for f in frames if f["name"] == "all" and f["percent"] == "100"]
    check(len(roots) == 1, f"{len(roots)} root frames named all")
    for frame in frames:
        frame["depth"] = round(abs(frame["y"] - roots[0]["y"]) / 16)
    return frames


def flame_paths(frames):
    """{path: [frames]}, a path being the names from the root down, each frame's parent
    found by geometry: the frame one level up whose box holds the middle of its box. A
    graph that draws one function twice under the same caller gives two frames a path."""
    by_depth = {}
    for frame in frames:
        by_depth.setdefault(frame["depth"], []).append(frame)
    paths = {}
    for depth in sorted(by_depth):
        for frame in by_depth[depth]:
            if depth == 0:
                frame["path"] = (frame["name"],)
            else:
                middle = frame["x"] + frame["width"] / 2
                parents = [p for p in by_depth.get(depth - 1, [])
                           if p["x"] - 0.01 <= middle <= p["x"] + p["width"] + 0.01]
                check(parents, f"no parent under frame {frame['title']!r}")
                frame["path"] = parents[0]["path"] + (frame["name"],)
            paths.setdefault(frame["path"], []).append(frame)
    return paths


def folded_paths(text, columns=1):
    """{path: value} of every frame of folded text as flamegraph.pl should read it: root
    "all", annotations such as _[i] dropped from names, the last column the value."""
    paths = {}
    for line in text.splitlines():
        fields = line.rsplit(" ", columns)
        value = int(fields[-1])
        frames = [re.sub(r"_\[[kwij]\]$", "", f) for f in fields[0].split(";")]
        for depth in range(len(frames) + 1):
            path = ("all", *frames[:depth])
            paths[path] = paths.get(path, 0) + value
    return paths


# --- shell completion ------------------------------------------------------------------

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"

# Sources bash-completion's helpers and the completion file $1, sets COMP_WORDS to the
# words after it (as bash splits a command line: "--sample=in" is "--sample" "=" "in")
# and COMP_LINE to $COMPLETE_LINE, calls the function `complete -p` names for the
# command, and prints COMPREPLY.
_COMPLETE = r"""
source "$BASH_COMPLETION_SCRIPT" || exit 1
script=$1
shift
source "$script" || exit 1
compopt() { :; } # only valid while bash itself runs a completion function
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$COMPLETE_LINE
COMP_POINT=${#COMP_LINE}
spec=$(complete -p "$1") || exit 1
function=$(sed -E 's/.* -F ([^ ]+) .*/\1/' <<<"$spec")
"$function" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
"""


def complete(script, *words, cwd=None, env=None):
    """What bash offers for the last of `words` ('' for a new word) on the command line
    `words`, with the completion file `script` loaded: COMPREPLY, sorted and deduplicated."""
    line = " ".join(words).replace(" = ", "=")
    if line.endswith(" ="):
        line = line[:-2] + "="
    env = dict(os.environ if env is None else env, BASH_COMPLETION_SCRIPT=BASH_COMPLETION,
               COMPLETE_LINE=line)
    proc = run(["bash", "-c", _COMPLETE, "complete", script, *words], cwd=cwd, env=env)
    return sorted({line for line in proc.stdout.splitlines() if line})


def completion_loaded(share_dir, command):
    """Whether bash-completion's own loader, looking under `share_dir` (as under
    /usr/share), finds and loads a completion for `command`: its `complete -p` line."""
    proc = run(["bash", "-c", 'source "$1" && _completion_loader "$2"; complete -p "$2"',
                "loader", BASH_COMPLETION, command],
               env=dict(os.environ, XDG_DATA_DIRS=share_dir), check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


# --- headless Chromium -----------------------------------------------------------------

def chromium_browser():
    """The path of chromium; without one the test is skipped (exit 77, meson's "skipped")."""
    browser = shutil.which("chromium")
    if browser is None:
        print("skipping: chromium is not installed (tests/install-packages.sh installs it)")
        raise SystemExit(77)
    return browser


def chromium(*args):
    """Runs headless Chromium with `args` and returns its standard output."""
    profile = workdir()  # a throwaway profile: nothing from an earlier run
    return run([chromium_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--hide-scrollbars", f"--user-data-dir={profile}", *args]).stdout


def png_colours(path):
    """(width, height, Counter of (r, g, b)) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, rows, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    check(depth == 8 and colour_type in (2, 6) and interlace == 0,
          f"PNG depth {depth}, colour type {colour_type}, interlace {interlace}")
    channels = 3 if colour_type == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    colours = Counter()
    previous = bytearray(stride)
    for y in range(rows):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc
                                      else up_left)) & 0xFF
        colours.update(zip(line[0::channels], line[1::channels], line[2::channels]))
        previous = line
    return width, rows, colours


def rgb(fill):
    return tuple(int(c) for c in re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())


def run_harness(page):
    """Loads an HTML page that writes JSON into <pre id="result"> and returns it parsed; the
    page reports a failure as {"error": ...}."""
    dom = chromium("--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom",
                   f"file://{page}")
    found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    check(found, f"no result in the harness page:\n{dom[:2000]}")
    result = json.loads(html.unescape(found.group(1))) if found.group(1) != "not run" else {}
    check(result and "error" not in result,
          f"the harness failed: {result or 'the page never loaded what it tests'}")
    return result


def html_data(page):
    """The data of a heapfold --html page (text or bytes), parsed: gzipped in base64, JSON,
    a NUL, and from the next multiple of 8 bytes the tables its "binary" member locates
    ([offset, count, "i32", "f64", "u8": bytes, the count in bytes, or "text": strings each
    ended by a NUL, the count in bytes]), given here as lists under their names."""
    import array
    import base64
    import gzip
    if isinstance(page, bytes):
        page = page.decode()
    packed = re.search(r'<script type="text/plain" id="data"[^>]*>(.*?)</script>', page, re.S)
    check(packed, "no data in the HTML page")
    raw = gzip.decompress(base64.b64decode("".join(packed.group(1).split())))
    end = raw.index(b"\0")
    data = json.loads(raw[:end])
    start = (end + 8) & ~7

    def table(place):
        if isinstance(place[0], list):
            return [table(p) for p in place]
        offset, count, kind = place
        if kind == "text":
            text = raw[start + offset:start + offset + count].decode("utf-8", "replace")
            return text.split("\0")[:-1]
        numbers = array.array({"i32": "i", "u8": "B"}.get(kind, "d"))
        numbers.frombytes(raw[start + offset:start + offset + count * numbers.itemsize])
        return numbers.tolist()

    for name, place in data.pop("binary").items():
        data[name] = table(place)
    return data


def skip_without_debug_file(binary, package, why):
    """Skips the test (exit 77), naming the Debian package to install, where `binary` has no
    separate debug file under /usr/lib/debug/.build-id (its names and lines come from it)."""
    notes = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True).stdout
    found = re.search(r"Build ID: ([0-9a-f]{3,})", notes)
    identity = found.group(1) if found else ""
    if not os.path.exists(f"/usr/lib/debug/.build-id/{identity[:2]}/{identity[2:]}.debug"):
        print(f"SKIP: no debug file for {binary} (Debian package {package}): {why}")
        sys.exit(77)


def skip_if_sanitized(binary, why):
    """Skips the test (exit 77) where `binary` is built with AddressSanitizer, which reserves
    terabytes of address space (no address-space limit fits) and must come first among the
    preloaded libraries (no jemalloc before it): `why` says what the test cannot run."""
    if "libasan" in subprocess.run(["ldd", binary], capture_output=True, text=True).stdout:
        print(f"SKIP: sanitizer build: {why}")
        sys.exit(77)
