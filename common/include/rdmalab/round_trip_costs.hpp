// What one way of doing a round trip costs, measured: its latency (median and p99 of the
// samples, nearest rank: percentile.hpp) and the CPU time each side spent per round trip, user +
// system and user alone (getrusage: cpu_time.hpp); and the table that sets the ways side by side,
// as the OpenFabrics slides' ping-pong summary does.
#pragma once

#include "rdmalab/cpu_time.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab {

// Microseconds, per round trip.
struct RoundTripCosts {
    double median_us = 0, p99_us = 0;
    double client_cpu_us = 0, client_user_us = 0, server_cpu_us = 0, server_user_us = 0;
};

// From round_trips latency samples in nanoseconds and the CPU time each side used over them.
RoundTripCosts round_trip_costs(const std::vector<double>& samples_ns, const CpuTime& client,
                                const CpuTime& server, std::uint32_t round_trips);

// One row of the table: the way of waiting (or sending) it measured, and its costs.
struct RoundTripRow {
    std::string label;
    RoundTripCosts costs;
};

// A header line ("mode  median µs  p99 µs  client CPU …"), then one line per row; each line
// ends in a newline. The label column is 22 characters wide.
std::string format_round_trip_table(std::span<const RoundTripRow> rows);

// The costs of the row labelled `label`, or nullptr if there is none.
const RoundTripCosts* find_round_trip_row(std::span<const RoundTripRow> rows,
                                          std::string_view label);

// How the CPU time per round trip changed from one row to another: "user-space CPU per round
// trip from 9.1 to 2.0 µs (client) and from … (server); user + system from … (server)".
std::string format_cpu_change(const RoundTripCosts& from, const RoundTripCosts& to);

}  // namespace rdmalab
