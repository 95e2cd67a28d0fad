// SPDX-License-Identifier: MIT
// The precompiled header of libheapkit and libheapkit-runtime (meson's cpp_pch): the
// standard and third-party headers most of their sources include, parsed once a library
// instead of once a source. Only headers from outside heapkit: a change to heapkit's own
// would rebuild every source. Sources still include what they use: a build with
// -Db_pch=false shows one that does not (the precompiled header hides it).
#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <tl/expected.hpp>
#include <unordered_map>
#include <vector>
