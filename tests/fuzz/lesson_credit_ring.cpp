// Fuzzes the credit-ring lesson's ring request, with the header the lesson reads it with
// (lessons/credit-ring/credit_ring_messages.hpp): read_request (as the server reads it), then the
// credit word's advertisement decoded as the server does (kWriteTarget). Checks: only
// rdmalab::Error refuses; an accepted request is exactly kRequestBytes starting "RING", its
// advertisement the 24 bytes after the tag, its count the last word, 1..kMaxRingMessages; and
// make_request writes a decoded request back to the same bytes.
#include "../../lessons/credit-ring/credit_ring_messages.hpp"
#include "fuzz.hpp"

#include <algorithm>

using namespace rdmalab;
using namespace rdmalab::credit_ring;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = fuzz::bytes(data, size);
    RingRequest request;
    if (!fuzz::accepts([&] { request = read_request(wire); })) return 0;
    FUZZ_CHECK(size == kRequestBytes && load_be32(wire.first(4)) == kRingTag);
    FUZZ_CHECK(request.credit_word.data() == wire.data() + 4 &&
               request.credit_word.size() == kRemoteBufferWireSize);
    FUZZ_CHECK(request.count == load_be32(wire.last(4)));
    FUZZ_CHECK(request.count >= 1 && request.count <= kMaxRingMessages);
    RemoteBuffer credit;
    if (fuzz::accepts([&] {
            credit = decode_remote_buffer_or_throw(request.credit_word, BufferUse::kWriteTarget);
        }))
        FUZZ_CHECK(std::ranges::equal(make_request(credit, request.count), wire));
    return 0;
}
