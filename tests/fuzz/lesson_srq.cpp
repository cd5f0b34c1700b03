// Fuzzes the srq lesson's peer messages, with the header the lesson reads them with
// (lessons/srq/srq_messages.hpp): read_go and read_verified (the server's "go" and verdict, as
// the client reads them) and read_message_header (a client's message, as the server reads it).
// Checks: only rdmalab::Error refuses; an accepted go names a client 1..clients of at most
// kMaxClients; an accepted header announces 1..kMaxMessages messages and an index below that;
// each reads exactly the big-endian words it was sent, which its writer (encode_go,
// encode_verified, write_message_header) writes back.
#include "../../lessons/srq/srq_messages.hpp"
#include "fuzz.hpp"

#include <algorithm>
#include <array>

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
        const Control again = encode_go(go);
        FUZZ_CHECK(std::equal(again.begin(), again.end(), wire.begin()));
    }
    Verified verified;
    if (rdmalab::fuzz::accepts([&] { verified = read_verified(wire); })) {
        FUZZ_CHECK(size == sizeof(Control));
        const Control again = encode_verified(verified);
        FUZZ_CHECK(std::equal(again.begin(), again.begin() + 8, wire.begin()));
    }
    MessageHeader header;
    if (rdmalab::fuzz::accepts([&] { header = read_message_header(wire); })) {
        FUZZ_CHECK(size >= kMessageHeader);
        FUZZ_CHECK(header.count >= 1 && header.count <= kMaxMessages &&
                   header.index < header.count);
        FUZZ_CHECK(header.index == load_be32(wire.first(4)) &&
                   header.count == load_be32(wire.subspan(4, 4)));
        std::array<std::byte, kMessageHeader> again{};
        write_message_header(again, header);
        FUZZ_CHECK(std::equal(again.begin(), again.end(), wire.begin()));
    }
    return 0;
}
