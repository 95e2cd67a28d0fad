// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <new>
#include <span>
#include <stdexcept>
#include <sys/mman.h>
#include <type_traits>
#include <unistd.h>
#include <utility>

namespace heapkit {

// A growable array of trivially copyable values, for the arrays that grow with the input
// (a dump's stacks and frames, a profile's samples: millions of entries). Unlike a
// std::vector it keeps its values in an anonymous mapping of its own:
// - growing remaps the pages (mremap) instead of copying them, so the old and the new
//   block are never resident together: no copy and no 1.5x peak at each doubling;
// - from 2 MiB on it asks for transparent huge pages: filling 64 MiB then costs 32 page
//   faults instead of 16384 (in a VM, faults took more time than parsing itself).
// Each non-empty PodVector takes at least one page: not for small arrays.
template <class T> class PodVector {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;

    PodVector() = default;
    PodVector(std::initializer_list<T> values) { append(values.begin(), values.size()); }
    PodVector(const PodVector& other) { append(other.data(), other.size()); }
    PodVector(PodVector&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr))
        , m_size(std::exchange(other.m_size, 0))
        , m_capacity(std::exchange(other.m_capacity, 0)) {}
    PodVector& operator=(PodVector other) noexcept {
        swap(other);
        return *this;
    }
    ~PodVector() {
        if (m_data != nullptr) {
            ::munmap(m_data, mapped_bytes(m_capacity));
        }
    }

    void swap(PodVector& other) noexcept {
        std::swap(m_data, other.m_data);
        std::swap(m_size, other.m_size);
        std::swap(m_capacity, other.m_capacity);
    }

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    T* data() { return m_data; }
    const T* data() const { return m_data; }
    T* begin() { return m_data; }
    T* end() { return m_data + m_size; }
    const T* begin() const { return m_data; }
    const T* end() const { return m_data + m_size; }
    T& operator[](size_t i) { return m_data[i]; }
    const T& operator[](size_t i) const { return m_data[i]; }
    const T& at(size_t i) const {
        if (i >= m_size) {
            throw std::out_of_range("PodVector::at");
        }
        return m_data[i];
    }
    T& back() { return m_data[m_size - 1]; }
    const T& back() const { return m_data[m_size - 1]; }

    void reserve(size_t count) {
        if (count > m_capacity) {
            reallocate(count);
        }
    }
    void push_back(const T& value) {
        if (m_size == m_capacity) {
            T copy = value; // `value` may be one of ours, moved by the remap
            reallocate(std::max(m_size + 1, m_capacity * 2));
            m_data[m_size++] = copy;
            return;
        }
        m_data[m_size++] = value;
    }
    void append(const T* values, size_t count) {
        if (count > m_capacity - m_size) {
            std::less<const T*> before; // a total order, also for unrelated pointers
            bool ours = !before(values, m_data) && before(values, m_data + m_size);
            size_t offset = ours ? static_cast<size_t>(values - m_data) : 0;
            reallocate(std::max(m_size + count, m_capacity * 2));
            if (ours) {
                values = m_data + offset;
            }
        }
        if (count != 0) {
            std::memcpy(m_data + m_size, values, count * sizeof(T));
        }
        m_size += count;
    }
    void append(std::span<const T> values) { append(values.data(), values.size()); }
    void resize(size_t count, const T& value = T()) {
        reserve(count);
        std::fill(m_data + std::min(m_size, count), m_data + count, value);
        m_size = count;
    }
    void clear() { m_size = 0; }
    // Lets go of the memory of the whole pages below value `count`, for an array read once
    // from the front (a profile's samples made into a page's tables): it shrinks as it is
    // read, where it was held whole until the end. Those values read as zeros after; the
    // size and the capacity stay.
    void release_front(size_t count) {
        size_t bytes = std::min(count, m_size) * sizeof(T) / page_size() * page_size();
        if (bytes != 0) {
            ::madvise(m_data, bytes, MADV_DONTNEED); // our own private mapping: zeros next
        }
    }

private:
    static size_t page_size() {
        static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
        return size;
    }
    static size_t mapped_bytes(size_t capacity) {
        if (capacity > SIZE_MAX / sizeof(T) - page_size()) {
            throw std::bad_alloc();
        }
        return (capacity * sizeof(T) + page_size() - 1) / page_size() * page_size();
    }

    void reallocate(size_t capacity) {
        size_t bytes = mapped_bytes(capacity);
        void* mapped =
            m_data == nullptr
                ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : ::mremap(m_data, mapped_bytes(m_capacity), bytes, MREMAP_MAYMOVE);
        if (mapped == MAP_FAILED) {
            throw std::bad_alloc();
        }
        constexpr size_t huge_page = 2 << 20;
        if (bytes >= huge_page) {
            ::madvise(mapped, bytes, MADV_HUGEPAGE); // a hint: without it, small pages
        }
        m_data = static_cast<T*>(mapped);
        m_capacity = bytes / sizeof(T); // the whole mapping
    }

    T* m_data = nullptr;
    size_t m_size = 0;
    size_t m_capacity = 0;
};

} // namespace heapkit
