// Fuzzes the rendezvous lesson's peer messages, with the header the lesson reads them with
// (lessons/rendezvous/rendezvous_messages.hpp): read_offer (the client's offer, as the server
// reads it), then the buffer advertisement it carries decoded as the server does (kReadSource);
// read_fin (the server's FIN, as the client reads it). Checks: only rdmalab::Error refuses; an
// accepted offer is exactly kOfferBytes starting "RNDV", its buffer the 24 bytes after the tag,
// and make_offer writes a decoded buffer back to the same bytes; an accepted FIN is 8 bytes
// starting "FIN\0" and make_fin writes it back.
#include "../../lessons/rendezvous/rendezvous_messages.hpp"
#include "fuzz.hpp"

#include <algorithm>

using namespace rdmalab;
using namespace rdmalab::rendezvous;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = fuzz::bytes(data, size);
    std::span<const std::byte> buffer;
    if (fuzz::accepts([&] { buffer = read_offer(wire); })) {
        FUZZ_CHECK(size == kOfferBytes && load_be32(wire.first(4)) == kOfferTag);
        FUZZ_CHECK(buffer.data() == wire.data() + 4 && buffer.size() == kRemoteBufferWireSize);
        RemoteBuffer source;
        if (fuzz::accepts(
                [&] { source = decode_remote_buffer_or_throw(buffer, BufferUse::kReadSource); }))
            FUZZ_CHECK(std::ranges::equal(make_offer(source), wire));
    }
    std::uint32_t verified = 0;
    if (fuzz::accepts([&] { verified = read_fin(wire); })) {
        FUZZ_CHECK(size == kFinBytes && load_be32(wire.first(4)) == kFinTag);
        FUZZ_CHECK(verified == load_be32(wire.last(4)));
        FUZZ_CHECK(std::ranges::equal(make_fin(verified), wire));
    }
    return 0;
}
