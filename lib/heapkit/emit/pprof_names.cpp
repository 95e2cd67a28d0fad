// SPDX-License-Identifier: MIT
#include "heapkit/emit/pprof_names.hpp"

#include "heapkit/read/pprof_fields.hpp"
#include "heapkit/util/string_map.hpp"
#include "heapkit/util/utf8.hpp"
#include "profile.pb.h"

#include <algorithm>
#include <climits>
#include <google/protobuf/io/coded_stream.h>
#include <limits>
#include <map>
#include <tuple>

namespace heapkit {
namespace {

namespace pb = perftools::profiles;
using google::protobuf::io::CodedOutputStream;

// Profile's fields this rewrites (profile.proto); every other field is copied as it is.
constexpr uint32_t mapping_field = 3;
constexpr uint32_t location_field = 4;
constexpr uint32_t function_field = 5;
constexpr uint32_t string_field = 6;
constexpr uint32_t length_delimited = pprof_length_delimited;

// What each mapping gains, from the locations named in it.
struct MappingGains {
    bool functions = false;
    bool files = false;
    bool lines = false;
    bool inline_frames = false;
};

// The frames to add at a location of the file: none where its producer named it, it has
// no mapping, or the symbolizer found no symbol.
bool gains_lines(const PprofLocation& before, const Location& after) {
    return before.lines.empty() && before.mapping != pprof_none && !after.frames.empty() &&
           !after.anonymous;
}

std::vector<MappingGains> gains_of(const PprofFile& file, const Profile& named) {
    std::vector<MappingGains> gains(file.mappings.size());
    for (size_t l = 0; l < file.locations.size(); ++l) {
        const Location& location = named.locations[l];
        if (!gains_lines(file.locations[l], location)) {
            continue;
        }
        MappingGains& mapping = gains[file.locations[l].mapping];
        mapping.functions = true;
        mapping.inline_frames |= location.frames.size() > 1;
        for (const Frame& frame : location.frames) {
            mapping.files |= !frame.file.empty();
            mapping.lines |= frame.line > 0;
        }
    }
    return gains;
}

// The functions and strings added, after the producer's: a string the file has already
// is named by its index there.
class Additions {
public:
    Additions(const PprofFile& file, uint64_t first_function_id)
        : m_first_string(file.strings.size())
        , m_next_function(first_function_id) {
        for (size_t s = file.strings.size(); s-- > 0;) { // the first index of each text
            m_strings.insert_or_assign(file.strings[s], static_cast<int64_t>(s));
        }
    }

    uint64_t function(const Frame& frame) {
        auto key = std::tie(frame.name, frame.system_name, frame.file, frame.start_line);
        if (auto found = m_functions.find(key); found != m_functions.end()) {
            return found->second;
        }
        pb::Function& entry = m_function_entries.emplace_back();
        entry.set_id(m_next_function++);
        entry.set_name(string(frame.name.empty() ? frame.system_name : frame.name));
        entry.set_system_name(string(frame.system_name));
        entry.set_filename(string(frame.file));
        entry.set_start_line(frame.start_line);
        m_functions.emplace(key, entry.id());
        return entry.id();
    }

    const std::vector<pb::Function>& functions() const { return m_function_entries; }
    const std::vector<std::string>& strings() const { return m_string_entries; }

private:
    int64_t string(std::string_view text) {
        std::string valid = valid_utf8(text); // proto3 strings must be UTF-8
        if (auto found = m_strings.find(valid); found != m_strings.end()) {
            return found->second;
        }
        auto index = static_cast<int64_t>(m_first_string + m_string_entries.size());
        m_strings.emplace(valid, index);
        m_string_entries.push_back(std::move(valid));
        return index;
    }

    using Key = std::tuple<std::string_view, std::string_view, std::string_view, uint32_t>;
    size_t m_first_string;
    StringMap<int64_t> m_strings;
    std::vector<std::string> m_string_entries;
    uint64_t m_next_function;
    std::map<Key, uint64_t> m_functions;
    std::vector<pb::Function> m_function_entries;
};

// A length-delimited field's tag and length, before its `size` bytes.
void append_head(std::string& out, uint32_t field, size_t size) {
    uint8_t head[10];
    uint8_t* end = CodedOutputStream::WriteTagToArray(field << 3 | length_delimited, head);
    end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), end);
    out.append(reinterpret_cast<const char*>(head), static_cast<size_t>(end - head));
}

void append_field(std::string& out, uint32_t field, const google::protobuf::MessageLite& message) {
    append_head(out, field, message.ByteSizeLong());
    message.AppendToString(&out);
}

void append_string(std::string& out, std::string_view text) {
    append_head(out, string_field, text.size());
    out.append(text);
}

} // namespace

Result<std::string> add_pprof_names(std::string_view encoded, const PprofFile& file,
                                    const Profile& named, PprofNamesAdded* added) {
    if (named.locations.size() != file.locations.size() || encoded.size() > INT_MAX) {
        return fail("the named profile does not match the pprof it was read from");
    }
    std::vector<MappingGains> gains = gains_of(file, named);
    // New functions take ids after the file's largest: ids need not be dense.
    uint64_t most_new = 0; // functions: at most one per frame added
    for (size_t l = 0; l < file.locations.size(); ++l) {
        if (gains_lines(file.locations[l], named.locations[l])) {
            most_new += named.locations[l].frames.size();
        }
    }
    if (file.largest_function_id > std::numeric_limits<uint64_t>::max() - most_new) {
        return fail("its function ids leave no room for the {} new ones", most_new);
    }
    Additions additions(file, file.largest_function_id + 1);

    std::string out;
    out.reserve(encoded.size() + encoded.size() / 4);
    size_t location = 0;
    size_t mapping = 0;
    PprofNamesAdded counts;
    Result<void> copied = each_pprof_field(encoded, [&](uint32_t field, std::string_view whole,
                                                        std::string_view body) {
        if (field == location_field && location < file.locations.size() &&
            gains_lines(file.locations[location], named.locations[location])) {
            pb::Location entry;
            entry.ParseFromArray(body.data(), static_cast<int>(body.size()));
            for (const Frame& frame : named.locations[location].frames) {
                pb::Line* line = entry.add_line();
                line->set_function_id(additions.function(frame));
                line->set_line(frame.line);
                line->set_column(frame.column);
            }
            append_field(out, location_field, entry);
            ++counts.locations;
        } else if (field == mapping_field && mapping < gains.size() && gains[mapping].functions) {
            pb::Mapping entry;
            entry.ParseFromArray(body.data(), static_cast<int>(body.size()));
            const MappingGains& gained = gains[mapping];
            entry.set_has_functions(true);
            entry.set_has_filenames(entry.has_filenames() || gained.files);
            entry.set_has_line_numbers(entry.has_line_numbers() || gained.lines);
            entry.set_has_inline_frames(entry.has_inline_frames() || gained.inline_frames);
            append_field(out, mapping_field, entry);
        } else {
            out.append(whole);
        }
        location += field == location_field;
        mapping += field == mapping_field;
    });
    if (!copied) {
        return tl::unexpected(copied.error());
    }
    // After every string of the file: the table's indexes are the order strings come in.
    for (const pb::Function& function : additions.functions()) {
        append_field(out, function_field, function);
    }
    for (const std::string& text : additions.strings()) {
        append_string(out, text);
    }
    counts.functions = additions.functions().size();
    if (added != nullptr) {
        *added = counts;
    }
    return out;
}

} // namespace heapkit
