// A merged trace read back (trace-merge --story), and the run's "meta" written (trace-merge
// --lesson ...): the two ends of the trace file that scripts once wrote with printf and read with
// inline node programs. Tests match the story's lines (tests/vm/trace.sh), never the file's text.
#pragma once

#include "timeline.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rdmalab::trace_merge {

// What a run was, for "meta": the lesson and its arguments, who each of the host_count hosts
// was (host1 the server and host2 the client; or, with ranks, host R+1 rank R), and the
// environment's KEY=VALUE pairs as strings (recorded, commit, guest_kernel, qemu, faults, …).
struct RunMeta {
    std::string lesson;
    std::string arguments;
    int ranks = 0;  // 0: a server and a client
    int host_count = 2;
    std::vector<std::pair<std::string, std::string>> environment;
};
TraceMeta trace_meta(const RunMeta& run);
// "KEY=VALUE" → the pair; throws InputError on text without '=' or with an empty KEY.
std::pair<std::string, std::string> environment_pair(const std::string& text);

// A merged trace (merge()'s result, or its file read back) as lines of tab-separated fields, one
// fact each:
//   format  FORMAT VERSION PACKET_SCHEMA_VERSION
//   host    NAME ROLE                    ROLE: server, client, "rank R", or -
//   environment KEY VALUE                each string of meta.environment
//   clock   UNALIGNED_HOSTS PACKETS_WITHOUT_BOTH_TIMES
//   timeline ordered|unordered complete|incomplete COUNTS   (complete: every event, and every
//                                        packet seen both sent and received twice; COUNTS says
//                                        how many of each, for a reader)
//   post    HOST OPCODE PACKET_NAMES TO ACK COMPLETION BY_ACK   a post_send: its packets'
//           names and destinations (comma-separated, or -), the ACK that acknowledged it ("host1
//           Acknowledge", or -), its completion (ok, failed, or -), by-ack when that ACK caused
//           the completion (else -)
//   completion HOST OPCODE ok|failed FROM WR   the packet that caused it: its sender and the
//           work request it belongs to ("host2 SEND"), each - when unknown
//   step    HOST TEXT
//   resent  TRANSPORT COUNT              packets sent again, per transport that has any
// The trace is read through its type (timeline.hpp's read_trace), which refuses what is not one.
std::vector<std::string> story_lines(const Trace& merged);

}  // namespace rdmalab::trace_merge
