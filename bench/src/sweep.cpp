// Sweep parsing and expansion: see sweep.hpp.
#include "rdmalab/bench/sweep.hpp"

#include "rdmalab/options.hpp"

#include <fmt/core.h>

namespace rdmalab::bench {

namespace {

std::optional<std::uint64_t> parse_one(const std::string& text) {
    if (text == "0") return 0;  // parse_size refuses 0; some knobs (inline bytes) allow it
    auto value = parse_size(text);
    if (!value) return std::nullopt;
    return static_cast<std::uint64_t>(*value);
}

}  // namespace

std::variant<std::vector<std::uint64_t>, std::string> parse_values(const std::string& text,
                                                                   std::uint64_t min,
                                                                   std::uint64_t max) {
    std::vector<std::uint64_t> values;
    auto in_range = [&](std::uint64_t v) { return v >= min && v <= max; };
    if (auto dots = text.find(".."); dots != std::string::npos) {
        auto low = parse_one(text.substr(0, dots));
        auto high = parse_one(text.substr(dots + 2));
        if (!low || !high) return fmt::format("'{}' is not a range like 32..8192", text);
        if (*low == 0 || (*low & (*low - 1)) != 0 || (*high & (*high - 1)) != 0)
            return fmt::format("range '{}': both ends must be powers of two", text);
        if (*low > *high) return fmt::format("range '{}' runs backwards", text);
        // Both ends are powers of two, so doubling lands exactly on high.
        for (std::uint64_t v = *low;; v *= 2) {
            values.push_back(v);
            if (v >= *high) break;
        }
    } else {
        std::size_t start = 0;
        while (start <= text.size()) {
            std::size_t comma = text.find(',', start);
            std::string item =
                text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            auto value = parse_one(item);
            if (!value) return fmt::format("'{}' is not a number (in '{}')", item, text);
            values.push_back(*value);
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    for (std::uint64_t v : values)
        if (!in_range(v)) return fmt::format("{} is outside {}..{} (in '{}')", v, min, max, text);
    return values;
}

std::vector<Point> cross_product(
    const std::vector<std::pair<std::string, std::vector<std::uint64_t>>>& knobs) {
    std::vector<Point> points{Point{}};
    for (const auto& [name, values] : knobs) {
        std::vector<Point> next;
        for (const Point& partial : points)
            for (std::uint64_t value : values) {
                Point point = partial;
                point[name] = value;
                next.push_back(std::move(point));
            }
        points = std::move(next);
    }
    return points;
}

}  // namespace rdmalab::bench
