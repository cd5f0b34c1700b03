// Fuzzes the text parsers of options.hpp that also read what a peer or a file says: parse_size
// ("64K") and parse_ip_address ("198.51.100.1", "fe80::1"). Input: 2 bytes of port, then the
// text. Checks: a size is at least 1 and reads back the same in decimal; an address is IPv4 or
// IPv6 with the port, and its printed form parses to the same address.
#include "rdmalab/options.hpp"
#include "fuzz.hpp"
#include "rdmalab/codec.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::uint16_t port = load_be16(fuzz::bytes(data, 2));
    const std::string text(fuzz::text(data + 2, size - 2));

    if (const auto bytes = parse_size(text)) {
        FUZZ_CHECK(*bytes >= 1);
        FUZZ_CHECK(parse_size(std::to_string(*bytes)) == bytes);
    }

    const auto address = parse_ip_address(text, port);
    if (!address) return 0;
    char printed[INET6_ADDRSTRLEN] = {};
    if (address->ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&*address);
        FUZZ_CHECK(v4->sin_port == htons(port));
        FUZZ_CHECK(inet_ntop(AF_INET, &v4->sin_addr, printed, sizeof printed) != nullptr);
    } else {
        FUZZ_CHECK(address->ss_family == AF_INET6);
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&*address);
        FUZZ_CHECK(v6->sin6_port == htons(port));
        FUZZ_CHECK(inet_ntop(AF_INET6, &v6->sin6_addr, printed, sizeof printed) != nullptr);
    }
    const auto again = parse_ip_address(printed, port);
    FUZZ_CHECK(again && std::memcmp(&*again, &*address, sizeof *address) == 0);
    return 0;
}
