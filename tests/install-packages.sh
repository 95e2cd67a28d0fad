#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages heapkit builds and tests with, when any is missing.
#   tests/install-packages.sh          all of them (the test suite's programs too)
#   tests/install-packages.sh --demo   what examples/demo.sh needs: the build, go tool pprof
set -euo pipefail

# What meson needs to configure and build (objcopy from binutils: the tests' fixtures),
# and go tool pprof, which the demo shows the heap with.
build_packages=(
  g++ meson ninja-build pkg-config python3 binutils
  protobuf-compiler libprotobuf-dev libcli11-dev libfmt-dev libexpected-dev doctest-dev
  libdw-dev libelf-dev zlib1g-dev libiberty-dev
  # libdw.a's own dependencies, for the tools' static link (cmd/static)
  libbz2-dev liblzma-dev
  libjemalloc-dev libjemalloc2
  # the runtime's HTTP server reads requests with nodejs' http-parser
  libhttp-parser-dev
  # jemalloc's statistics in JSON (jestat, lib/heapkit/stats)
  nlohmann-json3-dev
  # compressed debug sections inflated faster than zlib (symbolize/inflated_debug_file)
  libdeflate-dev
  # regexes in pprof's syntax, matched in linear time (util/regex: --drop-frames, --focus,
  # the allocator-frame patterns)
  libre2-dev
  golang-go
)

packages=(
  "${build_packages[@]}" wrk
  # the Debian packages built and checked (tests/e2e/test_deb.py: dpkg-buildpackage checks
  # for build-essential, which a fresh machine's g++ alone does not bring), bash
  # completion's helpers
  build-essential debhelper dpkg-dev lintian git bash-completion
  # real consumers and ground truth used by the tests
  elfutils llvm man-db groff-base util-linux curl
  # heapfold --svg's graphs rendered and scripted in a real browser (headless)
  chromium
  # the pages' JavaScript (lib/heapkit/emit/js) parsed and run through the vectors the C++
  # is run through (tests/e2e/test_js_vectors.py): node starts in a tenth of the time chromium does
  nodejs
  # ld.so's full symbol table (its _dl_start_user label; test_size0_labels)
  libc6-dbg
  # CPython's interpreter with its separate debug file: address indexes compared with
  # libdw's answers on a real module (tests/unit/test_symbolize_address_index.cpp)
  python3.11-dbg
  # a real jemalloc program (test_redis.py): Debian's redis links the system jemalloc
  redis-server redis-tools
  # libheapkit-agent.so inside programs nobody relinks (tests/e2e/test_agent_*.py):
  # varnishd (a manager and its forked child), and a real Prometheus scraping /metrics;
  # varnish is also profiled as the README's recipe says (test_varnish.py)
  varnish prometheus
  # Knot Resolver's kresd (LuaJIT and jemalloc): CPU profiles through JIT code
  # (test_agent_kresd.py)
  knot-resolver
  # nghttpx, a master and the worker it forks (test_agent_nghttpx.py)
  nghttp2-proxy
  # BIND 9's named, jemalloc through libisc (test_bind9.py), and dig to ask it
  bind9 bind9-dnsutils
  # a real debuginfod server on loopback (test_stripped_names.py); iproute2 brings up
  # the loopback of its network namespace
  debuginfod iproute2
  # the benchmark harness (bench/run.py): peak memory through /usr/bin/time -v
  time
  # fuzzing and sanitizer runs (tests/fuzz/run.sh, .ci/run)
  clang libclang-rt-14-dev
)

if [ "${1:-}" = --demo ]; then
  packages=("${build_packages[@]}")
fi

# One dpkg-query for all: when nothing is missing (CI calls this, then tests/run.sh calls it
# again) it returns at once. Unknown packages are left out of its answer, so missing.
installed=" $(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
  awk '$2 == "ii" {printf "%s ", $1}' || true)"
missing=()
for package in "${packages[@]}"; do
  [[ $installed == *" $package "* ]] || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "installing: ${missing[*]}" >&2
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
