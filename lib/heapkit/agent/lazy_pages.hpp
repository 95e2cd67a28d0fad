// SPDX-License-Identifier: MIT
// The pages of the libraries the agent brings into a host, kept to those it uses.
#pragma once

namespace heapkit::agent {

// The objects loaded in this process now (up to a fixed number), to compare against later.
struct LoadedObjects {
    static constexpr int capacity = 1024;
    unsigned long bases[capacity];
    int count = 0;
};

// Fills `objects` with the base addresses of every object loaded now. Allocates nothing.
void note_loaded_objects(LoadedObjects& objects);

// For each object loaded since `before` was noted (the agent's core and the libraries it
// brought): its read-only segments are told the kernel will read them at random
// (MADV_RANDOM: no fault-around, one page per fault) and let go of (MADV_DONTNEED: clean
// file pages stay in the page cache, so a page used again costs a minor fault). Returns
// the bytes let go of.
unsigned long release_new_objects_pages(const LoadedObjects& before);

} // namespace heapkit::agent
