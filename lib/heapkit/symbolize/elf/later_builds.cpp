// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/later_builds.hpp"

#include <ctime>
#include <fmt/chrono.h>
#include <fmt/format.h>

namespace heapkit {
namespace {

std::string utc_time(int64_t nanos) {
    std::time_t seconds = static_cast<std::time_t>(nanos / 1'000'000'000);
    return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(seconds));
}

bool newer_than_dump(const Module& module, const ElfModule& file) {
    return module.dumped_nanos != 0 && file.modified_nanos() > module.dumped_nanos;
}

// The flag that gives the right file for `module`.
std::string_view what_to_give(const Module& module) {
    return module.is_main ? "--binary FILE (or --path-map OLD=NEW)"
                          : "--path-map OLD=NEW (or --sysroot DIR)";
}

} // namespace

std::optional<BuildDoubt> doubt_build(const Module& module, const std::string& path,
                                      const ElfModule& file,
                                      const std::function<const ElfModule*()>& at_dump_path) {
    if (file.file_size() < module.least_file_size) {
        return BuildDoubt{true, fmt::format("{} is {} bytes, shorter than the dump maps it "
                                            "({} bytes at least): not the build that ran",
                                            path, file.file_size(), module.least_file_size)};
    }
    if (!newer_than_dump(module, file)) {
        return std::nullopt;
    }
    // A copy elsewhere, made after the dump, of the file still at the dump's path.
    if (const ElfModule* there = at_dump_path();
        there != nullptr && !newer_than_dump(module, *there)) {
        return std::nullopt;
    }
    return BuildDoubt{
        false, fmt::format("{} was modified at {}, after the dump that maps it was written: "
                           "if it was rebuilt since the process ran, the names it gives are "
                           "wrong (the dump carries no build id to tell); give the build the "
                           "dump was taken from with {}",
                           path, utc_time(file.modified_nanos()), what_to_give(module))};
}

std::string later_build_problem(const std::string& path, const ElfModule& file) {
    return fmt::format("{}: modified at {}, after the dump was written (a later build?), and "
                       "not used under --strict",
                       path, utc_time(file.modified_nanos()));
}

} // namespace heapkit
