# SPDX-License-Identifier: MIT
"""The address index, the tools' one cache: with --index never a build met for the first
time gets none; with --index now each build gets one (index-2/KEY: its build id, with
"-symbols" when named from symbol tables alone), and names exactly as libdw does
(--no-cache); a later dump is named from the index without rebuilding it; a damaged or
foreign index file is rebuilt with a warning that names it, and the output stays the same.
heapkit-index makes them ahead: the first run of a dump is then named from them, the same;
a file it cannot index is an error naming it."""

import fcntl
import os
import shutil

from heapkit_e2e import check, fixture, run, run_fixture, tool, workdir

directory = workdir()
program = fixture("inline_cpp")
plain = run_fixture(program, directory)
# dlopen's allocations reach code in libc and ld.so the plain run's stacks do not.
with_plugin = run_fixture(program, directory, args=[fixture("libplugin_fixture.so")])
cache = os.path.join(directory, "cache")
indexes = os.path.join(cache, "index-2")
env = dict(os.environ, HEAPKIT_CACHE_DIR=cache)
style = ["--frame", "function+line", "--annotate-inline"]


def heapfold(dump, *args):
    return run([tool("heapfold"), *style, *args, dump], env=env)


def build_id(path):
    out = run(["readelf", "-n", path]).stdout
    return out.split("Build ID: ")[1].split()[0]


def index_files():
    """The index files; the builders' locks (.locks/) aside."""
    return sorted(n for n in os.listdir(indexes) if n != ".locks") if os.path.isdir(indexes) else []


truth = heapfold(with_plugin, "--no-cache").stdout
check(heapfold(plain, "--index", "never").stdout == heapfold(plain, "--no-cache").stdout,
      "first run's names")
check(index_files() == [], f"an index built with --index never: {index_files()}")

# --index now: every build the stacks reach is indexed in the run, and names as libdw does.
first = heapfold(with_plugin, "--index", "now")
check(first.stdout == truth, "names while building the indexes differ from --no-cache")
libc = build_id("/lib/x86_64-linux-gnu/libc.so.6")
check(libc in index_files(), f"no index for libc ({libc}) in {index_files()}")
check(build_id(program) in index_files(), f"no index for the program in {index_files()}")
check(not [n for n in index_files() if n.startswith(".")], "temporary files left behind")
libc_index = os.path.join(indexes, libc)
with open(libc_index, "rb") as f:
    built = f.read()
check(built.startswith(b"HKADDRIX"), "the index file has no magic")


def new_dump_run():
    """The dump with the plugin, named from the indexes (rebuilding a bad one)."""
    return heapfold(with_plugin, "--index", "now")


# Named from the indexes: the same names, the file not rebuilt.
stamp = os.stat(libc_index).st_ino
proc = new_dump_run()
check(proc.stdout == truth, "names from the index differ from --no-cache")
check(os.stat(libc_index).st_ino == stamp, "the index was rebuilt though it was valid")
check("address index" not in proc.stderr, f"warning about a valid index: {proc.stderr}")

