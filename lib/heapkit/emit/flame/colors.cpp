// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/colors.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace heapkit {
namespace {

// One channel: base + spread * one of the name's three hash fractions.
struct Channel {
    uint8_t base;
    uint8_t spread;
    uint8_t fraction; // 0, 1 or 2
};

struct Scheme {
    std::string_view name;
    std::array<Channel, 3> rgb;
    Background background;
};

// Multi-hue palettes vary two channels apart; the single-hue ones vary lightness only.
constexpr std::array<Scheme, 10> schemes{{
    {"mem", {{{0, 40, 2}, {180, 60, 0}, {20, 190, 1}}}, {{244, 248, 244}, {214, 245, 214}}},
    {"hot", {{{210, 45, 1}, {40, 180, 0}, {0, 50, 2}}}, {{248, 248, 240}, {240, 238, 186}}},
    {"io", {{{80, 60, 0}, {80, 60, 0}, {195, 60, 1}}}, {{244, 244, 248}, {218, 218, 250}}},
    {"red", {{{200, 55, 0}, {50, 80, 0}, {50, 80, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
    {"green", {{{50, 60, 0}, {200, 55, 0}, {50, 60, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
    {"blue", {{{80, 60, 0}, {80, 60, 0}, {205, 50, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
    {"aqua", {{{50, 60, 0}, {165, 55, 0}, {165, 55, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
    {"yellow", {{{175, 55, 0}, {175, 55, 0}, {50, 20, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
    {"purple", {{{190, 65, 0}, {80, 60, 0}, {190, 65, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
    {"orange", {{{190, 65, 0}, {90, 65, 0}, {0, 0, 0}}}, {{248, 248, 248}, {232, 232, 232}}},
}};

const Scheme& scheme_of(Palette palette) {
    return schemes[static_cast<size_t>(palette)];
}

// FNV-1a, then a final mix so that names differing in their last byte still spread.
uint64_t name_hash(std::string_view name) {
    uint64_t hash = 0xcbf29ce484222325;
    for (char c : name) {
        hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3;
    }
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccd;
    hash ^= hash >> 33;
    return hash;
}

uint8_t channel(const Channel& c, const std::array<double, 3>& fractions) {
    return static_cast<uint8_t>(c.base + std::lround(c.spread * fractions[c.fraction]));
}

} // namespace

std::optional<Palette> parse_palette(std::string_view name) {
    for (size_t i = 0; i < schemes.size(); ++i) {
        if (schemes[i].name == name) {
            return static_cast<Palette>(i);
        }
    }
    return std::nullopt;
}

std::string_view palette_names() {
    return "mem, hot, io, red, green, blue, aqua, yellow, purple, orange";
}

Rgb frame_color(Palette palette, std::string_view name) {
    uint64_t hash = name_hash(name);
    std::array<double, 3> fractions{};
    for (double& fraction : fractions) {
        fraction = static_cast<double>(hash & 0xffff) / 0xffff;
        hash >>= 16;
    }
    const Scheme& scheme = scheme_of(palette);
    return {channel(scheme.rgb[0], fractions), channel(scheme.rgb[1], fractions),
            channel(scheme.rgb[2], fractions)};
}

Rgb change_color(int64_t delta, uint64_t largest) {
    double size = delta < 0 ? -static_cast<double>(delta) : static_cast<double>(delta);
    double share = std::clamp(size / static_cast<double>(std::max<uint64_t>(largest, 1)), 0.0, 1.0);
    auto faded = static_cast<uint8_t>(255 - std::lround(215 * share));
    if (delta > 0) {
        return {255, faded, faded}; // grew: red
    }
    if (delta < 0) {
        return {faded, faded, 255}; // shrank: blue
    }
    return {255, 255, 255};
}

Background background_of(Palette palette) {
    return scheme_of(palette).background;
}

} // namespace heapkit
