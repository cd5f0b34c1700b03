// The packet record: see packet.hpp.
#include "packet.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cstdlib>
#include <set>

namespace rdmalab::wire {

using nlohmann::json;
using nlohmann::ordered_json;

const std::vector<Field> kSchema = {
    {"time_s", "number", true, "seconds since the capture's first frame"},
    {"time_epoch", "string", true,
     "the capture's clock at this frame, seconds.fraction since the epoch, as text (exact)"},
    {"interface", "string", false, "the capture interface, when the capture file names it"},
    {"frame_length", "integer", true, "bytes of the frame on the wire"},
    {"src", "string", true, "source IP address"},
    {"dst", "string", true, "destination IP address"},
    {"dscp", "integer", true, "IP DS field: DSCP (0-63)"},
    {"ecn", "integer", true, "IP DS field: ECN (0 not ECT, 1 ECT(1), 2 ECT(0), 3 CE)"},
    {"src_port", "integer", true, "UDP source port"},
    {"dst_port", "integer", true, "UDP destination port (4791: RoCE v2)"},
    {"transport", "string", true, "from the opcode: RC, UC, RD, UD, CNP or other"},
    {"opcode", "integer", true, "BTH opcode (0-255)"},
    {"opcode_name", "string", true, "the opcode's name without the transport (RDMA WRITE First)"},
    {"qpn", "string", true, "BTH destination QP, hex (0x000011)"},
    {"psn", "integer", true, "BTH packet sequence number (24 bits)"},
    {"ack_requested", "boolean", true, "BTH AckReq bit"},
    {"solicited", "boolean", true, "BTH solicited event bit"},
    {"aeth", "object", false, "AETH (ACKs, NAKs, READ responses)"},
    {"aeth.syndrome", "integer", true, "the syndrome byte"},
    {"aeth.kind", "string", true, "ACK, RNR NAK, NAK or reserved (syndrome bits 6-5)"},
    {"aeth.value", "integer", true,
     "syndrome bits 4-0: ACK credit count, RNR timer code or NAK code"},
    {"aeth.meaning", "string", true, "the syndrome in words (NAK PSN sequence error)"},
    {"aeth.msn", "integer", true, "message sequence number"},
    {"reth", "object", false, "RETH (first packet of a WRITE, READ request)"},
    {"reth.va", "string", true, "remote virtual address, hex"},
    {"reth.rkey", "string", true, "remote key, hex"},
    {"reth.length", "integer", true, "DMA length of the whole operation"},
    {"immdt", "string", false, "immediate data, hex (0x0000abcd)"},
    {"atomic", "object", false, "AtomicETH (CmpSwap, FetchAdd)"},
    {"atomic.va", "string", true, "remote virtual address, hex"},
    {"atomic.rkey", "string", true, "remote key, hex"},
    {"atomic.swap_or_add", "string", true,
     "swap (CmpSwap) or add (FetchAdd) operand, decimal (a string: 64 bits)"},
    {"atomic.compare", "string", false, "compare operand (CmpSwap), decimal as a string"},
    {"atomic_ack", "object", false, "AtomicAckETH"},
    {"atomic_ack.original", "string", true,
     "the remote value before the atomic, decimal as a string"},
    {"deth", "object", false, "DETH (UD)"},
    {"deth.qkey", "string", true, "Q_Key, hex"},
    {"deth.src_qp", "string", true, "source QP, hex"},
    {"payload_bytes", "integer", true, "payload beyond the headers, pad and ICRC"},
    {"sent_again", "boolean", true,
     "this direction, QP, PSN and opcode were seen before in the capture (not for ACKs)"},
};

namespace {

constexpr std::array<std::string_view, 24> kOpcodeNames = {
    "SEND First",
    "SEND Middle",
    "SEND Last",
    "SEND Last with Immediate",
    "SEND Only",
    "SEND Only with Immediate",
    "RDMA WRITE First",
    "RDMA WRITE Middle",
    "RDMA WRITE Last",
    "RDMA WRITE Last with Immediate",
    "RDMA WRITE Only",
    "RDMA WRITE Only with Immediate",
    "RDMA READ Request",
    "RDMA READ Response First",
    "RDMA READ Response Middle",
    "RDMA READ Response Last",
    "RDMA READ Response Only",
    "Acknowledge",
    "ATOMIC Acknowledge",
    "CmpSwap",
    "FetchAdd",
    "",
    "SEND Last with Invalidate",
    "SEND Only with Invalidate",
};
constexpr std::array<std::string_view, 5> kNakNames = {
    "PSN sequence error", "invalid request", "remote access error", "remote operational error",
    "invalid RD request"};

std::string hex(std::uint64_t value, int digits) {
    return fmt::format("0x{:0{}x}", value, digits);
}

// Splits text at sep, keeping empty pieces.
std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> pieces;
    std::size_t start = 0;
    for (;;) {
        const auto at = text.find(sep, start);
        pieces.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
        if (at == std::string_view::npos) return pieces;
        start = at + 1;
    }
}

// An unsigned number as tshark or a JSON file writes it: decimal, or hex with 0x.
std::optional<std::uint64_t> parse_unsigned(std::string_view text, std::uint64_t max) {
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        text.remove_prefix(2);
        base = 16;
    }
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > max)
        return std::nullopt;
    return value;
}

