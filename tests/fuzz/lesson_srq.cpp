// Fuzzes the srq lesson's peer messages, with the header the lesson reads them with
// (lessons/srq/srq_messages.hpp): read_go (the server's "go", as the client reads it) and
// read_message_header (a client's message, as the server reads it). Checks: only rdmalab::Error
// refuses; an accepted go names a client 1..clients of at most kMaxClients; an accepted header
// announces 1..kMaxMessages messages and an index below that; both read exactly the big-endian
// words they were sent.
#include "../../lessons/srq/srq_messages.hpp"
#include "fuzz.hpp"

using namespace rdmalab;
using namespace rdmalab::srq;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = rdmalab::fuzz::bytes(data, size);
    Go go;
    if (rdmalab::fuzz::accepts([&] { go = read_go(wire); })) {
        FUZZ_CHECK(size == sizeof(Control));
        FUZZ_CHECK(go.number >= 1 && go.number <= go.clients && go.clients <= kMaxClients);
        FUZZ_CHECK(go.number == load_be32(wire.first(4)) &&
                   go.largest == load_be32(wire.subspan(8, 4)));
    }
    MessageHeader header;
    if (rdmalab::fuzz::accepts([&] { header = read_message_header(wire); })) {
        FUZZ_CHECK(size >= kMessageHeader);
        FUZZ_CHECK(header.count >= 1 && header.count <= kMaxMessages &&
                   header.index < header.count);
        FUZZ_CHECK(header.index == load_be32(wire.first(4)) &&
                   header.count == load_be32(wire.subspan(4, 4)));
    }
    return 0;
}
