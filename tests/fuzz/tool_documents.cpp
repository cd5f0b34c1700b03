// Fuzzes the typed readers of the tools' own JSON (records/): the documents `rdma-bench json`
// reads (rdma-mesh's mesh.json, gpu-memory-bench's record, rdma-doctor --json's report:
// tool_documents.hpp) and the messages rdma-mesh's ranks send each other (mesh.hpp: the identity,
// the row, the meeting's messages). Checks: only rdmalab::Error refuses; an accepted document
// keeps its schema and reads back unchanged (its type writes what it read); an accepted message
// writes back as JSON that reads to the same message.
#include "rdmalab/records/tool_documents.hpp"
#include "fuzz.hpp"
#include "rdmalab/records/mesh.hpp"

using namespace rdmalab;

namespace {

// A message reader: whatever it accepts, written back and read again, is the same message.
template <typename Read>
void message_round_trip(const records::Json& json, Read read) {
    decltype(read(json, "")) message{};
    if (!fuzz::accepts([&] { message = read(json, "input"); })) return;
    FUZZ_CHECK(read(records::to_json(message), "again") == message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    records::Json json;
    if (!fuzz::accepts([&] { json = records::parse_json(fuzz::text(data, size), "input"); }))
        return 0;
    records::Json document;
    if (fuzz::accepts([&] { document = records::read_document(json, "input"); })) {
        FUZZ_CHECK(records::schema_problems(document, records::document_schema(document, "input"))
                       .empty());
        FUZZ_CHECK(records::read_document(document, "again") == document);
    }
    message_round_trip(json, records::mesh_rank_from_json);
    message_round_trip(json, records::mesh_row_from_json);
    message_round_trip(json, records::mesh_hello_from_json);
    message_round_trip(json, records::mesh_status_from_json);
    message_round_trip(json, records::mesh_endpoints_from_json);
    message_round_trip(json, records::mesh_sent_from_json);
    message_round_trip(json, records::mesh_silent_from_json);
    return 0;
}
