// Fuzzes parse_roce_v2_ipv4, the dcqcn lesson's reader of packet copies from the network (an
// AF_PACKET socket hands over whatever the link carried). Input: the bytes of a copy. Checks:
// nothing is thrown; a copy shorter than an IPv4 header, a UDP header and a BTH is refused; what
// is accepted is IPv4 UDP to port 4791 whose fields are in range and read from where the
// headers say; a longer copy of the same packet parses the same.
#include "rdmalab/roce_header.hpp"
#include "fuzz.hpp"

#include <vector>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto copy = fuzz::bytes(data, size);
    const auto headers = parse_roce_v2_ipv4(copy);  // noexcept in effect: a throw aborts here
    if (!headers) return 0;
    FUZZ_CHECK(size >= 40);
    const std::size_t ihl = std::size_t{data[0] & 0x0fu} * 4;
    FUZZ_CHECK(data[0] >> 4 == 4 && ihl >= 20 && size >= ihl + 20);
    FUZZ_CHECK(data[9] == 17 && (data[ihl + 2] << 8 | data[ihl + 3]) == kRoceV2Port);
    FUZZ_CHECK(headers->dscp == data[1] >> 2 &&
               static_cast<unsigned>(headers->ecn) == (data[1] & 3u));
    FUZZ_CHECK(headers->opcode == data[ihl + 8]);
    FUZZ_CHECK(headers->destination_qp < (1u << 24) && headers->psn < (1u << 24));
    // The copy's bytes past the headers are never read: one more byte changes nothing.
    std::vector<std::byte> longer(copy.begin(), copy.end());
    longer.push_back(std::byte{0x5a});
    const auto again = parse_roce_v2_ipv4(longer);
    FUZZ_CHECK(again && again->destination_qp == headers->destination_qp &&
               again->psn == headers->psn && again->source_ipv4 == headers->source_ipv4);
    return 0;
}