// One packet line's fields, by name, each parsed with a message that names the line.
class Line {
  public:
    Line(std::vector<std::string_view> fields, std::string where)
        : fields_(std::move(fields)), where_(std::move(where)) {}

    std::string_view text(std::string_view name) const { return fields_[index(name)]; }
    bool has(std::string_view name) const { return !text(name).empty(); }

    std::uint64_t number(std::string_view name, std::uint64_t max) const {
        const auto value = parse_unsigned(text(name), max);
        if (!value)
            throw InputError(fmt::format("{}: {} '{}' is not a number of at most {}", where_, name,
                                         text(name), max));
        return *value;
    }
    template <typename T>
    std::optional<T> optional(std::string_view name, std::uint64_t max) const {
        if (!has(name)) return std::nullopt;
        return static_cast<T>(number(name, max));
    }
    bool flag(std::string_view name) const {
        const auto t = text(name);
        if (t.empty() || t == "0" || t == "False" || t == "false") return false;
        if (t == "1" || t == "True" || t == "true") return true;
        throw InputError(fmt::format("{}: {} '{}' is not a flag", where_, name, t));
    }
    // FT_BYTES as tshark prints it (hex digits, maybe with colons) → a number.
    std::optional<std::uint64_t> bytes(std::string_view name, std::size_t max_bytes) const {
        if (!has(name)) return std::nullopt;
        std::string digits;
        for (char c : text(name))
            if (c != ':') digits += c;
        const auto value =
            digits.size() <= 2 * max_bytes ? parse_unsigned("0x" + digits, ~0ull) : std::nullopt;
        if (!value)
            throw InputError(fmt::format("{}: {} '{}' is not {} bytes of hex", where_, name,
                                         text(name), max_bytes));
        return value;
    }
    const std::string& where() const { return where_; }

  private:
    static std::size_t index(std::string_view name) {
        for (std::size_t i = 0; i < kTsharkFields.size(); ++i)
            if (kTsharkFields[i] == name) return i;
        std::abort();  // a name not in kTsharkFields: a bug here, not bad input
    }
    std::vector<std::string_view> fields_;
    std::string where_;
};

