// Fuzzes read_json_file: the result files rdma-bench writes and `rdma-bench plot` and
// `rdma-bench` comparisons read back (the input, written to a temporary file). Checks: only
// rdmalab::Error refuses; accepted records written with to_json read back equal; to_csv takes
// any of them.
#include "fuzz.hpp"
#include "rdmalab/bench/records.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace rdmalab;
using namespace rdmalab::bench;

namespace {

// A scratch file for the input, removed when the process ends.
struct ScratchFile {
    std::string path;
    ScratchFile() {
        char name[] = "/tmp/rdmalab-fuzz-records-XXXXXX";
        const int fd = mkstemp(name);
        if (fd < 0) std::abort();
        close(fd);
        path = name;
    }
    ~ScratchFile() { std::remove(path.c_str()); }
};

const std::string& scratch_file() {
    static const ScratchFile file;
    return file.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string& path = scratch_file();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << fuzz::text(data, size);
    std::vector<Record> records;
    if (!fuzz::accepts([&] { records = read_json_file(path); })) return 0;
    write_file(path, to_json(records));
    FUZZ_CHECK(read_json_file(path) == records);
    FUZZ_CHECK(!to_csv(records).empty());
    return 0;
}
