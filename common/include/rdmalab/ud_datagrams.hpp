// What the UD lessons share (ud, multicast, loss-and-retransmission): the datagram they send (a
// header with a sequence number, then a pattern), the receiver's tally of what arrived (lost,
// duplicated, reordered), and the 40-byte GRH area in front of every UD receive.
#pragma once

#include "rdmalab/verbs.hpp"

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace rdmalab {

// Every UD receive buffer starts with 40 bytes the NIC fills with the packet's Global Route
// Header (InfiniBand, RoCE v1, RoCE v2 over IPv6) or, for RoCE v2 over IPv4, with the IPv4
// header in its last 20 bytes. The payload follows; wc.byte_len counts both.
inline constexpr std::size_t kGrhBytes = 40;

// A datagram: 16-byte header, big-endian: magic "RDUD" (data) or "RDUE" (end of stream) |
// sequence | count (how many data datagrams the sender sends) | length (of the whole datagram);
// then pattern bytes seeded by the sequence number. An end datagram has sequence == count.
inline constexpr std::size_t kDatagramHeaderBytes = 16;
// The most datagrams one run may announce: a receiver allocates its tally from the count.
inline constexpr std::uint32_t kMaxDatagramCount = 1'000'000;

enum class DatagramKind { kData, kEnd };

struct Datagram {
    DatagramKind kind = DatagramKind::kData;
    std::uint32_t sequence = 0;
    std::uint32_t count = 0;
};

// Fills all of message (at least kDatagramHeaderBytes) with one datagram.
void write_datagram(std::span<std::byte> message, const Datagram& datagram);

// Decodes and checks a received payload (the bytes after the GRH area): magic, length equal to
// the payload's, sequence < count ≤ kMaxDatagramCount (== count for an end datagram), and every
// pattern byte. Returns the reason when anything is wrong.
std::variant<Datagram, std::string> read_datagram(std::span<const std::byte> payload);

// The receiver's account, from sequence numbers alone: UD may drop (and, across a fabric,
// duplicate or reorder) datagrams, and nobody else will say so.
class SequenceTally {
  public:
    explicit SequenceTally(std::uint32_t count) : seen_(count, false) {}
    void record(std::uint32_t sequence);  // sequence < count (read_datagram checks it)
    std::uint32_t count() const { return static_cast<std::uint32_t>(seen_.size()); }
    std::uint32_t received() const { return distinct_; }  // distinct datagrams
    std::uint32_t lost() const { return count() - distinct_; }
    std::uint32_t duplicates() const { return duplicates_; }
    std::uint32_t out_of_order() const { return out_of_order_; }  // arrived after a later one

  private:
    std::vector<bool> seen_;
    std::uint32_t distinct_ = 0;
    std::uint32_t duplicates_ = 0;
    std::uint32_t out_of_order_ = 0;
    std::optional<std::uint32_t> highest_;
};

// What the GRH area of a receive says about the packet, when it holds an IPv4 header (RoCE v2
// over IPv4) or a GRH (version 6); nullopt otherwise.
struct NetworkHeader {
    bool ipv4 = false;
    std::string source;       // "198.51.100.1" or a GID
    std::string destination;  // our address, or the multicast group
};
std::optional<NetworkHeader> read_network_header(std::span<const std::byte, kGrhBytes> grh_area);

}  // namespace rdmalab