Packet decode_line(const Line& line) {
    Packet p;
    for (auto name : {"frame.time_relative", "frame.time_epoch", "udp.length",
                      "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn"})
        if (!line.has(name)) throw InputError(fmt::format("{}: no {}", line.where(), name));
    const std::string relative(line.text("frame.time_relative"));
    char* end = nullptr;
    p.time_s = std::strtod(relative.c_str(), &end);
    if (end != relative.c_str() + relative.size())
        throw InputError(
            fmt::format("{}: frame.time_relative '{}' is not a number", line.where(), relative));
    p.time_epoch = line.text("frame.time_epoch");
    if (line.has("frame.interface_name"))
        p.interface = std::string(line.text("frame.interface_name"));
    p.frame_length = static_cast<std::uint32_t>(line.number("frame.len", 0xffffffff));
    const bool v6 = !line.has("ip.src") && line.has("ipv6.src");
    p.src = line.text(v6 ? "ipv6.src" : "ip.src");
    p.dst = line.text(v6 ? "ipv6.dst" : "ip.dst");
    if (p.src.empty() || p.dst.empty())
        throw InputError(fmt::format("{}: no IP source or destination", line.where()));
    p.dscp =
        line.optional<std::uint8_t>(v6 ? "ipv6.tclass.dscp" : "ip.dsfield.dscp", 63).value_or(0);
    p.ecn = line.optional<std::uint8_t>(v6 ? "ipv6.tclass.ecn" : "ip.dsfield.ecn", 3).value_or(0);
    p.src_port = line.optional<std::uint16_t>("udp.srcport", 0xffff).value_or(0);
    p.dst_port = line.optional<std::uint16_t>("udp.dstport", 0xffff).value_or(0);
    p.opcode = static_cast<std::uint8_t>(line.number("infiniband.bth.opcode", 255));
    p.qpn = static_cast<std::uint32_t>(line.number("infiniband.bth.destqp", 0xffffff));
    p.psn = static_cast<std::uint32_t>(line.number("infiniband.bth.psn", 0xffffff));
    p.ack_requested = line.flag("infiniband.bth.a");
    p.solicited = line.flag("infiniband.bth.se");
    if (line.has("infiniband.aeth.syndrome"))
        p.aeth = Aeth{
            .syndrome = static_cast<std::uint8_t>(line.number("infiniband.aeth.syndrome", 255)),
            .msn = line.optional<std::uint32_t>("infiniband.aeth.msn", 0xffffff).value_or(0)};
    // An AtomicETH carries an address and rkey too: tshark names them reth.va and reth.r_key,
    // with no dmalen. A RETH is the one with a DMA length.
    if (line.has("infiniband.reth.dmalen"))
        p.reth = Reth{
            .va = line.optional<std::uint64_t>("infiniband.reth.va", ~0ull).value_or(0),
            .rkey = line.optional<std::uint32_t>("infiniband.reth.r_key", 0xffffffff).value_or(0),
            .length =
                static_cast<std::uint32_t>(line.number("infiniband.reth.dmalen", 0xffffffff))};
    if (auto imm = line.bytes("infiniband.immdt", 4)) p.immdt = static_cast<std::uint32_t>(*imm);
    if (line.has("infiniband.atomiceth.swapdt"))
        p.atomic = AtomicEth{
            .va = line.optional<std::uint64_t>("infiniband.reth.va", ~0ull).value_or(0),
            .rkey = line.optional<std::uint32_t>("infiniband.reth.r_key", 0xffffffff).value_or(0),
            .swap_or_add = line.number("infiniband.atomiceth.swapdt", ~0ull),
            .compare = (p.opcode % 32 == 19)
                           ? line.optional<std::uint64_t>("infiniband.atomiceth.cmpdt", ~0ull)
                           : std::nullopt};
    p.atomic_ack_original =
        line.optional<std::uint64_t>("infiniband.atomicacketh.origremdt", ~0ull);
    if (line.has("infiniband.deth.q_key"))
        p.deth = Deth{
            .qkey = static_cast<std::uint32_t>(line.number("infiniband.deth.q_key", 0xffffffff)),
            .src_qp = line.optional<std::uint32_t>("infiniband.deth.srcqp", 0xffffff).value_or(0)};
    // The payload: what the UDP datagram carries beyond UDP (8), BTH (12), the extension headers
    // present, the pad and the ICRC (4).
    std::uint64_t headers = 8 + 12 + 4 + line.number("infiniband.bth.padcnt", 3);
    if (p.reth) headers += 16;
    if (p.aeth) headers += 4;
    if (p.immdt) headers += 4;
    if (p.deth) headers += 8;
    if (p.atomic) headers += 28;
    if (p.atomic_ack_original) headers += 8;
    const std::uint64_t udp = line.number("udp.length", 0xffff);
    p.payload_bytes = static_cast<std::uint32_t>(udp > headers ? udp - headers : 0);
    return p;
}

// JSON accessors that say which field of which packet is wrong.
bool has_type(const json& value, std::string_view type) {
    if (type == "string") return value.is_string();
    if (type == "integer") return value.is_number_unsigned();
    if (type == "number") return value.is_number();
    if (type == "boolean") return value.is_boolean();
    if (type == "object") return value.is_object();
    return false;
}

