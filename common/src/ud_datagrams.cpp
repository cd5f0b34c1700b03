// Datagrams, their tally, the GRH area and the port behind an IP address: see ud_datagrams.hpp.
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

std::string format_ip(const sockaddr_storage& address) {
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
                  sizeof text);
    else
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, text,
                  sizeof text);
    return text;
}

namespace {

// The GID a RoCE v2 port gives an IP address: IPv4 as ::ffff:a.b.c.d, IPv6 as itself.
ibv_gid gid_of_address(const sockaddr_storage& address) {
    ibv_gid gid{};
    if (address.ss_family == AF_INET) {
        gid.raw[10] = gid.raw[11] = 0xff;
        std::memcpy(&gid.raw[12], &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, 4);
    } else {
        std::memcpy(gid.raw, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, 16);
    }
    return gid;
}

// Every valid GID entry of every port of an open device.
std::vector<ibv_gid_entry> gid_table(ibv_context* context) {
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context, &device), "ibv_query_device");
    std::size_t capacity = 0;
    for (std::uint8_t port = 1; port <= device.phys_port_cnt; ++port) {
        ibv_port_attr attributes{};
        check_ibv(ibv_query_port(context, port, &attributes), "ibv_query_port");
        capacity += static_cast<std::size_t>(attributes.gid_tbl_len);
    }
    std::vector<ibv_gid_entry> entries(capacity);
    ssize_t count = ibv_query_gid_table(context, entries.data(), entries.size(), 0);
    check_errno(count >= 0, "ibv_query_gid_table");
    entries.resize(static_cast<std::size_t>(count));
    return entries;
}

bool port_is_active(ibv_context* context, std::uint8_t port) {
    ibv_port_attr attributes{};
    return ibv_query_port(context, port, &attributes) == 0 && attributes.state == IBV_PORT_ACTIVE;
}

}  // namespace

LocalPort open_port_for_address(const sockaddr_storage& address, const std::string& device,
                                int gid_index) {
    require_device_exists(device);
    const ibv_gid wanted = gid_of_address(address);
    auto devices = get_devices();
    for (ibv_device* candidate : devices.all) {
        if (!device.empty() && device != ibv_get_device_name(candidate)) continue;
        LocalPort local;
        local.context.reset(check_ptr(ibv_open_device(candidate), "ibv_open_device"));
        const auto entries = gid_table(local.context.get());
        auto found = std::find_if(entries.begin(), entries.end(), [&](const ibv_gid_entry& entry) {
            return entry.gid_type == IBV_GID_TYPE_ROCE_V2 &&
                   std::memcmp(entry.gid.raw, wanted.raw, 16) == 0;
        });
        if (found == entries.end()) continue;
        ibv_gid_entry chosen = *found;
        if (gid_index >= 0)
            check_ibv(ibv_query_gid_ex(local.context.get(), found->port_num,
                                       static_cast<std::uint32_t>(gid_index), &chosen, 0),
                      fmt::format("ibv_query_gid_ex(--gid-index {})", gid_index));
        local.port = static_cast<std::uint8_t>(chosen.port_num);
        local.gid_index = static_cast<int>(chosen.gid_index);
        local.gid = chosen.gid;
        check_ibv(ibv_query_port(local.context.get(), local.port, &local.attributes),
                  "ibv_query_port");
        if (local.attributes.state != IBV_PORT_ACTIVE)
            fail(fmt::format("{} port {} is {}, not ACTIVE", ibv_get_device_name(candidate),
                             local.port, ibv_port_state_str(local.attributes.state)));
        local.description = fmt::format("{} port {}, GID index {} ({} {})",
                                        ibv_get_device_name(candidate), local.port, local.gid_index,
                                        gid_type_name(chosen.gid_type), format_gid(chosen.gid));
        return local;
    }
    fail(fmt::format(
        "no RDMA {} carries {}: no RoCE v2 GID {} (is it the address of an RDMA interface?)",
        device.empty() ? std::string("device") : "device " + device, format_ip(address),
        format_gid(wanted)));
}

std::optional<std::string> first_rdma_ipv4_address(const std::string& device) {
    require_device_exists(device);
    auto devices = get_devices();
    for (ibv_device* candidate : devices.all) {
        if (!device.empty() && device != ibv_get_device_name(candidate)) continue;
        Context context{check_ptr(ibv_open_device(candidate), "ibv_open_device")};
        for (const ibv_gid_entry& entry : gid_table(context.get())) {
            if (entry.gid_type != IBV_GID_TYPE_ROCE_V2 || !is_ipv4_mapped(entry.gid)) continue;
            if (!port_is_active(context.get(), static_cast<std::uint8_t>(entry.port_num))) continue;
            char text[INET_ADDRSTRLEN] = {};
            return std::string(inet_ntop(AF_INET, &entry.gid.raw[12], text, sizeof text));
        }
    }
    return std::nullopt;
}

}  // namespace rdmalab
