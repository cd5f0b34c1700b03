// Fuzzes what a UD receive buffer holds (the ud and multicast lessons): the 40-byte GRH area,
// read by read_network_header, then the datagram, read by read_datagram. Checks: the header
// is recognised only as IPv4 (byte 20 is 0x45) or a GRH (version 6) and then names both ends;
// a datagram or a non-empty reason; an accepted datagram is written back by write_datagram to
// the same bytes, has sequence < count <= kMaxDatagramCount (an end datagram: sequence ==
// count), and its sequence is a valid index for the receiver's tally.
#include "fuzz.hpp"
#include "rdmalab/ud_datagrams.hpp"

#include <algorithm>
#include <vector>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < kGrhBytes) return 0;
    const auto buffer = fuzz::bytes(data, size);
    const auto header = read_network_header(buffer.first<kGrhBytes>());
    if (header) {
        FUZZ_CHECK(header->ipv4 ? data[20] == 0x45 : data[0] >> 4 == 6);
        FUZZ_CHECK(!header->source.empty() && !header->destination.empty());
    } else {
        FUZZ_CHECK(data[20] != 0x45 && data[0] >> 4 != 6);
    }

    const auto payload = buffer.subspan(kGrhBytes);
    const auto answer = read_datagram(payload);
    if (!fuzz::holds_value(answer)) return 0;
    const Datagram datagram = std::get<Datagram>(answer);
    FUZZ_CHECK(datagram.count >= 1 && datagram.count <= kMaxDatagramCount);
    std::vector<std::byte> again(payload.size());
    write_datagram(again, datagram);
    FUZZ_CHECK(std::ranges::equal(again, payload));
    if (datagram.kind == DatagramKind::kEnd) {
        FUZZ_CHECK(datagram.sequence == datagram.count);
        return 0;
    }
    FUZZ_CHECK(datagram.sequence < datagram.count);
    SequenceTally tally(datagram.count);
    tally.record(datagram.sequence);
    tally.record(datagram.sequence);
    FUZZ_CHECK(tally.received() == 1 && tally.duplicates() == 1);
    return 0;
}