// Checks an object against kSchema: every required field present, every field of its type.
void check_against_schema(const json& object, const std::string& where) {
    if (!object.is_object()) throw InputError(fmt::format("{}: not a JSON object", where));
    for (const auto& f : kSchema) {
        const auto dot = f.name.find('.');
        const json* parent = &object;
        std::string key(f.name);
        if (dot != std::string_view::npos) {
            const std::string outer(f.name.substr(0, dot));
            if (!object.contains(outer)) continue;  // the header is absent: so are its fields
            parent = &object[outer];
            key = std::string(f.name.substr(dot + 1));
        }
        if (!parent->contains(key)) {
            if (f.required)
                throw InputError(
                    fmt::format("{}: no {} (schema version {})", where, f.name, kSchemaVersion));
            continue;
        }
        if (!has_type((*parent)[key], f.type))
            throw InputError(fmt::format("{}: {} is not {} {}", where, f.name,
                                         f.type == "integer" ? "an" : "a",
                                         f.type == "integer" ? "unsigned integer" : f.type));
    }
}

std::uint64_t get_unsigned(const json& value, std::uint64_t max, std::string_view name,
                           const std::string& where) {
    std::optional<std::uint64_t> v;
    if (value.is_number_unsigned()) {
        v = value.get<std::uint64_t>();
        if (*v > max) v.reset();
    } else if (value.is_string()) {
        v = parse_unsigned(value.get<std::string>(), max);
    }
    if (!v) throw InputError(fmt::format("{}: {} is out of range (at most {})", where, name, max));
    return *v;
}

}  // namespace

std::string Aeth::meaning() const {
    switch (kind()) {
        case AethKind::kAck:
            return "ACK";
        case AethKind::kRnrNak:
            return fmt::format("RNR NAK (timer {})", value());
        case AethKind::kNak:
            return value() < kNakNames.size() ? fmt::format("NAK {}", kNakNames[value()])
                                              : fmt::format("NAK code {}", value());
        case AethKind::kReserved:
            break;
    }
    return fmt::format("syndrome {}", syndrome);
}

std::string transport_name(std::uint8_t opcode) {
    switch (opcode >> 5) {
        case 0:
            return "RC";
        case 1:
            return "UC";
        case 2:
            return "RD";
        case 3:
            return "UD";
        case 4:
            return "CNP";
    }
    return "other";
}

std::string opcode_name(std::uint8_t opcode) {
    if (opcode == 0x81) return "CNP";
    const std::size_t base = opcode % 32;
    if (opcode < 128 && base < kOpcodeNames.size() && !kOpcodeNames[base].empty())
        return std::string(kOpcodeNames[base]);
    return fmt::format("opcode {}", opcode);
}

std::string Packet::transport() const {
    return transport_name(opcode);
}
std::string Packet::opcode_name() const {
    return wire::opcode_name(opcode);
}

std::vector<Packet> decode_fields(std::string_view text, const std::string& source) {
    std::vector<Packet> packets;
    std::set<std::string> seen;
    std::size_t number = 0;
    for (auto raw : split(text, '\n')) {
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        if (raw.empty()) continue;
        auto fields = split(raw, '\t');
        const std::string where = fmt::format("{}: tshark's line {}", source, number);
        if (fields.size() != kTsharkFields.size())
            throw InputError(fmt::format("{} has {} fields, not {}", where, fields.size(),
                                         kTsharkFields.size()));
        Packet p = decode_line(Line(std::move(fields), where));
        // A packet seen again: the same direction, QP, PSN and opcode (go-back-N, a duplicate).
        const auto key = fmt::format("{}>{}:{}:{}:{}", p.src, p.dst, p.qpn, p.psn, p.opcode);
        p.sent_again = p.opcode != 17 && !seen.insert(key).second;
        packets.push_back(std::move(p));
    }
    return packets;
}

