// One packet record: a RoCE v2 packet as tshark's dissector decoded it, typed, and its JSON form.
// Every reader of a capture in the project (./rdmalab wire, ./rdmalab trace's merge, the site's
// trace viewer, the wire tests, the benches' captures) goes through this record; the schema below
// is the one place its fields are written down.
//
// tshark stays the decoder: decode_fields() reads the lines of
//   tshark -r F -n -Y infiniband.bth -T fields -E separator=/t -E occurrence=f -e FIELD...
// with kTsharkFields as the -e list, one packet per line, and never parses a packet itself.
//
// The JSON document (write_document / read_document), schema_version kSchemaVersion:
//   {"format": "rdmalab-packets", "schema_version": 1, "packets": [PACKET, ...]}
// one PACKET per line. A PACKET's fields are kSchema's (name, JSON type, required or not, what it
// means); packet_schema_json() writes them as a JSON Schema, which the site's trace viewer reads
// from docs/.vitepress/theme/packet-schema.json (a unit test keeps that file equal to it).
// A new field: the struct, kTsharkFields if tshark must give it, kSchema, to_json/from_json and
// (when a person should see it) the ladder; bump kSchemaVersion when a reader would misread an old
// file, and regenerate the schema file (rdma-wire --schema).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::wire {

inline constexpr int kSchemaVersion = 1;
inline constexpr std::string_view kFormat = "rdmalab-packets";

// Bad input (tshark's output, a JSON document): one line saying where and what.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The fields asked of tshark, in the column order decode_fields() reads.
inline constexpr std::array<std::string_view, 32> kTsharkFields = {
    "frame.time_relative",
    "frame.time_epoch",
    "frame.len",
    "frame.interface_name",
    "ip.src",
    "ip.dst",
    "ipv6.src",
    "ipv6.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.a",
    "infiniband.bth.padcnt",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.immdt",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
};

// The AETH syndrome (IBA 9.7.5.1.3): bits 6-5 say what it is, bits 4-0 a value for that kind.
enum class AethKind {
    kAck,       // 00: an ACK; the value is the credit count
    kRnrNak,    // 01: receiver not ready; the value is the RNR timer code
    kReserved,  // 10
    kNak,       // 11: a NAK; the value is its code (0 PSN sequence error, 1 invalid request, …)
};
struct Aeth {
    std::uint8_t syndrome = 0;
    std::uint32_t msn = 0;
    AethKind kind() const { return static_cast<AethKind>((syndrome >> 5) & 3); }
    std::uint8_t value() const { return syndrome & 31; }
    std::string meaning() const;  // "ACK", "RNR NAK (timer 24)", "NAK PSN sequence error", …
    bool operator==(const Aeth&) const = default;
};
struct Reth {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
    bool operator==(const Reth&) const = default;
};
struct AtomicEth {
    std::uint64_t va = 0;    // the remote address (tshark names it reth.va here)
    std::uint32_t rkey = 0;  // (reth.r_key)
    std::uint64_t swap_or_add = 0;
    std::optional<std::uint64_t> compare;  // CmpSwap only
    bool operator==(const AtomicEth&) const = default;
};
struct Deth {
    std::uint32_t qkey = 0;
    std::uint32_t src_qp = 0;
    bool operator==(const Deth&) const = default;
};

struct Packet {
    // Where and when.
    double time_s = 0;                     // since the capture's first frame
    std::string time_epoch;                // the capture's clock, "seconds.fraction" as text: exact
    std::optional<std::string> interface;  // the capture interface, when the file names it
    std::uint32_t frame_length = 0;        // bytes on the wire (Ethernet frame, no FCS)
    std::string src, dst;                  // IP addresses
    std::uint8_t dscp = 0, ecn = 0;        // the IP header's DS field: DSCP (6 bits), ECN (2 bits)
    std::uint16_t src_port = 0, dst_port = 0;  // UDP (4791 the destination for RoCE v2)
    // BTH.
    std::uint8_t opcode = 0;
    std::uint32_t qpn = 0;  // destination QP, 24 bits
    std::uint32_t psn = 0;  // 24 bits
    bool ack_requested = false;
    bool solicited = false;
    // Extension headers, each when the packet carries it.
    std::optional<Aeth> aeth;
    std::optional<Reth> reth;
    std::optional<std::uint32_t> immdt;
    std::optional<AtomicEth> atomic;
    std::optional<std::uint64_t> atomic_ack_original;  // AtomicAckETH
    std::optional<Deth> deth;
    // Derived.
    std::uint32_t payload_bytes = 0;  // beyond the headers, pad and ICRC
    bool sent_again = false;  // same direction, QP, PSN and opcode seen before (not for ACKs)

    std::string transport() const;    // "RC", "UC", "RD", "UD", "CNP" or "other"
    std::string opcode_name() const;  // "RDMA WRITE First", …
    bool operator==(const Packet&) const = default;
};

// The BTH opcode's name without the transport ("SEND Only") and the transport ("RC").
std::string opcode_name(std::uint8_t opcode);
std::string transport_name(std::uint8_t opcode);

// tshark's field lines (kTsharkFields, tab-separated) → packets, sent_again and payload_bytes
// derived. source names the capture in messages.
std::vector<Packet> decode_fields(std::string_view text, const std::string& source);

nlohmann::ordered_json to_json(const Packet& packet);
// One PACKET object → the record; where: the file and the packet's place, for messages.
Packet from_json(const nlohmann::json& object, const std::string& where);

// The document (see above), one packet per line, ending in a newline.
std::string write_document(const std::vector<Packet>& packets);
// A document's text → its packets; refuses another format, another schema_version, a packet
// lacking a required field or holding one of the wrong type.
std::vector<Packet> read_document(std::string_view text, const std::string& source);

// The schema, once: each field of a PACKET (dotted for a header's fields, "reth.va").
struct Field {
    std::string_view name;
    std::string_view type;  // JSON Schema type: "string", "integer", "number", "boolean", "object"
    bool required;          // in every packet (else only when the packet has it)
    std::string_view description;
};
extern const std::vector<Field> kSchema;
// kSchema as a JSON Schema (draft 2020-12), with schema_version and format.
nlohmann::ordered_json packet_schema_json();

}  // namespace rdmalab::wire
