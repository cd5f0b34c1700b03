// Datagrams, their tally and the GRH area: see ud_datagrams.hpp.
#include "rdmalab/ud_datagrams.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/pattern.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace rdmalab {

namespace {

constexpr std::uint32_t kDataMagic = 0x52445544;  // "RDUD"
constexpr std::uint32_t kEndMagic = 0x52445545;   // "RDUE"

// Different for every datagram, so a stale or misdelivered buffer fails the check.
std::uint64_t datagram_seed(const Datagram& datagram) {
    return (std::uint64_t{datagram.kind == DatagramKind::kEnd ? 2u : 1u} << 32) | datagram.sequence;
}

}  // namespace

void write_datagram(std::span<std::byte> message, const Datagram& datagram) {
    if (message.size() < kDatagramHeaderBytes)
        fail(fmt::format("a datagram needs at least {} bytes, not {}", kDatagramHeaderBytes,
                         message.size()));
    ByteWriter header(message.first(kDatagramHeaderBytes), "the datagram header");
    header.u32(datagram.kind == DatagramKind::kEnd ? kEndMagic : kDataMagic);
    header.u32(datagram.sequence);
    header.u32(datagram.count);
    header.u32(static_cast<std::uint32_t>(message.size()));
    fill_pattern(message.subspan(kDatagramHeaderBytes), datagram_seed(datagram));
}

std::variant<Datagram, std::string> read_datagram(std::span<const std::byte> payload) {
    if (payload.size() < kDatagramHeaderBytes)
        return fmt::format("{} bytes is shorter than a datagram header ({} bytes)", payload.size(),
                           kDatagramHeaderBytes);
    ByteReader header(payload.first(kDatagramHeaderBytes), "the datagram header");
    const std::uint32_t magic = header.u32();
    if (magic != kDataMagic && magic != kEndMagic)
        return fmt::format("not a datagram of this lesson (magic {:#010x})", magic);
    Datagram datagram{.kind = magic == kEndMagic ? DatagramKind::kEnd : DatagramKind::kData,
                      .sequence = header.u32(),
                      .count = header.u32()};
    const std::uint32_t length = header.u32();
    if (length != payload.size())
        return fmt::format("the header says {} bytes but {} arrived", length, payload.size());
    if (datagram.count == 0 || datagram.count > kMaxDatagramCount)
        return fmt::format("count {} is outside 1..{}", datagram.count, kMaxDatagramCount);
    if (datagram.kind == DatagramKind::kData && datagram.sequence >= datagram.count)
        return fmt::format("sequence {} is not below the count {}", datagram.sequence,
                           datagram.count);
    if (datagram.kind == DatagramKind::kEnd && datagram.sequence != datagram.count)
        return fmt::format("end datagram with sequence {} (expected {})", datagram.sequence,
                           datagram.count);
    if (auto mismatch =
            find_pattern_mismatch(payload.subspan(kDatagramHeaderBytes), datagram_seed(datagram)))
        return fmt::format("sequence {}: byte {} differs from what was sent", datagram.sequence,
                           kDatagramHeaderBytes + *mismatch);
    return datagram;
}

void SequenceTally::record(std::uint32_t sequence) {
    if (seen_[sequence]) {
        ++duplicates_;
        return;
    }
    seen_[sequence] = true;
    ++distinct_;
    if (highest_ && sequence < *highest_) ++out_of_order_;
    highest_ = std::max(sequence, highest_.value_or(0));
}

std::optional<NetworkHeader> read_network_header(std::span<const std::byte, kGrhBytes> grh_area) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(grh_area.data());
    char text[INET6_ADDRSTRLEN] = {};
    // RoCE v2 over IPv4: a 20-byte IPv4 header (version 4, header length 5 words) in bytes 20..39.
    if (bytes[20] == 0x45) {
        NetworkHeader header{.ipv4 = true, .source = {}, .destination = {}};
        header.source = inet_ntop(AF_INET, bytes + 20 + 12, text, sizeof text);
        header.destination = inet_ntop(AF_INET, bytes + 20 + 16, text, sizeof text);
        return header;
    }
    // A GRH (IP version 6 layout): source GID at bytes 8..23, destination GID at 24..39.
    if ((bytes[0] >> 4) == 6) {
        ibv_gid source{}, destination{};
        std::memcpy(source.raw, bytes + 8, 16);
        std::memcpy(destination.raw, bytes + 24, 16);
        return NetworkHeader{
            .ipv4 = false, .source = format_gid(source), .destination = format_gid(destination)};
    }
    return std::nullopt;
}

}  // namespace rdmalab