ordered_json to_json(const Packet& p) {
    ordered_json j;
    j["time_s"] = p.time_s;
    j["time_epoch"] = p.time_epoch;
    if (p.interface) j["interface"] = *p.interface;
    j["frame_length"] = p.frame_length;
    j["src"] = p.src;
    j["dst"] = p.dst;
    j["dscp"] = p.dscp;
    j["ecn"] = p.ecn;
    j["src_port"] = p.src_port;
    j["dst_port"] = p.dst_port;
    j["transport"] = p.transport();
    j["opcode"] = p.opcode;
    j["opcode_name"] = p.opcode_name();
    j["qpn"] = hex(p.qpn, 6);
    j["psn"] = p.psn;
    j["ack_requested"] = p.ack_requested;
    j["solicited"] = p.solicited;
    if (p.aeth) {
        static constexpr std::array<const char*, 4> kKinds = {"ACK", "RNR NAK", "reserved", "NAK"};
        j["aeth"] = {{"syndrome", p.aeth->syndrome},
                     {"kind", kKinds[static_cast<int>(p.aeth->kind())]},
                     {"value", p.aeth->value()},
                     {"meaning", p.aeth->meaning()},
                     {"msn", p.aeth->msn}};
    }
    if (p.reth)
        j["reth"] = {{"va", hex(p.reth->va, 16)},
                     {"rkey", hex(p.reth->rkey, 8)},
                     {"length", p.reth->length}};
    if (p.immdt) j["immdt"] = hex(*p.immdt, 8);
    if (p.atomic) {
        j["atomic"] = {{"va", hex(p.atomic->va, 16)},
                       {"rkey", hex(p.atomic->rkey, 8)},
                       {"swap_or_add", std::to_string(p.atomic->swap_or_add)}};
        if (p.atomic->compare) j["atomic"]["compare"] = std::to_string(*p.atomic->compare);
    }
    if (p.atomic_ack_original)
        j["atomic_ack"] = {{"original", std::to_string(*p.atomic_ack_original)}};
    if (p.deth) j["deth"] = {{"qkey", hex(p.deth->qkey, 8)}, {"src_qp", hex(p.deth->src_qp, 6)}};
    j["payload_bytes"] = p.payload_bytes;
    j["sent_again"] = p.sent_again;
    return j;
}

Packet from_json(const json& o, const std::string& where) {
    check_against_schema(o, where);
    auto u = [&](const json& v, std::uint64_t max, std::string_view name) {
        return get_unsigned(v, max, name, where);
    };
    Packet p;
    p.time_s = o["time_s"].get<double>();
    p.time_epoch = o["time_epoch"].get<std::string>();
    if (o.contains("interface")) p.interface = o["interface"].get<std::string>();
    p.frame_length = static_cast<std::uint32_t>(u(o["frame_length"], 0xffffffff, "frame_length"));
    p.src = o["src"].get<std::string>();
    p.dst = o["dst"].get<std::string>();
    p.dscp = static_cast<std::uint8_t>(u(o["dscp"], 63, "dscp"));
    p.ecn = static_cast<std::uint8_t>(u(o["ecn"], 3, "ecn"));
    p.src_port = static_cast<std::uint16_t>(u(o["src_port"], 0xffff, "src_port"));
    p.dst_port = static_cast<std::uint16_t>(u(o["dst_port"], 0xffff, "dst_port"));
    p.opcode = static_cast<std::uint8_t>(u(o["opcode"], 255, "opcode"));
    p.qpn = static_cast<std::uint32_t>(u(o["qpn"], 0xffffff, "qpn"));
    p.psn = static_cast<std::uint32_t>(u(o["psn"], 0xffffff, "psn"));
    p.ack_requested = o["ack_requested"].get<bool>();
    p.solicited = o["solicited"].get<bool>();
    if (o.contains("aeth"))
        p.aeth = Aeth{
            .syndrome = static_cast<std::uint8_t>(u(o["aeth"]["syndrome"], 255, "aeth.syndrome")),
            .msn = static_cast<std::uint32_t>(u(o["aeth"]["msn"], 0xffffff, "aeth.msn"))};
    if (o.contains("reth"))
        p.reth =
            Reth{.va = u(o["reth"]["va"], ~0ull, "reth.va"),
                 .rkey = static_cast<std::uint32_t>(u(o["reth"]["rkey"], 0xffffffff, "reth.rkey")),
                 .length =
                     static_cast<std::uint32_t>(u(o["reth"]["length"], 0xffffffff, "reth.length"))};
    if (o.contains("immdt"))
        p.immdt = static_cast<std::uint32_t>(u(o["immdt"], 0xffffffff, "immdt"));
    if (o.contains("atomic")) {
        p.atomic = AtomicEth{
            .va = u(o["atomic"]["va"], ~0ull, "atomic.va"),
            .rkey = static_cast<std::uint32_t>(u(o["atomic"]["rkey"], 0xffffffff, "atomic.rkey")),
            .swap_or_add = u(o["atomic"]["swap_or_add"], ~0ull, "atomic.swap_or_add"),
            .compare = std::nullopt};
        if (o["atomic"].contains("compare"))
            p.atomic->compare = u(o["atomic"]["compare"], ~0ull, "atomic.compare");
    }
    if (o.contains("atomic_ack"))
        p.atomic_ack_original = u(o["atomic_ack"]["original"], ~0ull, "atomic_ack.original");
    if (o.contains("deth"))
        p.deth = Deth{
            .qkey = static_cast<std::uint32_t>(u(o["deth"]["qkey"], 0xffffffff, "deth.qkey")),
            .src_qp = static_cast<std::uint32_t>(u(o["deth"]["src_qp"], 0xffffff, "deth.src_qp"))};
    p.payload_bytes =
        static_cast<std::uint32_t>(u(o["payload_bytes"], 0xffffffff, "payload_bytes"));
    p.sent_again = o["sent_again"].get<bool>();
    return p;
}

