// Round-trip latency and CPU costs, and their table: see round_trip_costs.hpp.
#include "rdmalab/round_trip_costs.hpp"

#include "rdmalab/percentile.hpp"

#include <fmt/core.h>

namespace rdmalab {

RoundTripCosts round_trip_costs(const std::vector<double>& samples_ns, const CpuTime& client,
                                const CpuTime& server, std::uint32_t round_trips) {
    const double n = round_trips;
    return {.median_us = percentile(samples_ns, 0.5) / 1000,
            .p99_us = percentile(samples_ns, 0.99) / 1000,
            .client_cpu_us = client.total_us() / n,
            .client_user_us = static_cast<double>(client.user.count()) / n,
            .server_cpu_us = server.total_us() / n,
            .server_user_us = static_cast<double>(server.user.count()) / n};
}

std::string format_round_trip_table(std::span<const RoundTripRow> rows) {
    std::string table =
        fmt::format("{:<22} {:>10} {:>10} {:>11} {:>11} {:>12} {:>12}\n", "mode", "median µs",
                    "p99 µs", "client CPU", "server CPU", "client user", "server user");
    for (const auto& [label, c] : rows)
        table += fmt::format("{:<22} {:>10.1f} {:>10.1f} {:>11.2f} {:>11.2f} {:>12.2f} {:>12.2f}\n",
                             label, c.median_us, c.p99_us, c.client_cpu_us, c.server_cpu_us,
                             c.client_user_us, c.server_user_us);
    return table;
}

const RoundTripCosts* find_round_trip_row(std::span<const RoundTripRow> rows,
                                          std::string_view label) {
    for (const auto& row : rows)
        if (row.label == label) return &row.costs;
    return nullptr;
}

std::string format_cpu_change(const RoundTripCosts& from, const RoundTripCosts& to) {
    return fmt::format(
        "user-space CPU per round trip from {:.1f} to {:.1f} µs (client) and from {:.1f} to "
        "{:.1f} µs (server); user + system from {:.1f} to {:.1f} µs (client) and from {:.1f} to "
        "{:.1f} µs (server)",
        from.client_user_us, to.client_user_us, from.server_user_us, to.server_user_us,
        from.client_cpu_us, to.client_cpu_us, from.server_cpu_us, to.server_cpu_us);
}

}  // namespace rdmalab
