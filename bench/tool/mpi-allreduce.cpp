// mpi-allreduce: MPI_Allreduce timed the way the ring-allreduce and recursive-doubling lessons
// time themselves — the same float32 inputs, every sum verified, each allreduce timed from a
// barrier, the median reported as algbw and busbw — so that a sweep can set the lessons beside
// the MPI library on the same hosts (bench/allreduce-sweep.sh). Rank 0 writes the record.
//   mpirun -np N mpi-allreduce [-s BYTES] [-n ITERS] [--json FILE]
#include "rdmalab/allreduce_options.hpp"
#include "rdmalab/allreduce_report.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/records/allreduce.hpp"

#include <fmt/core.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace rdmalab;

namespace {

void check_mpi(int rc, const char* call) {
    if (rc != MPI_SUCCESS) fail(fmt::format("{} failed (MPI error {})", call, rc));
}

int run(const AllreduceOptions& o, int rank, int ranks) {
    const std::string who = fmt::format("rank {}", rank);
    std::vector<float> data(o.size / sizeof(float));
    std::vector<double> times;
    for (unsigned iteration = 0; iteration < o.iterations; ++iteration) {
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = allreduce_input(rank, i);
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        const auto start = std::chrono::steady_clock::now();
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT,
                                MPI_SUM, MPI_COMM_WORLD),
                  "MPI_Allreduce");
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        if (auto mismatch = allreduce_mismatch(data, ranks)) fail(*mismatch);
        fmt::print("{}: allreduce {}: {:.2f} ms, all {} sums verified\n", who, iteration + 1,
                   times.back(), data.size());
    }
    // MPI neither times its steps nor says what it sent.
    const AllreduceRuns runs{.bytes = o.size,
                             .ranks = ranks,
                             .times_ms = times,
                             .step_done_ms = {},
                             .bytes_sent = 0,
                             .right = std::nullopt};
    fmt::print("{}", format_allreduce_report(who, runs));
    if (rank == 0 && !o.json.empty()) {
        const records::AllreduceSettings settings{.rank = rank,
                                                  .segment = 0,
                                                  .slots = 0,
                                                  .algorithm = "MPI_Allreduce",
                                                  .tool = "mpi-allreduce 1"};
        records::Environment environment = records::host_environment(settings.tool);
        char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
        int length = 0;
        MPI_Get_library_version(library, &length);
        const std::string mpi(library, static_cast<std::size_t>(length));
        environment.mpi = mpi.substr(0, mpi.find_first_of(",\n"));
        records::write_file(o.json, records::to_json(std::vector<records::Json>{records::to_json(
                                        records::allreduce_record(runs, settings, environment))}));
    }
    std::fflush(stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    AllreduceOptions o;
    // Every rank reads the same command line, so every rank refuses a bad one the same way,
    // before MPI starts.
    const int parsed = run_program("mpi-allreduce", [&] {
        CommandLine cli{"MPI_Allreduce (float32 sum), timed as the allreduce lessons time theirs",
                        "mpi-allreduce"};
        AllreduceCommandLine allreduce(cli, o, "64K");  // -s, -n, --json
        cli.existing("--json").description("rank 0 writes the measurement there, as a record");
        cli.parse_or_exit(argc, argv);
        allreduce.check();
        return 0;
    });
    if (parsed != 0) return parsed;

    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        std::fprintf(stderr, "mpi-allreduce: MPI_Init_thread failed\n");
        return 2;
    }
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int status = run_program("mpi-allreduce", [&] { return run(o, rank, ranks); });
    if (status != 0) {
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD,
                  status);  // a rank that cannot go on must not leave others waiting
    }
    MPI_Finalize();
    return status;
}
