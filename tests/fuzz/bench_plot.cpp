// Fuzzes `rdma-bench plot`: plot_files reads a result file (the input, written to a temporary
// file) and draws every measure it knows. Checks: only rdmalab::Error refuses (a file without
// records, no record with the measure); every drawing finishes (libFuzzer's -timeout catches a
// loop that does not) and is one whole SVG document.
#include "fuzz.hpp"
#include "rdmalab/bench/plot.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace rdmalab;
using namespace rdmalab::bench;

namespace {

// A scratch folder for the input and the figure, removed when the process ends.
struct ScratchFolder {
    std::string path;
    ScratchFolder() {
        char name[] = "/tmp/rdmalab-fuzz-plot-XXXXXX";
        if (mkdtemp(name) == nullptr) std::abort();
        path = name;
    }
    ~ScratchFolder() { std::filesystem::remove_all(path); }
};

const std::string& scratch_folder() {
    static const ScratchFolder folder;
    return folder.path;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // plot_files prints "wrote …" each time; libFuzzer reports on stderr.
    if (std::freopen("/dev/null", "w", stdout) == nullptr) std::abort();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input = scratch_folder() + "/records.json";
    std::ofstream(input, std::ios::binary | std::ios::trunc) << fuzz::text(data, size);
    for (const char* y : {"gib", "lat-p99"})
        for (const char* series : {"", "op,window"}) {
            PlotOptions p;
            p.inputs = {input};
            p.output = scratch_folder() + "/figure.svg";
            p.y = y;
            p.series = series;
            std::remove(p.output.c_str());
            if (!fuzz::accepts([&] { plot_files(p, "fuzz"); })) continue;
            std::ifstream in(p.output);
            const std::string svg{std::istreambuf_iterator<char>(in), {}};
            FUZZ_CHECK(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        }
    return 0;
}