# A damaged file (cut short): rebuilt, with a warning naming it; the same names.
with open(libc_index, "r+b") as f:
    f.truncate(len(built) // 2)
proc = new_dump_run()
check(proc.stdout == truth, "names changed with a damaged index")
check(f"{libc_index}: damaged address index" in proc.stderr and "building it again" in
      proc.stderr, f"no warning naming the damaged index: {proc.stderr}")
with open(libc_index, "rb") as f:
    check(f.read() == built, "the rebuilt index differs from the first one")

# A foreign file (another build's index under libc's build id): rebuilt, with a warning.
other = next(n for n in index_files() if n != libc)
shutil.copy(os.path.join(indexes, other), libc_index)
proc = new_dump_run()
check(proc.stdout == truth, "names changed with a foreign index")
check(f"{libc_index}: an address index of build {other.removesuffix('-symbols')}, not {libc}"
      in proc.stderr, f"no warning naming the foreign index: {proc.stderr}")
with open(libc_index, "rb") as f:
    check(f.read() == built, "the index rebuilt over a foreign one differs")

# --no-cache neither reads nor writes indexes.
shutil.rmtree(indexes)
check(heapfold(with_plugin, "--no-cache").stdout == truth, "--no-cache output")
check(index_files() == [], "--no-cache built an index")

# Made ahead by heapkit-index (the same files, byte for byte), then used from the first
# run of a dump (--index never: none is made by it), the index mapped (touched).
libs = ["/lib/x86_64-linux-gnu/libc.so.6", program, fixture("libshared_fixture.so"),
        fixture("libplugin_fixture.so")]
made = run([tool("heapkit-index"), *libs], env=env).stdout.splitlines()
check(len(made) == len(libs) and all(line.split()[1] == "built" for line in made),
      f"heapkit-index: {made}")
check(made[0].split()[2] == libc and made[0].split()[4] == libc_index, f"libc's line: {made[0]}")
with open(libc_index, "rb") as f:
    check(f.read() == built, "heapkit-index made another index than the run did")
os.utime(libc_index, (1_000_000_000, 1_000_000_000))
proc = heapfold(with_plugin, "--index", "never")
check(proc.stdout == truth, "names from indexes made ahead differ from --no-cache")
check(os.stat(libc_index).st_mtime > 1_000_000_000, "the first run did not use libc's index")
again = run([tool("heapkit-index"), "-q", *libs], env=env)
check(again.stdout == "", f"--quiet printed {again.stdout!r}")
check(run([tool("heapkit-index"), libs[0]], env=env).stdout.split()[1] == "kept", "rebuilt")

# What cannot be indexed: a missing file, a text file, an ELF file without a build id. Each
# is named, the status is 1, and the good file beside them is still indexed.
text_file = os.path.join(directory, "notes.txt")
with open(text_file, "w") as f:
    f.write("not ELF\n")
no_id = os.path.join(directory, "no_build_id")
run(["objcopy", "--remove-section", ".note.gnu.build-id", program, no_id])
shutil.rmtree(indexes)
proc = run([tool("heapkit-index"), os.path.join(directory, "missing"), text_file, no_id, program],
           env=env, check=False)
check(proc.returncode == 1, f"heapkit-index on bad files exited {proc.returncode}")
for bad in ("missing", text_file, no_id):
    check(bad in proc.stderr, f"{bad} not named in {proc.stderr!r}")
check(index_files() == [build_id(program)], f"the good file's index: {index_files()}")
check(run([tool("heapkit-index"), "--cache-dir"], check=False).returncode == 1, "usage error")

# --stats says where the cache is, how many indexes it holds and their bytes (as the
# directory lists them) against the bound; --prune keeps them within HEAPKIT_CACHE_MAX_MB,
# the least recently used removed first, but never one another process holds the lock of
# (a reader opening it).
run([tool("heapkit-index"), "-q", *libs], env=env)
names = sorted(index_files(), key=lambda name: name != libc)  # libc's the oldest
sizes = {name: os.path.getsize(os.path.join(indexes, name)) for name in names}
for age, name in enumerate(names):
    os.utime(os.path.join(indexes, name), (1_000_000_000 + age, 1_000_000_000 + age))


def megabytes(size):
    return f"{size / 2**20:.1f} MB"


stats = run([tool("heapkit-index"), "--stats"], env=env).stdout
check(f"cache: {cache}\n" in stats and
      f"address indexes: {len(names)} in {indexes}, {megabytes(sum(sizes.values()))} of the "
      "1024.0 MB they are kept within" in stats, f"--stats: {stats!r}")
bound = 1  # MB: below libc's index with the rest
check(sum(sizes.values()) > bound << 20, f"the indexes take {sizes}, no more than {bound} MB")
held = open(os.path.join(indexes, ".locks", names[0]))
fcntl.flock(held, fcntl.LOCK_SH)
kept, total = set(names), sum(sizes.values())
for name in names[1:]:  # what must go: by age, the held one passed over
    if total <= bound << 20:
        break
    kept.discard(name)
    total -= sizes[name]
pruned = run([tool("heapkit-index"), "--prune"], env=dict(env, HEAPKIT_CACHE_MAX_MB=str(bound)))
check(set(index_files()) == kept and
      pruned.stdout.startswith(f"pruned: {len(names) - len(kept)} index"),
      f"--prune to {bound} MB kept {index_files()}, not {sorted(kept)}: {pruned.stdout!r}")
held.close()
proc = run([tool("heapkit-index"), "--stats"], env=dict(env, HEAPKIT_CACHE_MAX_MB="lots"),
           check=False)
check(proc.returncode == 1 and "HEAPKIT_CACHE_MAX_MB=lots" in proc.stderr,
      f"a bound that is no number: {proc.returncode} {proc.stderr!r}")
print("ok")
