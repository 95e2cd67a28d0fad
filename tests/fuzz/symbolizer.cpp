// SPDX-License-Identifier: MIT
// Any bytes as an ELF file (through a temporary file, as the symbolizer reads files):
// opening it, placing a mapping, naming addresses and building its address index (every
// unit's DIEs and line table read, the line tables in a session of their own) must never
// crash.
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/index/address_index_builder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace {

const std::string& scratch_path() {
    static const std::string path = [] {
        // Every input is written here: on a disk-backed /tmp the writes, not the
        // symbolizer, bound the rate, so TMPDIR may point at a tmpfs.
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/heapkit-fuzz-elf-XXXXXX";
        int fd = ::mkstemp(pattern.data());
        ::close(fd);
        return pattern;
    }();
    return path;
}

uint64_t read_u64(const uint8_t* data, size_t size, size_t at) {
    uint64_t value = 0;
    for (size_t i = 0; i < 8 && at + i < size; ++i) {
        value |= static_cast<uint64_t>(data[at + i]) << (8 * i);
    }
    return value;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const heapkit::DebugSearch search({});
    const std::string& path = scratch_path();
    int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    if (fd < 0 || ::write(fd, data, size) != static_cast<ssize_t>(size)) {
        std::abort();
    }
    ::close(fd);
    auto module = heapkit::ElfModule::open(path, search);
    if (!module) {
        return 0;
    }
    heapkit::StringPool pool; // per input: memory stays flat over a long run
    heapkit::FrameStrings strings(pool);
    heapkit::Module mapping;
    mapping.file_offset = read_u64(data, size, 24) & 0xfffff000;
    mapping.start = 0x555555554000 + mapping.file_offset;
    mapping.limit = mapping.start + 0x100000;
    static_cast<void>((*module)->fits_mapping(mapping));
    static_cast<void>((*module)->is_jemalloc());
    static_cast<void>((*module)->has_dwarf());
    // Addresses from the bytes themselves, and up to 32 spread over the file.
    for (size_t at = 24; at + 8 <= size && at < 24 + 8 * 16; at += 8) {
        static_cast<void>((*module)->frames_at(read_u64(data, size, at), strings));
    }
    // A bounded number of lookups per input keeps the target fast enough for long runs.
    uint64_t stride = std::max<uint64_t>(64, size / 32);
    for (uint64_t offset = 0; offset < size; offset += stride) {
        if (auto vaddr = (*module)->vaddr_of_file_offset(offset)) {
            static_cast<void>((*module)->frames_at(*vaddr, strings));
        }
    }
    static_cast<void>(heapkit::build_address_index(**module, "fuzz"));
    return 0;
}
