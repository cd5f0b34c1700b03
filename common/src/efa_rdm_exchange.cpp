// The efa-rdm lesson's out-of-band exchange: see efa_rdm_exchange.hpp.
#include "rdmalab/efa_rdm_exchange.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <array>

namespace rdmalab {

namespace {

constexpr std::uint32_t kMagic = 0x52444d46;  // "RDMF"
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kValues = 7;
constexpr std::size_t kHeaderSize = 5 * 4 + kValues * 8;

}  // namespace

std::vector<std::byte> encode_fabric_hello(const FabricHello& hello) {
    std::vector<std::byte> bytes;
    ByteWriter out(bytes, "the efa-rdm hello");
    out.u32(kMagic);
    out.u32(kVersion);
    out.u32(hello.address_format);
    out.u32(static_cast<std::uint32_t>(hello.provider.size()));
    out.u32(static_cast<std::uint32_t>(hello.address.size()));
    for (std::uint64_t value :
         {hello.receive_capacity, hello.write_target.address, hello.write_target.key,
          hello.write_target.length, hello.read_source.address, hello.read_source.key,
          hello.read_source.length})
        out.u64(value);
    out.bytes(std::as_bytes(std::span(hello.provider)));
    out.bytes(hello.address);
    return bytes;
}

void send_fabric_hello(TcpExchange& exchange, const FabricHello& hello) {
    exchange.send_all(encode_fabric_hello(hello));
}

FabricHello receive_fabric_hello(TcpExchange& exchange, std::string_view peer) {
    std::array<std::byte, kHeaderSize> header{};
    try {
        exchange.receive_exact(header);
    } catch (const Error& error) {
        fail(fmt::format("no hello from the {} ({})", peer, error.what()));
    }
    ByteReader in(header, "the efa-rdm hello");
    const std::uint32_t magic = in.u32();
    const std::uint32_t version = in.u32();
    if (magic != kMagic || version != kVersion)
        fail(fmt::format("the {} did not send an efa-rdm hello (wrong magic or version)", peer));
    FabricHello hello;
    hello.address_format = in.u32();
    const std::uint32_t provider_length = in.u32();
    const std::uint32_t address_length = in.u32();
    if (provider_length == 0 || provider_length > kMaxFabricProviderName || address_length == 0 ||
        address_length > kMaxFabricAddress)
        fail(fmt::format(
            "the {} sent a provider name of {} bytes and an address of {} bytes "
            "(limits 1-{} and 1-{})",
            peer, provider_length, address_length, kMaxFabricProviderName, kMaxFabricAddress));
    // Braced initializers are evaluated in order: the values are read as they are laid out.
    hello.receive_capacity = in.u64();
    hello.write_target = {.address = in.u64(), .key = in.u64(), .length = in.u64()};
    hello.read_source = {.address = in.u64(), .key = in.u64(), .length = in.u64()};
    in.expect_end();
    hello.provider.resize(provider_length);
    exchange.receive_exact(std::as_writable_bytes(std::span(hello.provider)));
    for (unsigned char c : hello.provider)  // it is compared and printed: printable ASCII only
        if (c < 0x21 || c > 0x7e)
            fail(fmt::format("the {} sent an unprintable provider name", peer));
    hello.address.resize(address_length);
    exchange.receive_exact(hello.address);
    return hello;
}

}  // namespace rdmalab
