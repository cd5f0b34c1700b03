// Fuzzes what ./rdmalab trace reads from files: a --trace file (parse_events) and a decoded
// capture (parse_packets, rdma-wire --json), then the merge of what they accepted and its
// checks. The input is split at its first NUL byte: the events' text, then the packets' text.
// Checks: a refusal is an InputError with a message that names the file, and nothing else
// escapes; whatever both parsers accepted merges without throwing anything but an InputError, into
// the viewer's format, and checks_pass gives a line for every failure it reports.
#include "fuzz.hpp"
#include "merge.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace rdmalab::trace_merge;

namespace {

// Runs fn; true if it returned, false if it refused with an InputError naming source. Any other
// exception is a broken contract.
template <typename Fn>
bool refuses_only_with_input_error(Fn&& fn, const std::string& source) {
    try {
        fn();
        return true;
    } catch (const InputError& error) {
        if (std::string(error.what()).find(source) == std::string::npos)
            rdmalab::fuzz::broken("an InputError that does not name its file", __FILE__, __LINE__);
        return false;
    } catch (const std::exception& other) {
        std::fprintf(stderr, "contract broken: %s escaped: %s\n", typeid(other).name(),
                     other.what());
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(rdmalab::fuzz::text(data, size));
    const auto split = input.find('\0');
    const std::string events_text = input.substr(0, split);
    const std::string packets_text =
        split == std::string::npos
            ? R"({"format": "rdmalab-packets", "schema_version": 1, "packets": []})"
            : input.substr(split + 1);

    HostInput host{.name = "host1", .address = "198.51.100.1", .events = {}, .packets = {}};
    const bool events_ok = refuses_only_with_input_error(
        [&] { host.events = parse_events(events_text, "host1.trace"); }, "host1.trace");
    const bool packets_ok = refuses_only_with_input_error(
        [&] { host.packets = parse_packets(packets_text, "host1.json"); }, "host1.json");
    if (!events_ok || !packets_ok) return 0;

    HostInput peer{.name = "host2", .address = "198.51.100.2", .events = {}, .packets = {}};
    Trace merged;
    try {
        merged = merge({host, peer}, TraceMeta{});
    } catch (const InputError& error) {
        FUZZ_CHECK(std::string(error.what()).size() > 0);
        return 0;
    } catch (const std::exception& other) {
        std::fprintf(stderr, "contract broken: %s escaped merge: %s\n", typeid(other).name(),
                     other.what());
        std::abort();
    }
    // What the merge made reads back through the type and writes the same bytes.
    const std::string written = write_trace(merged);
    FUZZ_CHECK(write_trace(read_trace(written, "merged")) == written);
    std::vector<std::string> failures;
    const bool pass = checks_pass(merged, failures);
    FUZZ_CHECK(pass == failures.empty());
    return 0;
}
