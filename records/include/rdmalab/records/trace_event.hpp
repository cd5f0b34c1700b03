// A program trace's line (--trace FILE: common/trace_event.hpp's trace::Event) read back: its
// schema, one per event kind (records/schema/trace-event.json), and the one reader, which
// trace-merge reads every line through. The writer stays in rdmalab_common, where the lessons
// and the verbs wrappers write the lines; the reader is here, next to the other records' schemas,
// and rdmalab_common does not depend on this library.
// A line holds the fields of its kind and no other; t_ns, host and event always; the first line
// (trace_start) its format and version; a WR's post and its completion their wr_id (the merge
// pairs them by it). The other fields a program always writes are optional here: the merge reads
// what a line has, and a test's hand-made line need not repeat them.
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/schema.hpp"

#include "rdmalab/trace_event.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::records {

// "trace_start", "post_send", "post_recv", "completion", "step", "cm_event", "modify_qp".
const std::vector<std::string_view>& trace_event_kinds();
// The fields of a line of that kind (t_ns, host and event among them); empty for another kind.
Schema trace_event_schema(std::string_view kind);

// A line's object → the event, checked against its kind's schema first (a field of another
// kind, a missing one, one of the wrong type or out of its range); throws rdmalab::Error
// "WHERE: FIELD: PROBLEM".
trace::Event trace_event_from_json(const Json& line, const std::string& where);

// The schemas as one JSON Schema: one of the kinds, each naming its event.
Json trace_event_schema_json();

}  // namespace rdmalab::records
