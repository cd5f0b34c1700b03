// The efa-rdm lesson's out-of-band exchange: see efa_rdm_exchange.hpp.
#include "efa_rdm_exchange.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

namespace rdmalab {

namespace {

constexpr std::uint32_t kMagic = 0x52444d46;  // "RDMF"
constexpr std::uint32_t kVersion = 1;

struct Lengths {
    std::uint32_t provider = 0;
    std::uint32_t address = 0;
};

// Reads and checks the header's fields into hello; returns the lengths of what follows it.
Lengths read_header(ByteReader& in, FabricHello& hello, std::string_view peer) {
    const std::uint32_t magic = in.u32();
    const std::uint32_t version = in.u32();
    if (magic != kMagic || version != kVersion)
        fail(fmt::format("the {} did not send an efa-rdm hello (wrong magic or version)", peer));
    hello.address_format = in.u32();
    const Lengths lengths{.provider = in.u32(), .address = in.u32()};
    if (lengths.provider == 0 || lengths.provider > kMaxFabricProviderName ||
        lengths.address == 0 || lengths.address > kMaxFabricAddress)
        fail(fmt::format(
            "the {} sent a provider name of {} bytes and an address of {} bytes "
            "(limits 1-{} and 1-{})",
            peer, lengths.provider, lengths.address, kMaxFabricProviderName, kMaxFabricAddress));
    // Braced initializers are evaluated in order: the values are read as they are laid out.
    hello.receive_capacity = in.u64();
    hello.write_target = {.address = in.u64(), .key = in.u64(), .length = in.u64()};
    hello.read_source = {.address = in.u64(), .key = in.u64(), .length = in.u64()};
    return lengths;
}

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
    std::vector<std::byte> bytes(kFabricHelloHeaderSize);
    try {
        exchange.receive_exact(bytes);
    } catch (const Error& error) {
        fail(fmt::format("no hello from the {} ({})", peer, error.what()));
    }
    bytes.resize(fabric_hello_size(bytes, peer));
    exchange.receive_exact(std::span(bytes).subspan(kFabricHelloHeaderSize));
    return decode_fabric_hello(bytes, peer);
}

std::size_t fabric_hello_size(std::span<const std::byte> header, std::string_view peer) {
    ByteReader in(header, "the efa-rdm hello");
    FabricHello ignored;
    const Lengths lengths = read_header(in, ignored, peer);
    in.expect_end();
    return kFabricHelloHeaderSize + lengths.provider + lengths.address;
}

FabricHello decode_fabric_hello(std::span<const std::byte> bytes, std::string_view peer) {
    ByteReader in(bytes, "the efa-rdm hello");
    FabricHello hello;
    const Lengths lengths = read_header(in, hello, peer);
    for (std::byte byte : in.bytes(lengths.provider)) {
        // It is compared and printed: printable ASCII only.
        const auto c = std::to_integer<unsigned char>(byte);
        if (c < 0x21 || c > 0x7e)
            fail(fmt::format("the {} sent an unprintable provider name", peer));
        hello.provider += static_cast<char>(c);
    }
    const std::span<const std::byte> address = in.bytes(lengths.address);
    hello.address.assign(address.begin(), address.end());
    in.expect_end();
    return hello;
}

}  // namespace rdmalab
