// Fuzzes the efa-rdm lesson's hello (the libfabric address exchange) as receive_fabric_hello
// decodes it: fabric_hello_size on the fixed-size header, decode_fabric_hello on the whole.
// Checks: only rdmalab::Error refuses; a size, when given, is at least the header's; an
// accepted hello is exactly the size its header says, re-encodes to the same bytes, and has a
// printable provider name of 1..64 bytes and an address of 1..256 bytes.
#include "efa_rdm_exchange.hpp"
#include "fuzz.hpp"

#include <algorithm>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = fuzz::bytes(data, size);
    std::size_t said = 0;
    const bool sized = wire.size() >= kFabricHelloHeaderSize && fuzz::accepts([&] {
                           said = fabric_hello_size(wire.first(kFabricHelloHeaderSize), "server");
                       });
    if (sized) FUZZ_CHECK(said > kFabricHelloHeaderSize);
    FabricHello hello;
    if (!fuzz::accepts([&] { hello = decode_fabric_hello(wire, "server"); })) return 0;
    FUZZ_CHECK(sized && said == wire.size());
    FUZZ_CHECK(std::ranges::equal(encode_fabric_hello(hello), wire));
    FUZZ_CHECK(!hello.provider.empty() && hello.provider.size() <= kMaxFabricProviderName);
    FUZZ_CHECK(std::ranges::all_of(hello.provider, [](char c) { return c > ' ' && c <= '~'; }));
    FUZZ_CHECK(!hello.address.empty() && hello.address.size() <= kMaxFabricAddress);
    return 0;
}
