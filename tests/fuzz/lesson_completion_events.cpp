// Fuzzes the completion-events lesson's messages, with the header the lesson reads them with
// (lessons/completion-events/completion_events_messages.hpp): read_header on what arrived,
// read_start on the header (as the server checks a request), and ping_matches and require_ping
// for the sequence the header names.
// Checks: only rdmalab::Error refuses; an accepted header came from at least kHeaderSize bytes
// and write_header writes it back to the same bytes; an accepted start names a known mode,
// 1..kMaxIterations round trips and a size the server holds; require_ping accepts exactly what
// ping_matches does; a message write_ping made for a sequence matches that sequence and kind.
#include "../../lessons/completion-events/completion_events_messages.hpp"
#include "fuzz.hpp"

#include <algorithm>
#include <vector>

using namespace rdmalab;
using namespace rdmalab::completion_events;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = rdmalab::fuzz::bytes(data, size);
    Header header;
    if (!rdmalab::fuzz::accepts([&] { header = read_header(wire); })) return 0;
    FUZZ_CHECK(size >= kHeaderSize);
    std::vector<std::byte> again(size);
    write_header(again, header);
    FUZZ_CHECK(std::equal(again.begin(), again.begin() + kHeaderSize, wire.begin()));
    Start start;
    if (rdmalab::fuzz::accepts([&] { start = read_start(header, size); }))
        FUZZ_CHECK(known_mode(header.a) && start.iterations >= 1 &&
                   start.iterations <= kMaxIterations && start.size >= kHeaderSize &&
                   start.size <= size);
    bool matches = false;
    if (rdmalab::fuzz::accepts([&] { matches = ping_matches(wire, header.kind, header.a); })) {
        FUZZ_CHECK(matches == (load_be32(wire.last(4)) == header.a));
        FUZZ_CHECK(matches == rdmalab::fuzz::accepts(
                                  [&] { require_ping(wire, size, header.kind, header.a); }));
    }
    write_ping(again, header.kind, header.a);
    FUZZ_CHECK(ping_matches(again, header.kind, header.a));
    return 0;
}
