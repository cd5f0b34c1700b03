// The tools' own JSON documents: see tool_documents.hpp.
#include "rdmalab/records/tool_documents.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/records/doctor.hpp"
#include "rdmalab/records/gpu_memory.hpp"
#include "rdmalab/records/mesh.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace rdmalab::records {

namespace {

[[noreturn]] void unknown(const std::string& where) {
    fail(
        fmt::format("{}: not a document this project's tools write (its \"tool\" names neither "
                    "rdma-mesh nor gpu-memory-bench, nor is it rdma-doctor's report; result files "
                    "are read with `rdma-bench "
                    "records`)",
                    where));
}

}  // namespace

Schema document_schema(const Json& document, const std::string& where) {
    if (is_mesh_record(document)) return kMeshSchema;
    if (is_gpu_memory_record(document)) return kGpuMemorySchema;
    if (is_doctor_report(document)) return kDoctorSchema;
    unknown(where);
}

Json read_document(const Json& document, const std::string& where) {
    if (is_mesh_record(document)) return to_json(mesh_from_json(document, where));
    if (is_gpu_memory_record(document)) return to_json(gpu_memory_from_json(document, where));
    if (is_doctor_report(document)) return to_json(doctor_from_json(document, where));
    unknown(where);
}

Json read_document_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    if (in.bad()) fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    return read_document(parse_json(text, path), path);
}

}  // namespace rdmalab::records
