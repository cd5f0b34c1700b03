// Fuzzes decode_remote_buffer: the buffer advertisement in rdma_cm private data, as the peer
// sent it. For each use a client may expect, checks: a buffer or a non-empty reason; an
// accepted record is at least 24 bytes, re-encodes to its first 24, has the expected use, a
// length > 0 and no wrap-around; the _or_throw forms agree (rdmalab::Error with the same reason,
// nothing else) and the `needed` form accepts exactly needed <= length.
#include "rdmalab/private_data.hpp"
#include "fuzz.hpp"

#include <algorithm>
#include <limits>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = fuzz::bytes(data, size);
    for (BufferUse use :
         {BufferUse::kWriteTarget, BufferUse::kReadSource, BufferUse::kAtomicTarget}) {
        const auto answer = decode_remote_buffer(wire, use);
        RemoteBuffer thrown{};
        const bool accepted =
            fuzz::accepts([&] { thrown = decode_remote_buffer_or_throw(wire, use); });
        FUZZ_CHECK(accepted == fuzz::holds_value(answer));
        if (!accepted) continue;
        const RemoteBuffer buffer = std::get<RemoteBuffer>(answer);
        FUZZ_CHECK(wire.size() >= kRemoteBufferWireSize);
        FUZZ_CHECK(
            std::ranges::equal(encode_remote_buffer(buffer), wire.first(kRemoteBufferWireSize)));
        FUZZ_CHECK(buffer.use == use && buffer.length > 0);
        FUZZ_CHECK(buffer.address <= std::numeric_limits<std::uint64_t>::max() - buffer.length);
        FUZZ_CHECK(thrown.address == buffer.address && thrown.rkey == buffer.rkey &&
                   thrown.length == buffer.length && thrown.use == buffer.use);
        FUZZ_CHECK(fuzz::accepts([&] { decode_remote_buffer_or_throw(wire, use, buffer.length); }));
        FUZZ_CHECK(!fuzz::accepts(
            [&] { decode_remote_buffer_or_throw(wire, use, std::size_t{buffer.length} + 1); }));
    }
    return 0;
}
