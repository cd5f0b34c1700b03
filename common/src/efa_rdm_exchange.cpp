// The efa-rdm lesson's out-of-band exchange: see efa_rdm_exchange.hpp.
#include "rdmalab/efa_rdm_exchange.hpp"

#include "rdmalab/error.hpp"

#include <endian.h>
#include <fmt/core.h>

#include <array>
#include <cstring>

namespace rdmalab {

namespace {

constexpr std::uint32_t kMagic = 0x52444d46;  // "RDMF"
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kValues = 7;
constexpr std::size_t kHeaderSize = 5 * 4 + kValues * 8;

void store_be32(std::uint8_t* out, std::uint32_t value) {
    value = htobe32(value);
    std::memcpy(out, &value, sizeof value);
}

std::uint32_t load_be32(const std::uint8_t* in) {
    std::uint32_t value;
    std::memcpy(&value, in, sizeof value);
    return be32toh(value);
}

}  // namespace

void store_be64(void* out, std::uint64_t value) {
    value = htobe64(value);
    std::memcpy(out, &value, sizeof value);
}

std::uint64_t load_be64(const void* in) {
    std::uint64_t value;
    std::memcpy(&value, in, sizeof value);
    return be64toh(value);
}

std::vector<std::uint8_t> encode_fabric_hello(const FabricHello& hello) {
    std::vector<std::uint8_t> bytes(kHeaderSize);
    store_be32(&bytes[0], kMagic);
    store_be32(&bytes[4], kVersion);
    store_be32(&bytes[8], hello.address_format);
    store_be32(&bytes[12], static_cast<std::uint32_t>(hello.provider.size()));
    store_be32(&bytes[16], static_cast<std::uint32_t>(hello.address.size()));
    const std::array<std::uint64_t, kValues> values = {
        hello.receive_capacity,    hello.write_target.address, hello.write_target.key,
        hello.write_target.length, hello.read_source.address,  hello.read_source.key,
        hello.read_source.length};
    for (std::size_t i = 0; i < kValues; ++i) store_be64(&bytes[20 + 8 * i], values[i]);
    bytes.insert(bytes.end(), hello.provider.begin(), hello.provider.end());
    bytes.insert(bytes.end(), hello.address.begin(), hello.address.end());
    return bytes;
}

void send_fabric_hello(TcpExchange& exchange, const FabricHello& hello) {
    exchange.send_all(encode_fabric_hello(hello));
}

FabricHello receive_fabric_hello(TcpExchange& exchange, std::string_view peer) {
    std::array<std::uint8_t, kHeaderSize> header{};
    try {
        exchange.receive_exact(header);
    } catch (const Error& error) {
        fail(fmt::format("no hello from the {} ({})", peer, error.what()));
    }
    if (load_be32(&header[0]) != kMagic || load_be32(&header[4]) != kVersion)
        fail(fmt::format("the {} did not send an efa-rdm hello (wrong magic or version)", peer));
    FabricHello hello;
    hello.address_format = load_be32(&header[8]);
    const std::uint32_t provider_length = load_be32(&header[12]);
    const std::uint32_t address_length = load_be32(&header[16]);
    if (provider_length == 0 || provider_length > kMaxFabricProviderName || address_length == 0 ||
        address_length > kMaxFabricAddress)
        fail(fmt::format(
            "the {} sent a provider name of {} bytes and an address of {} bytes "
            "(limits 1-{} and 1-{})",
            peer, provider_length, address_length, kMaxFabricProviderName, kMaxFabricAddress));
    std::array<std::uint64_t, kValues> values{};
    for (std::size_t i = 0; i < kValues; ++i) values[i] = load_be64(&header[20 + 8 * i]);
    hello.receive_capacity = values[0];
    hello.write_target = {values[1], values[2], values[3]};
    hello.read_source = {values[4], values[5], values[6]};
    std::vector<std::uint8_t> provider(provider_length);
    exchange.receive_exact(provider);
    for (std::uint8_t c : provider)  // it is compared and printed: printable ASCII only
        if (c < 0x21 || c > 0x7e)
            fail(fmt::format("the {} sent an unprintable provider name", peer));
    hello.provider.assign(provider.begin(), provider.end());
    hello.address.resize(address_length);
    exchange.receive_exact(hello.address);
    return hello;
}

}  // namespace rdmalab
