// The efa-rdm lesson's out-of-band exchange: before two libfabric endpoints can talk, each
// needs the other's endpoint address (opaque bytes from fi_getname: a sockaddr for tcp, a string
// for shm, GID + QPN + Q_Key for EFA); the server also says where the client may write and read.
// Carried over a TcpExchange; everything received is bounded and checked before use.
#pragma once

#include "rdmalab/tcp_exchange.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab {

// A registered region a peer may access: what it passes to fi_write/fi_read.
struct FabricRegion {
    std::uint64_t address = 0;  // a virtual address or an offset, as the provider's mr_mode says
    std::uint64_t key = 0;
    std::uint64_t length = 0;
};

// The provider's name and address format travel with the address, so a peer that uses another
// provider is refused instead of misread.
struct FabricHello {
    std::string provider;                // fi_info::fabric_attr->prov_name
    std::uint32_t address_format = 0;    // fi_info::addr_format
    std::vector<std::byte> address;      // from fi_getname
    std::uint64_t receive_capacity = 0;  // server: the largest SEND it can receive
    FabricRegion write_target;           // server: where the client may write
    FabricRegion read_source;            // server: what the client may read
};

inline constexpr std::size_t kMaxFabricProviderName = 64;
inline constexpr std::size_t kMaxFabricAddress = 256;

// Wire format: "RDMF" | version 1 | address format | provider length | address length (4 bytes
// each, big-endian), seven 8-byte values (capacity, write target, read source), provider name,
// address.
std::vector<std::byte> encode_fabric_hello(const FabricHello& hello);
void send_fabric_hello(TcpExchange& exchange, const FabricHello& hello);
// Throws rdmalab::Error naming `peer` ("server", "client") if the hello is missing or malformed.
FabricHello receive_fabric_hello(TcpExchange& exchange, std::string_view peer);

// The decoding receive_fabric_hello does, on bytes (and so testable without a connection).
// The header is the fixed-size start, up to the provider name: it says how long the rest is.
inline constexpr std::size_t kFabricHelloHeaderSize = 5 * 4 + 7 * 8;
// The whole hello's size, from its header (exactly kFabricHelloHeaderSize bytes): throws
// rdmalab::Error naming `peer` for a wrong magic or version, or a length outside its limits.
std::size_t fabric_hello_size(std::span<const std::byte> header, std::string_view peer);
// A whole hello (header, provider name, address): the header's checks, exactly the size it
// says, and a printable provider name; throws rdmalab::Error naming `peer` otherwise.
FabricHello decode_fabric_hello(std::span<const std::byte> bytes, std::string_view peer);

}  // namespace rdmalab
