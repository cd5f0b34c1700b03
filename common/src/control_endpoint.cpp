// Control messages beside a lesson's operations: see control_endpoint.hpp.
#include "rdmalab/control_endpoint.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <utility>

namespace rdmalab {

namespace {

Connection with_queues(Connection connection, const QueueSizes& sizes) {
    connection.create_queues(sizes);
    return connection;
}

}  // namespace

ControlEndpoint::ControlEndpoint(Connection connection, const QueueSizes& sizes,
                                 std::size_t slot_size, std::size_t receive_slots)
    : connection_(with_queues(std::move(connection), sizes)),
      sends_(connection_.pd(), slot_size, 1),
      receives_(connection_.pd(), connection_.qp(), slot_size, receive_slots) {}

ibv_wc ControlEndpoint::expect_completion(ibv_wc_opcode opcode, std::string_view what) {
    auto kept = std::find_if(early_.begin(), early_.end(),
                             [opcode](const ibv_wc& wc) { return wc.opcode == opcode; });
    if (kept != early_.end()) {
        ibv_wc wc = *kept;
        early_.erase(kept);
        return wc;
    }
    for (;;) {
        ibv_wc wc = connection_.wait_for_completion(what);
        if (wc.opcode == opcode) return wc;
        if (early_.size() == 8) fail(fmt::format("{}: completions of other kinds pile up", what));
        early_.push_back(wc);
    }
}

void ControlEndpoint::send(std::span<const std::byte> message, std::string_view what) {
    sends_.send(connection_.qp(), 0, message, 0);
    expect_completion(IBV_WC_SEND, what);
}

void ControlEndpoint::send_word(std::uint32_t word) {
    std::array<std::byte, 4> bytes{};
    store_be32(bytes, word);
    send(bytes, "a control word");
}

std::span<const std::byte> ControlEndpoint::receive(std::string_view what) {
    return receives_.message(expect_completion(IBV_WC_RECV, what));
}

void ControlEndpoint::expect_word(std::uint32_t expected, std::string_view what) {
    auto bytes = receive(what);
    if (bytes.size() != 4 || load_be32(bytes) != expected)
        fail(fmt::format("expected {} ({} bytes arrived)", what, bytes.size()));
}

}  // namespace rdmalab