std::string write_document(const std::vector<Packet>& packets) {
    std::string text = fmt::format("{{\"format\": \"{}\", \"schema_version\": {}, \"packets\": [",
                                   kFormat, kSchemaVersion);
    for (std::size_t i = 0; i < packets.size(); ++i)
        text += (i == 0 ? "\n  " : ",\n  ") + to_json(packets[i]).dump();
    text += packets.empty() ? "]}\n" : "\n]}\n";
    return text;
}

std::vector<Packet> read_document(std::string_view text, const std::string& source) {
    const json document = json::parse(text, nullptr, false);
    if (document.is_discarded())
        throw InputError(
            fmt::format("{}: not JSON (./rdmalab wire F.pcap --json writes it)", source));
    if (!document.is_object() || document.value("format", json()) != kFormat)
        throw InputError(fmt::format(
            "{}: not a packet file: its \"format\" is not \"{}\" (./rdmalab wire F.pcap --json "
            "writes one)",
            source, kFormat));
    const json version = document.value("schema_version", json());
    if (version != kSchemaVersion)
        throw InputError(fmt::format("{}: packet schema version {}; this reader reads version {}",
                                     source, version.dump(), kSchemaVersion));
    if (!document.contains("packets") || !document["packets"].is_array())
        throw InputError(fmt::format("{}: its \"packets\" is not a list", source));
    std::vector<Packet> packets;
    for (const auto& object : document["packets"])
        packets.push_back(from_json(object, fmt::format("{}: packet {}", source, packets.size())));
    return packets;
}

ordered_json packet_schema_json() {
    ordered_json schema = {
        {"title", "rdmalab packet record"},
        {"description",
         "One RoCE v2 packet as ./rdmalab wire --json writes it (tshark decodes; wire/packet.hpp "
         "defines it). Generated by rdma-wire --schema: do not edit."},
        {"format", kFormat},
        {"schema_version", kSchemaVersion},
        {"type", "object"},
        {"required", json::array()},
        {"properties", ordered_json::object()}};
    for (const auto& f : kSchema) {
        const auto dot = f.name.find('.');
        ordered_json* target = &schema;
        std::string key(f.name);
        if (dot != std::string_view::npos) {
            target = &schema["properties"][std::string(f.name.substr(0, dot))];
            key = std::string(f.name.substr(dot + 1));
        }
        ordered_json property = {{"type", f.type}, {"description", f.description}};
        if (f.type == "integer") property["minimum"] = 0;
        if (f.type == "object") {
            property["required"] = json::array();
            property["properties"] = ordered_json::object();
        }
        (*target)["properties"][key] = property;
        if (f.required) (*target)["required"].push_back(key);
    }
    return schema;
}

}  // namespace rdmalab::wire
