// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/frame.hpp"

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

namespace heapkit {

// A location's chain of frames, innermost first, held through one pointer: an empty chain
// (every location of a dump whose addresses go unnamed, tens of millions in the largest)
// costs 8 bytes and no allocation, where a std::vector cost 24. A named location pays one
// allocation more; named locations are as many as the functions a program has.
class FrameList {
public:
    using value_type = Frame;
    using iterator = Frame*;
    using const_iterator = const Frame*;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    FrameList() = default;
    FrameList(std::vector<Frame> frames) // NOLINT: implicit, as the vector it replaces
        : m_frames(frames.empty() ? nullptr
                                  : std::make_unique<std::vector<Frame>>(std::move(frames))) {}
    FrameList(std::initializer_list<Frame> frames)
        : FrameList(std::vector<Frame>(frames)) {}
    FrameList(const FrameList& other)
        : FrameList(other.m_frames ? *other.m_frames : std::vector<Frame>()) {}
    FrameList(FrameList&&) noexcept = default;
    FrameList& operator=(const FrameList& other) {
        if (this != &other) {
            *this = FrameList(other);
        }
        return *this;
    }
    FrameList& operator=(FrameList&&) noexcept = default;
    ~FrameList() = default;

    size_t size() const { return m_frames ? m_frames->size() : 0; }
    bool empty() const { return size() == 0; }
    Frame* data() { return m_frames ? m_frames->data() : nullptr; }
    const Frame* data() const { return m_frames ? m_frames->data() : nullptr; }
    iterator begin() { return data(); }
    iterator end() { return data() + size(); }
    const_iterator begin() const { return data(); }
    const_iterator end() const { return data() + size(); }
    reverse_iterator rbegin() { return reverse_iterator(end()); }
    reverse_iterator rend() { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
    Frame& operator[](size_t i) { return (*m_frames)[i]; }
    const Frame& operator[](size_t i) const { return (*m_frames)[i]; }
    Frame& front() { return m_frames->front(); }
    const Frame& front() const { return m_frames->front(); }
    Frame& back() { return m_frames->back(); }
    const Frame& back() const { return m_frames->back(); }
    operator std::span<const Frame>() const { return {data(), size()}; } // NOLINT

    void push_back(const Frame& frame) { vector().push_back(frame); }
    template <typename... Args> Frame& emplace_back(Args&&... args) {
        return vector().emplace_back(std::forward<Args>(args)...);
    }
    void clear() { m_frames.reset(); }

    // std::erase_if's, found by argument-dependent lookup.
    template <typename Predicate> friend size_t erase_if(FrameList& list, Predicate predicate) {
        if (!list.m_frames) {
            return 0;
        }
        size_t erased = std::erase_if(*list.m_frames, predicate);
        if (list.m_frames->empty()) {
            list.m_frames.reset();
        }
        return erased;
    }

private:
    std::vector<Frame>& vector() {
        if (!m_frames) {
            m_frames = std::make_unique<std::vector<Frame>>();
        }
        return *m_frames;
    }

    std::unique_ptr<std::vector<Frame>> m_frames; // null when empty
};

} // namespace heapkit
