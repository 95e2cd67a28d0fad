// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/index_store.hpp"

#include "heapkit/symbolize/index/address_index_builder.hpp"
#include "heapkit/symbolize/index/build_lock.hpp"
#include "heapkit/symbolize/index/cache_directory.hpp"
#include "heapkit/symbolize/index/cache_usage.hpp"
#include "heapkit/util/output.hpp"
#include "heapkit/util/private_files.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>

namespace heapkit {

IndexStore::IndexStore(const std::string& directory, uint64_t max_bytes)
    : m_directory(directory.empty() ? std::string()
                                    : fmt::format("{}/index-{}", directory, address_index_version))
    , m_max_bytes(max_bytes) {}

IndexStore::Held& IndexStore::load(const std::string& key, const std::string& build_id) {
    auto [it, inserted] = m_held.try_emplace(key);
    Held& held = it->second;
    if (!inserted || m_directory.empty()) {
        return held;
    }
    std::string path = path_of(key);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        return held; // not built yet
    }
    // Held while the file is opened and mapped, so that no prune removes it meanwhile;
    // one that did before (when no lock file was there) leaves it not built.
    UniqueFd reading = BuildLock::hold_for_reading(m_directory, key);
    auto mapped = InputBuffer::open_regular(path);
    if (!mapped && ::lstat(path.c_str(), &st) != 0) {
        return held;
    }
    if (!mapped) {
        m_warnings.push_back(fmt::format("address index not used: {}", mapped.error().message));
        return held;
    }
    held.mapped = std::move(*mapped); // first: the index views its final place
    auto index = AddressIndex::open(held.mapped->text(), path);
    if (index && index->build_id() != build_id) {
        index = fail("{}: an address index of build {}, not {}", path, index->build_id(), build_id);
    }
    if (!index) {
        m_warnings.push_back(fmt::format("{}; building it again", index.error().message));
        held.mapped.reset();
        return held;
    }
    held.index = *index;
    // Recently used: kept longest. (The file, never what a link leads to.)
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    return held;
}

bool IndexStore::has(const std::string& key, const std::string& build_id) {
    return !key.empty() && load(key, build_id).index.has_value();
}

void IndexStore::look_again(const std::string& key) {
    auto it = m_held.find(key);
    if (it != m_held.end() && !it->second.index && it->second.built.empty()) {
        m_held.erase(it);
    }
}

const AddressIndex* IndexStore::find(const std::string& key, const std::string& build_id) {
    if (key.empty()) {
        return nullptr;
    }
    Held& held = load(key, build_id);
    return held.index ? &*held.index : nullptr;
}

bool IndexStore::keep_built(const std::string& key, Held& held) {
    auto index = AddressIndex::open(held.built, key); // our own bytes
    if (!index) {
        return false;
    }
    held.index = *index;
    save(key, held);
    return true;
}

void IndexStore::build(const std::vector<std::pair<std::string, const ElfModule*>>& wanted,
                       BuildLock::Wait wait, Keep keep) {
    if (m_directory.empty()) {
        return;
    }
    // Each key once, and in one order for every process: a second flock on a key this
    // process holds waits for itself, and two processes taking two keys in opposite
    // orders wait for each other (flock detects neither). Paths of one build (libfoo.so
    // and libfoo.so.1, /lib and /usr/lib) give one key twice.
    std::vector<std::pair<std::string, const ElfModule*>> keys = wanted;
    std::sort(keys.begin(), keys.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    keys.erase(std::unique(keys.begin(), keys.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               keys.end());
    struct Missing {
        const std::string* key;
        Held* held;
        const ElfModule* file;
    };
    std::vector<Missing> missing;
    std::vector<BuildLock> locks; // held until the indexes are saved
    for (const auto& [key, file] : keys) {
        Held& held = load(key, file->build_id());
        if (held.index || !held.built.empty()) {
            continue;
        }
        auto lock = BuildLock::take(m_directory, key, wait);
        if (!lock) {
            continue; // another process is building it
        }
        look_again(key); // it may have finished while this one waited
        if (!load(key, file->build_id()).index) {
            missing.push_back({&key, &m_held.at(key), file});
            locks.push_back(std::move(*lock));
        }
    }
    // A bounded pool: each thread takes the next unbuilt file. Files are distinct
    // (distinct keys, distinct builds), and each ElfModule has its own libdwfl session.
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i; (i = next.fetch_add(1)) < missing.size();) {
            auto [key, held, file] = missing[i];
            try { // an exception must not leave a thread (std::terminate)
                held->built = build_address_index(*file, file->build_id(),
                                                  keep == Keep::saved_files ? FileAfter::closed
                                                                            : FileAfter::kept);
            } catch (const std::exception& error) {
                held->built.clear(); // no index: the module is named from its file
                held->failure = error.what();
            }
            if (keep == Keep::saved_files) {
                file->close_file();
                std::lock_guard saving(m_saving);
                if (!held->built.empty() && keep_built(*key, *held)) {
                    *held = Held{}; // look_again() below has find() map the file
                }
            }
        }
    };
    size_t threads =
        std::min<size_t>(std::max(1U, std::thread::hardware_concurrency()), missing.size());
    std::vector<std::jthread> pool;
    for (size_t i = 1; i < threads; ++i) {
        pool.emplace_back(work);
    }
    work();
    pool.clear(); // joins
    for (const auto& [key, file] : keys) {
        Held& held = m_held.try_emplace(key).first->second;
        if (!held.index && !held.built.empty()) {
            keep_built(key, held);
        }
        if (!held.failure.empty()) {
            m_warnings.push_back(
                fmt::format("no address index of build {} could be made: {}", key, held.failure));
        }
        if (keep == Keep::saved_files) {
            look_again(key);
        }
    }
}

void IndexStore::save(const std::string& key, Held& held) {
    if (auto made = make_private_directory(m_directory); !made) {
        m_warnings.push_back(fmt::format("address index not saved: {}", made.error().message));
        return;
    }
    if (auto ok = write_output({path_of(key), false, false, false}, held.built); !ok) {
        m_warnings.push_back(fmt::format("address index not saved: {}", ok.error().message));
        return;
    }
    m_wrote = true;
}

std::vector<std::string> IndexStore::take_warnings() {
    if (m_wrote) {
        prune_indexes(m_directory, m_max_bytes, m_warnings);
        m_wrote = false;
    }
    std::vector<std::string> warnings;
    std::swap(warnings, m_warnings);
    std::sort(warnings.begin(), warnings.end());
    warnings.erase(std::unique(warnings.begin(), warnings.end()), warnings.end());
    return warnings;
}

} // namespace heapkit
