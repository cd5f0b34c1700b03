// Unit tests for round-trip costs: latency percentiles and CPU time per round trip, their table,
// and the sentence comparing two rows.
#include "rdmalab/round_trip_costs.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace rdmalab;
using std::chrono::microseconds;

TEST(RoundTripCosts, PerRoundTripFromSamplesAndCpuTime) {
    // Ten samples, 1 µs … 10 µs: nearest-rank median 5 µs, p99 10 µs.
    std::vector<double> samples_ns;
    for (int i = 10; i >= 1; --i) samples_ns.push_back(i * 1000.0);
    const CpuTime client{microseconds(40), microseconds(60)};
    const CpuTime server{microseconds(10), microseconds(0)};
    const RoundTripCosts c = round_trip_costs(samples_ns, client, server, 10);
    EXPECT_DOUBLE_EQ(c.median_us, 5);
    EXPECT_DOUBLE_EQ(c.p99_us, 10);
    EXPECT_DOUBLE_EQ(c.client_cpu_us, 10);  // (40 + 60) / 10
    EXPECT_DOUBLE_EQ(c.client_user_us, 4);
    EXPECT_DOUBLE_EQ(c.server_cpu_us, 1);
    EXPECT_DOUBLE_EQ(c.server_user_us, 1);
}

TEST(RoundTripCosts, TableHasAHeaderAndOneLinePerRow) {
    const std::vector<RoundTripRow> rows{
        {"send-recv-busy", {10.04, 20.06, 1.5, 1.25, 2.5, 2.25}},
        {"write-read", {3, 4, 0.126, 0.5, 0, 0}},
    };
    const std::string table = format_round_trip_table(rows);
    EXPECT_EQ(table,
              "mode                    median µs     p99 µs  client CPU  server CPU  client user  "
              "server user\n"
              "send-recv-busy               10.0       20.1        1.50        2.50         1.25  "
              "       2.25\n"
              "write-read                    3.0        4.0        0.13        0.00         0.50  "
              "       0.00\n");
}

TEST(RoundTripCosts, FindsARowByItsLabel) {
    const std::vector<RoundTripRow> rows{{"a", {1, 0, 0, 0, 0, 0}}, {"b", {2, 0, 0, 0, 0, 0}}};
    ASSERT_NE(find_round_trip_row(rows, "b"), nullptr);
    EXPECT_DOUBLE_EQ(find_round_trip_row(rows, "b")->median_us, 2);
    EXPECT_EQ(find_round_trip_row(rows, "c"), nullptr);
}

TEST(RoundTripCosts, CpuChangeNamesBothSidesFromAndTo) {
    const RoundTripCosts busy{
        .client_cpu_us = 20, .client_user_us = 9.14, .server_cpu_us = 18, .server_user_us = 8};
    const RoundTripCosts events{
        .client_cpu_us = 12, .client_user_us = 2, .server_cpu_us = 11.05, .server_user_us = 1.5};
    EXPECT_EQ(format_cpu_change(busy, events),
              "user-space CPU per round trip from 9.1 to 2.0 µs (client) and from 8.0 to 1.5 µs "
              "(server); user + system from 20.0 to 12.0 µs (client) and from 18.0 to 11.1 µs "
              "(server)");
}
