// SPDX-License-Identifier: MIT
#include "heapkit/emit/writers.hpp"
#include "test_profiles.hpp"

#include <doctest/doctest.h>
#include <sstream>

using namespace heapkit;

namespace {

struct Row {
    std::string flat, flat_percent, sum_percent, cum, cum_percent;
};

// The table's rows by function name, and its header line.
std::map<std::string, Row> rows_of(const std::string& table, std::string* header = nullptr) {
    std::istringstream lines(table);
    std::string line;
    std::getline(lines, line);
    if (header != nullptr) {
        *header = line;
    }
    std::getline(lines, line); // the column names
    std::map<std::string, Row> rows;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        Row row;
        std::string name;
        fields >> row.flat >> row.flat_percent >> row.sum_percent >> row.cum >> row.cum_percent >>
            name;
        rows[name] = row;
    }
    return rows;
}

} // namespace

TEST_CASE("heapkit::write_text_report gives each function its flat and cum, recursion once") {
    // 1 kB in parse under serve; 3 kB in serve itself; 4 kB in a recursion walk -> walk.
    Profile profile = test::named_profile({{{"main", "serve", "parse"}, 1024},
                                           {{"main", "serve"}, 3072},
                                           {{"main", "walk", "walk"}, 4096}});
    std::string header;
    auto rows = rows_of(
        test::written([&](const Sink& sink) { return write_text_report(profile, {}, {}, sink); }),
        &header);
    CHECK(header == "inuse_space: 8.00kB total, 4 of 4 functions shown");
    CHECK(rows["walk"].flat == "4.00kB");
    CHECK(rows["walk"].cum == "4.00kB"); // counted once though it is twice on the stack
    CHECK(rows["walk"].flat_percent == "50.00%");
    CHECK(rows["serve"].flat == "3.00kB");
    CHECK(rows["serve"].cum == "4.00kB");
    CHECK(rows["parse"].flat == "1.00kB");
    CHECK(rows["main"].flat == "0B");
    CHECK(rows["main"].cum == "8.00kB");
    CHECK(rows["main"].cum_percent == "100.00%");
}

TEST_CASE("heapkit::write_text_report lists the largest flat first, up to node_count") {
    Profile profile =
        test::named_profile({{{"main", "a"}, 100}, {{"main", "b"}, 300}, {{"main", "c"}, 200}});
    std::string table = test::written([&](const Sink& sink) {
        return write_text_report(profile, {}, TextOptions{2, {}}, sink);
    });
    std::istringstream lines(table);
    std::string header, columns, first, second, third;
    std::getline(lines, header);
    std::getline(lines, columns);
    std::getline(lines, first);
    std::getline(lines, second);
    CHECK_FALSE(std::getline(lines, third));
    CHECK(header.find("2 of 4 functions shown") != std::string::npos);
    CHECK(first.ends_with(" b"));
    CHECK(second.ends_with(" c"));
    CHECK(second.find("83.33%") != std::string::npos); // sum%: (300 + 200) / 600
}

TEST_CASE("heapkit::write_text_report_diff gives the changes per function") {
    Profile before = test::named_profile({{{"main", "grew"}, 1024}, {{"main", "shrank"}, 4096}});
    Profile after = test::named_profile({{{"main", "grew"}, 3072}, {{"main", "shrank"}, 1024}});
    std::string header;
    auto rows = rows_of(test::written([&](const Sink& sink) {
                            return write_text_report_diff(before, after, {}, {}, sink);
                        }),
                        &header);
    CHECK(header.starts_with("change of inuse_space: -1.00kB total"));
    CHECK(rows["shrank"].flat == "-3.00kB");
    CHECK(rows["grew"].flat == "2.00kB");
    CHECK(rows["main"].cum == "-1.00kB");
}
