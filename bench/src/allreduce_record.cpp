// The allreduce lessons' and mpi-allreduce's record (see allreduce_record.hpp).
#include "rdmalab/bench/allreduce_record.hpp"

#include <utility>

namespace rdmalab::bench {

Record allreduce_record(const AllreduceRuns& runs, const AllreduceSettings& settings,
                        Record environment) {
    const AllreduceMeasures measures = measure_allreduce(runs);
    Record config{{"algorithm", settings.algorithm},
                  {"ranks", runs.ranks},
                  {"rank", settings.rank},
                  {"bytes", runs.bytes},
                  {"segment", settings.segment},
                  {"slots", settings.slots},
                  {"iterations", runs.times_ms.size()}};
    Record result{{"median_ms", measures.median_ms},
                  {"algbw_mb_s", measures.algbw_mb_s},
                  {"busbw_mb_s", measures.busbw_mb_s},
                  {"busbw_min_mb_s", measures.busbw_min_mb_s},
                  {"busbw_max_mb_s", measures.busbw_max_mb_s},
                  {"times_ms", runs.times_ms},
                  {"step_ms", measures.step_ms},
                  {"bytes_sent", runs.bytes_sent},
                  {"right_rank", runs.right ? Record(*runs.right) : Record(nullptr)},
                  {"link_share", measures.link_share}};
    return Record{{"tool", settings.tool},
                  {"config", std::move(config)},
                  {"result", std::move(result)},
                  {"environment", std::move(environment)}};
}

void write_allreduce_records(const std::string& path, const AllreduceRuns& runs,
                             const AllreduceSettings& settings) {
    write_file(path, to_json({allreduce_record(runs, settings, host_environment(settings.tool))}));
}

}  // namespace rdmalab::bench
