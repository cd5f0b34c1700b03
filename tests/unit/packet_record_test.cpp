// The packet record (wire/packet.hpp, wire/report.hpp): tshark's field lines → records, the
// JSON document and back, the schema file the site reads, the ladder, the prediction check, and
// bad input. The lines below are tshark 4.0's output for packets of a lab capture
// (rdma-wire's -e list, tab-separated), trimmed to a few packets.
#include "packet.hpp"
#include "report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace rdmalab::wire;

namespace {

// One tshark line from named fields (the rest empty), in kTsharkFields' order.
std::string line(const std::vector<std::pair<std::string_view, std::string>>& fields) {
    std::vector<std::string> columns(kTsharkFields.size());
    for (const auto& [name, value] : fields)
        for (std::size_t i = 0; i < kTsharkFields.size(); ++i)
            if (kTsharkFields[i] == name) columns[i] = value;
    std::string text;
    for (std::size_t i = 0; i < columns.size(); ++i) text += (i ? "\t" : "") + columns[i];
    return text + "\n";
}

// The fields every packet of the lab's wire has: IPv4 from host 2 to host 1, UDP to 4791.
std::vector<std::pair<std::string_view, std::string>> base(const std::string& time,
                                                           const std::string& opcode,
                                                           const std::string& psn) {
    return {{"frame.time_relative", time},
            {"frame.time_epoch", "1764000000." + time.substr(2)},
            {"frame.len", "1082"},
            {"ip.src", "198.51.100.2"},
            {"ip.dst", "198.51.100.1"},
            {"ip.dsfield.dscp", "0"},
            {"ip.dsfield.ecn", "0"},
            {"udp.srcport", "49152"},
            {"udp.dstport", "4791"},
            {"udp.length", "1048"},
            {"infiniband.bth.opcode", opcode},
            {"infiniband.bth.se", "0"},
            {"infiniband.bth.a", "0"},
            {"infiniband.bth.padcnt", "0"},
            {"infiniband.bth.destqp", "0x000011"},
            {"infiniband.bth.psn", psn}};
}

template <typename... More>
std::string packet_line(std::string time, std::string opcode, std::string psn, More... more) {
    auto fields = base(time, opcode, psn);
    (fields.push_back(more), ...);
    // A later value for a name replaces the base's.
    std::vector<std::pair<std::string_view, std::string>> merged;
    for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
        bool seen = false;
        for (const auto& m : merged) seen = seen || m.first == it->first;
        if (!seen) merged.push_back(*it);
    }
    return line(merged);
}

using F = std::pair<std::string_view, std::string>;

// A WRITE of 2500 bytes (First with RETH, Middle, Last asking for an ACK), the ACK, a NAK, the
// First sent again, an RNR NAK, a WRITE WITH IMMEDIATE, a CmpSwap and its ATOMIC Acknowledge,
// a UD SEND with DETH marked ECN CE, and a CNP.
std::string fixture() {
    return packet_line("0.000100000", "6", "100", F{"infiniband.reth.va", "0x00007f1234560000"},
                       F{"infiniband.reth.r_key", "0x0000abcd"},
                       F{"infiniband.reth.dmalen", "2500"}, F{"udp.length", "1064"}) +
           packet_line("0.000200000", "7", "101") +
           packet_line("0.000300000", "8", "102", F{"infiniband.bth.a", "1"},
                       F{"infiniband.bth.padcnt", "0"}, F{"udp.length", "476"},
                       F{"frame.len", "510"}) +
           packet_line("0.000400000", "17", "102", F{"ip.src", "198.51.100.1"},
                       F{"ip.dst", "198.51.100.2"}, F{"infiniband.aeth.syndrome", "31"},
                       F{"infiniband.aeth.msn", "1"}, F{"udp.length", "28"}) +
           packet_line("0.000500000", "17", "100", F{"ip.src", "198.51.100.1"},
                       F{"ip.dst", "198.51.100.2"}, F{"infiniband.aeth.syndrome", "96"},
                       F{"infiniband.aeth.msn", "1"}, F{"udp.length", "28"}) +
           packet_line("0.000600000", "6", "100", F{"infiniband.reth.va", "0x00007f1234560000"},
                       F{"infiniband.reth.r_key", "0x0000abcd"},
                       F{"infiniband.reth.dmalen", "2500"}, F{"udp.length", "1064"}) +
           packet_line("0.000700000", "17", "103", F{"ip.src", "198.51.100.1"},
                       F{"ip.dst", "198.51.100.2"}, F{"infiniband.aeth.syndrome", "56"},
                       F{"infiniband.aeth.msn", "2"}, F{"udp.length", "28"}) +
           packet_line("0.000800000", "11", "104", F{"infiniband.reth.va", "0x00007f1234560000"},
                       F{"infiniband.reth.r_key", "0x0000abcd"}, F{"infiniband.reth.dmalen", "4"},
                       F{"infiniband.immdt", "0000beef"}, F{"infiniband.bth.se", "1"},
                       F{"infiniband.bth.padcnt", "0"}, F{"udp.length", "48"}) +
           packet_line("0.000900000", "19", "105", F{"infiniband.reth.dmalen", ""},
                       F{"infiniband.atomiceth.swapdt", "0x0000000000000001"},
                       F{"infiniband.atomiceth.cmpdt", "0x0000000000000000"},
                       F{"udp.length", "52"}) +
           packet_line("0.001000000", "18", "105", F{"ip.src", "198.51.100.1"},
                       F{"ip.dst", "198.51.100.2"}, F{"infiniband.aeth.syndrome", "31"},
                       F{"infiniband.aeth.msn", "3"},
                       F{"infiniband.atomicacketh.origremdt", "0x0000000000000000"},
                       F{"udp.length", "40"}) +
           packet_line("0.001100000", "100", "7", F{"infiniband.bth.destqp", "0x000012"},
                       F{"infiniband.deth.q_key", "0x11111111"},
                       F{"infiniband.deth.srcqp", "0x000013"}, F{"ip.dsfield.dscp", "26"},
                       F{"ip.dsfield.ecn", "3"}, F{"udp.length", "96"}) +
           packet_line("0.001200000", "129", "0", F{"ip.src", "198.51.100.1"},
                       F{"ip.dst", "198.51.100.2"}, F{"udp.length", "40"});
}

}  // namespace

TEST(WirePacket, DecodesTsharkFieldsIntoTheRecord) {
    const auto packets = decode_fields(fixture(), "fixture");
    ASSERT_EQ(packets.size(), 12u);
    const Packet& first = packets[0];
    EXPECT_EQ(first.transport(), "RC");
    EXPECT_EQ(first.opcode_name(), "RDMA WRITE First");
    EXPECT_EQ(first.src, "198.51.100.2");
    EXPECT_EQ(first.dst, "198.51.100.1");
    EXPECT_EQ(first.src_port, 49152);
    EXPECT_EQ(first.dst_port, 4791);
    EXPECT_EQ(first.qpn, 0x11u);
    EXPECT_EQ(first.psn, 100u);
    EXPECT_EQ(first.frame_length, 1082u);
    EXPECT_EQ(first.time_epoch, "1764000000.000100000");
    EXPECT_DOUBLE_EQ(first.time_s, 0.0001);
    ASSERT_TRUE(first.reth.has_value());
    EXPECT_EQ(first.reth->va, 0x00007f1234560000ull);
    EXPECT_EQ(first.reth->rkey, 0xabcdu);
    EXPECT_EQ(first.reth->length, 2500u);
    // 1064 − UDP 8 − BTH 12 − RETH 16 − ICRC 4.
    EXPECT_EQ(first.payload_bytes, 1024u);
    EXPECT_FALSE(first.aeth.has_value());
    EXPECT_FALSE(first.sent_again);
    EXPECT_EQ(packets[1].payload_bytes, 1024u);
    EXPECT_TRUE(packets[2].ack_requested);
    EXPECT_EQ(packets[2].payload_bytes, 452u);
    EXPECT_EQ(packets[2].frame_length, 510u);
}

TEST(WirePacket, DecodesTheAethSyndrome) {
    const auto packets = decode_fields(fixture(), "fixture");
    const Aeth& ack = *packets[3].aeth;
    EXPECT_EQ(ack.kind(), AethKind::kAck);
    EXPECT_EQ(ack.value(), 31);  // the credit count
    EXPECT_EQ(ack.meaning(), "ACK");
    EXPECT_EQ(packets[3].payload_bytes, 0u);
    const Aeth& nak = *packets[4].aeth;
    EXPECT_EQ(nak.kind(), AethKind::kNak);
    EXPECT_EQ(nak.value(), 0);
    EXPECT_EQ(nak.meaning(), "NAK PSN sequence error");
    const Aeth& rnr = *packets[6].aeth;
    EXPECT_EQ(rnr.kind(), AethKind::kRnrNak);
    EXPECT_EQ(rnr.meaning(), "RNR NAK (timer 24)");
    EXPECT_EQ(rnr.msn, 2u);
    EXPECT_EQ((Aeth{.syndrome = 0x62, .msn = 0}).meaning(), "NAK remote access error");
    EXPECT_EQ((Aeth{.syndrome = 0x6f, .msn = 0}).meaning(), "NAK code 15");
    EXPECT_EQ((Aeth{.syndrome = 0x40, .msn = 0}).meaning(), "syndrome 64");
}

TEST(WirePacket, OtherHeadersAndTheIpField) {
    const auto packets = decode_fields(fixture(), "fixture");
    EXPECT_TRUE(packets[5].sent_again);  // the First again, after the NAK
    EXPECT_FALSE(packets[3].sent_again);
    const Packet& imm = packets[7];
    EXPECT_EQ(imm.opcode_name(), "RDMA WRITE Only with Immediate");
    EXPECT_EQ(imm.immdt, 0xbeefu);
    EXPECT_TRUE(imm.solicited);
    EXPECT_EQ(imm.payload_bytes, 4u);  // 48 − 8 − 12 − 16 − 4 − 4
    const Packet& cas = packets[8];
    EXPECT_EQ(cas.opcode_name(), "CmpSwap");
    ASSERT_TRUE(cas.atomic.has_value());
    EXPECT_EQ(cas.atomic->swap_or_add, 1u);
    EXPECT_EQ(cas.atomic->compare, 0u);
    EXPECT_EQ(cas.payload_bytes, 0u);
    EXPECT_EQ(packets[9].atomic_ack_original, 0u);
    EXPECT_EQ(packets[9].opcode_name(), "ATOMIC Acknowledge");
    const Packet& ud = packets[10];
    EXPECT_EQ(ud.transport(), "UD");
    EXPECT_EQ(ud.opcode_name(), "SEND Only");
    ASSERT_TRUE(ud.deth.has_value());
    EXPECT_EQ(ud.deth->qkey, 0x11111111u);
    EXPECT_EQ(ud.deth->src_qp, 0x13u);
    EXPECT_EQ(ud.dscp, 26);
    EXPECT_EQ(ud.ecn, 3);
    EXPECT_EQ(ud.payload_bytes, 64u);  // 96 − 8 − 12 − 8 − 4
    EXPECT_EQ(packets[11].transport(), "CNP");
    EXPECT_EQ(packets[11].opcode_name(), "CNP");
}

TEST(WirePacket, JsonRoundTrip) {
    auto packets = decode_fields(fixture(), "fixture");
    packets[0].interface = "eth0";
    const std::string text = write_document(packets);
    EXPECT_EQ(text.rfind(R"({"format": "rdmalab-packets", "schema_version": 1, "packets": [)", 0),
              0u);
    EXPECT_EQ(read_document(text, "doc"), packets);
    EXPECT_EQ(read_document(write_document({}), "empty"), std::vector<Packet>{});
    // Field by field, as the site and the tests read them.
    const auto j = to_json(packets[4]);
    EXPECT_EQ(j["qpn"], "0x000011");
    EXPECT_EQ(j["aeth"]["kind"], "NAK");
    EXPECT_EQ(j["aeth"]["meaning"], "NAK PSN sequence error");
    EXPECT_EQ(field_text(packets[0], "reth.length"), "2500");
    EXPECT_EQ(field_text(packets[0], "reth.rkey"), "0x0000abcd");
    EXPECT_EQ(field_text(packets[0], "immdt"), "");
    EXPECT_EQ(field_text(packets[2], "ack_requested"), "true");
}

TEST(WirePacket, EveryFieldIsInTheSchemaAndTheSiteHasTheSchema) {
    auto packets = decode_fields(fixture(), "fixture");
    std::set<std::string> written;
    for (auto& p : packets) {
        p.interface = "eth0";
        const auto record = to_json(p);
        for (const auto& [key, value] : record.items()) {
            written.insert(key);
            if (value.is_object())
                for (const auto& [inner, unused] : value.items()) written.insert(key + "." + inner);
        }
    }
    std::set<std::string> schema;
    for (const auto& f : kSchema) schema.insert(std::string(f.name));
    EXPECT_EQ(written, schema);  // every field written is in the schema, and every one is written
    std::ifstream in(RDMALAB_SOURCE_DIR "/docs/.vitepress/theme/packet-schema.json");
    ASSERT_TRUE(in) << "docs/.vitepress/theme/packet-schema.json is missing";
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), packet_schema_json().dump(2) + "\n")
        << "the site's packet schema is stale: build/bin/rdma-wire --schema > "
           "docs/.vitepress/theme/packet-schema.json";
}

TEST(WirePacket, BadTsharkOutputIsOneClearError) {
    EXPECT_TRUE(decode_fields("", "x").empty());
    auto message = [](const std::string& text) {
        try {
            decode_fields(text, "cap.pcap");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("a\tb\n"), "cap.pcap: tshark's line 1 has 2 fields, not 32");
    EXPECT_NE(message(packet_line("0.1", "6", "x")).find("infiniband.bth.psn 'x'"),
              std::string::npos);
    EXPECT_NE(message(packet_line("0.1", "6", "16777216")).find("infiniband.bth.psn"),
              std::string::npos);
    EXPECT_NE(message(packet_line("0.1", "", "1")).find("no infiniband.bth.opcode"),
              std::string::npos);
    EXPECT_NE(message(packet_line("0.1", "6", "1", F{"infiniband.bth.a", "maybe"})).find("flag"),
              std::string::npos);
    EXPECT_NE(message(packet_line("0.1", "6", "1", F{"infiniband.immdt", "123456789a"}))
                  .find("infiniband.immdt"),
              std::string::npos);
}

TEST(WirePacket, BadDocumentIsOneClearError) {
    const auto packets = decode_fields(fixture(), "fixture");
    auto message = [](const std::string& text) {
        try {
            read_document(text, "p.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("not json").find("p.json: not JSON"), std::string::npos);
    EXPECT_NE(message("[]").find("not a packet file"),
              std::string::npos);  // lab/wire.sh's old form
    EXPECT_NE(message(R"({"format": "rdmalab-packets", "schema_version": 99, "packets": []})")
                  .find("packet schema version 99; this reader reads version 1"),
              std::string::npos);
    nlohmann::json document = nlohmann::json::parse(write_document(packets));
    document["packets"][1].erase("psn");
    EXPECT_NE(message(document.dump()).find("p.json: packet 1: no psn"), std::string::npos);
    document = nlohmann::json::parse(write_document(packets));
    document["packets"][0]["reth"]["length"] = "long";
    EXPECT_NE(message(document.dump()).find("reth.length is not an unsigned integer"),
              std::string::npos);
    document = nlohmann::json::parse(write_document(packets));
    document["packets"][0]["qpn"] = "0x1000000";
    EXPECT_NE(message(document.dump()).find("qpn is out of range"), std::string::npos);
    document = nlohmann::json::parse(write_document(packets));
    document["packets"][0].erase("reth");
    EXPECT_EQ(message(document.dump()), "no error");  // an extension header is optional
}

TEST(WirePacket, LadderKeepsWhatWireShPrinted) {
    const auto packets = decode_fields(fixture(), "fixture");
    const std::string text = ladder(packets, {});
    std::istringstream lines(text);
    std::string header, first;
    std::getline(lines, header);
    std::getline(lines, first);
    // Column for column as lab/wire.sh printed them (bench/results/wire/operations/ladder.txt).
    EXPECT_EQ(header,
              "   time ms  from → to      opcode                                  QPN      PSN"
              "  headers · payload");
    EXPECT_EQ(first,
              "     0.100  host2→host1    RC RDMA WRITE First                0x000011      100"
              "  RETH va 0x00007f1234560000 rkey 0x0000abcd len 2500 · payload 1024 B");
    EXPECT_NE(text.find("AETH NAK PSN sequence error msn 1"), std::string::npos);
    EXPECT_NE(text.find("payload 1024 B · SENT AGAIN"), std::string::npos);
    EXPECT_NE(text.find("DETH qkey 0x11111111 src QP 0x000013 · payload 64 B · DSCP 26 ECN 3"),
              std::string::npos);
    EXPECT_NE(text.find("\n12 RoCE v2 packets: 2 RC RDMA WRITE First, 1 RC RDMA WRITE Middle, "),
              std::string::npos);
    EXPECT_NE(text.find("\n1 × NAK PSN sequence error\n1 × RNR NAK (timer 24)\n"),
              std::string::npos);
    EXPECT_NE(text.find("\n1 packets sent again (same direction, QP, PSN and opcode)\n"),
              std::string::npos);
    // --brief: the First and Middle stay apart (the First has a RETH); a run is one line.
    std::vector<Packet> run(4, packets[1]);
    for (std::uint32_t i = 0; i < 4; ++i) run[i].psn = 200 + i;
    const std::string brief = ladder(run, {.brief = true});
    EXPECT_NE(brief.find("··· 4 packets like it in all, PSN 200–203"), std::string::npos);
    EXPECT_EQ(std::count(brief.begin(), brief.end(), '\n'), 5);
}

TEST(WirePacket, QueriesForTests) {
    const auto packets = decode_fields(fixture(), "fixture");
    auto count = [&](std::vector<std::string> texts) {
        std::vector<Condition> conditions;
        for (const auto& t : texts) conditions.push_back(parse_condition(t));
        return std::count_if(packets.begin(), packets.end(),
                             [&](const Packet& p) { return matches(p, conditions); });
    };
    EXPECT_EQ(count({"reth"}), 3);
    EXPECT_EQ(count({"opcode_name=RDMA WRITE First", "reth.length=2500"}), 2);
    EXPECT_EQ(count({"opcode_name~WRITE (Middle|Last)"}), 2);
    EXPECT_EQ(count({"sent_again=true"}), 1);
    EXPECT_EQ(count({"src~^198\\.51\\.100\\.1$", "aeth.kind=NAK"}), 1);
    EXPECT_EQ(count({"ecn=3"}), 1);
    EXPECT_THROW(parse_condition("colour=red"), std::invalid_argument);
}

// --flows: per stream counts, bytes counted once, goodput over the span, Jain's fairness.
TEST(WirePacket, FlowSummariesAndFairness) {
    auto packet = [](std::string src, std::uint32_t qpn, double time, std::uint32_t bytes,
                     std::uint8_t ecn, bool again = false) {
        Packet p;
        p.src = std::move(src);
        p.dst = "198.51.100.3";
        p.qpn = qpn;
        p.time_s = time;
        p.payload_bytes = bytes;
        p.ecn = ecn;
        p.sent_again = again;
        return p;
    };
    std::vector<Packet> packets = {
        packet("198.51.100.1", 0x11, 0.0, 1000, 2),
        packet("198.51.100.2", 0x12, 0.5, 1000, 3),
        packet("198.51.100.1", 0x11, 1.0, 1000, 3),
        packet("198.51.100.1", 0x11, 1.0, 1000, 2, true),
        packet("198.51.100.2", 0x12, 1.5, 1000, 2),
    };
    Packet ack = packet("198.51.100.3", 0x21, 1.6, 0, 2);
    ack.dst = "198.51.100.1";
    ack.aeth = Aeth{.syndrome = 0x60, .msn = 1};  // NAK, PSN sequence error
    packets.push_back(ack);

    const auto flows = flow_summaries(packets);
    ASSERT_EQ(flows.size(), 3u);
    EXPECT_EQ(flows[0].src, "198.51.100.1");
    EXPECT_EQ(flows[0].packets, 3u);
    EXPECT_EQ(flows[0].data_bytes, 2000u);  // the packet sent again is not counted twice
    EXPECT_EQ(flows[0].sent_again, 1u);
    EXPECT_EQ(flows[0].ce, 1u);
    EXPECT_EQ(flows[0].ect, 2u);
    EXPECT_DOUBLE_EQ(flows[0].goodput_mbit(), 2000 * 8 / 1.0 / 1e6);
    EXPECT_DOUBLE_EQ(flows[1].goodput_mbit(), 2000 * 8 / 1.0 / 1e6);
    EXPECT_EQ(flows[2].naks, 1u);
    EXPECT_EQ(flows[2].data_bytes, 0u);
    EXPECT_DOUBLE_EQ(jain_fairness(flows), 1.0);  // two equal data streams; the NAKs carry none

    flows_table(flows);  // formats without throwing
    std::vector<FlowSummary> unequal = {flows[0], flows[1]};
    unequal[1].data_bytes = 6000;  // x and 3x: (4x)^2 / (2 * 10x^2) = 0.8
    EXPECT_NEAR(jain_fairness(unequal), 0.8, 1e-12);
    EXPECT_EQ(jain_fairness({}), 0.0);
    const std::string table = flows_table(unequal);
    EXPECT_NE(table.find("# jain_fairness\t0.8000\t2 data streams"), std::string::npos) << table;
}

TEST(WirePacket, PredictionAgainstTheCapture) {
    const auto packets = decode_fields(fixture(), "fixture");
    const std::string client_out =
        "client: step 1: RDMA WRITE of 2500 bytes -> 4 packets expected on the wire:\n"
        "client:   client → server RDMA WRITE First                   QP 0x000011 PSN      100  "
        "1024 B  RETH\n"
        "client:   client → server RDMA WRITE Middle                  QP 0x000011 PSN      101  "
        "1024 B  \n"
        "client:   client → server RDMA WRITE Last                    QP 0x000011 PSN      102   "
        "452 B  AckReq\n"
        "client:   server → client Acknowledge                        QP 0x000011 PSN      102     "
        "0 B  AETH ACK msn 1\n";
    auto result = check_prediction(packets, client_out, "198.51.100.2", "198.51.100.1");
    EXPECT_EQ(result.predicted, 4u);
    EXPECT_EQ(result.found, 4u);
    EXPECT_EQ(result.missing, 0u);
    EXPECT_EQ(result.sent_again, 1u);  // the First, seen twice
    // In PSN 100-102 on QP 0x11 besides: the NAK of PSN 100.
    EXPECT_EQ(result.extra, 1);
    EXPECT_EQ(result.summary(), "predicted 4 found 4 missing 0 extra 1 sent-again 1");
    // A run line ("× 3", PSN a–b) and a packet the capture lacks.
    const std::string runs =
        "client:   client → server RDMA WRITE Middle × 3              QP 0x000011 PSN  101–103  "
        "1024 B  each\n";
    result = check_prediction(packets, runs, "198.51.100.2", "198.51.100.1");
    EXPECT_EQ(result.predicted, 3u);
    EXPECT_EQ(result.found, 1u);
    EXPECT_EQ(result.missing, 2u);
    ASSERT_EQ(result.missing_lines.size(), 2u);
    EXPECT_EQ(result.missing_lines[0], "missing: client → server RDMA WRITE Middle PSN 102 1024 B");
}

// Lines tshark 4.0.17 printed for a lab capture (on-the-wire across two hosts, 2026-11-25), as
// rdma-wire asks for them: a SEND Only and its ACK, a WRITE Only with Immediate, a READ Response
// First, a FetchAdd and its ATOMIC Acknowledge, a CmpSwap.
constexpr const char* kCaptured =
    "0.139217000\t1795635128.384342000\t570\t\t198.51.100.2\t198.51.100."
    "1\t\t\t0\t0\t\t\t49441\t4791\t536\t4\t0\t1\t0\t0x000011\t3300403\t\t\t\t\t\t\t\t\t\t\t\n"
    "0.146175000\t1795635128.391300000\t62\t\t198.51.100.1\t198.51.100."
    "2\t\t\t0\t0\t\t\t49441\t4791\t28\t17\t0\t0\t0\t0x000011\t3300403\t31\t1\t\t\t\t\t\t\t\t\t\n"
    "0.189800000\t1795635128.434925000\t590\t\t198.51.100.2\t198.51.100."
    "1\t\t\t0\t0\t\t\t49441\t4791\t556\t11\t0\t1\t0\t0x000011\t3300411\t\t\t0x000055bd047b9000\t0x0"
    "00003f1\t512\t00001004\t\t\t\t\t\n"
    "0.217159000\t1795635128.462284000\t1086\t\t198.51.100.1\t198.51.100."
    "2\t\t\t0\t0\t\t\t49441\t4791\t1052\t13\t0\t0\t0\t0x000011\t3300416\t31\t8\t\t\t\t\t\t\t\t\t\n"
    "0.222529000\t1795635128.467654000\t86\t\t198.51.100.2\t198.51.100."
    "1\t\t\t0\t0\t\t\t49441\t4791\t52\t20\t0\t1\t0\t0x000011\t3300419\t\t\t0x000055bd047c3000\t0x00"
    "00059c\t\t\t42\t0\t\t\t\n"
    "0.223270000\t1795635128.468395000\t70\t\t198.51.100.1\t198.51.100."
    "2\t\t\t0\t0\t\t\t49441\t4791\t36\t18\t0\t0\t0\t0x000011\t3300419\t31\t9\t\t\t\t\t\t\t1000\t\t"
    "\n"
    "0.226826000\t1795635128.471951000\t86\t\t198.51.100.2\t198.51.100."
    "1\t\t\t0\t0\t\t\t49441\t4791\t52\t19\t0\t1\t0\t0x000011\t3300420\t\t\t0x000055bd047c3000\t0x00"
    "00059c\t\t\t7\t1042\t\t\t\n";

TEST(WirePacket, DecodesLinesOfARealCapture) {
    const auto packets = decode_fields(kCaptured, "operations.pcap");
    ASSERT_EQ(packets.size(), 7u);
    EXPECT_EQ(packets[0].opcode_name(), "SEND Only");
    EXPECT_TRUE(packets[0].ack_requested);
    EXPECT_EQ(packets[0].payload_bytes, 512u);
    EXPECT_EQ(packets[0].frame_length, 570u);
    EXPECT_EQ(packets[0].src_port, 49441);
    EXPECT_EQ(packets[0].dst_port, 4791);
    EXPECT_EQ(packets[0].time_epoch, "1795635128.384342000");
    EXPECT_EQ(packets[1].aeth->meaning(), "ACK");
    EXPECT_EQ(packets[1].aeth->msn, 1u);
    EXPECT_EQ(packets[2].opcode_name(), "RDMA WRITE Only with Immediate");
    EXPECT_EQ(packets[2].immdt, 0x1004u);
    EXPECT_EQ(packets[2].reth->rkey, 0x3f1u);
    EXPECT_EQ(packets[2].payload_bytes, 512u);
    EXPECT_EQ(packets[3].opcode_name(), "RDMA READ Response First");
    EXPECT_EQ(packets[3].payload_bytes, 1024u);
    EXPECT_FALSE(packets[3].reth.has_value());
    const Packet& add = packets[4];
    EXPECT_EQ(add.opcode_name(), "FetchAdd");
    EXPECT_FALSE(add.reth.has_value());  // tshark's reth.va and r_key here are the AtomicETH's
    ASSERT_TRUE(add.atomic.has_value());
    EXPECT_EQ(add.atomic->va, 0x000055bd047c3000ull);
    EXPECT_EQ(add.atomic->rkey, 0x59cu);
    EXPECT_EQ(add.atomic->swap_or_add, 42u);
    EXPECT_FALSE(add.atomic->compare.has_value());
    EXPECT_EQ(add.payload_bytes, 0u);
    EXPECT_EQ(packets[5].atomic_ack_original, 1000u);
    EXPECT_EQ(packets[5].payload_bytes, 0u);
    EXPECT_EQ(packets[6].atomic->compare, 1042u);
    EXPECT_EQ(packets[6].atomic->swap_or_add, 7u);
    const std::string text = ladder(packets, {});
    EXPECT_NE(text.find("AtomicETH add 42 · ack requested"), std::string::npos);
    EXPECT_NE(text.find("AtomicAckETH original 1000"), std::string::npos);
    EXPECT_NE(text.find("AtomicETH compare 1042 swap 7"), std::string::npos);
    EXPECT_EQ(read_document(write_document(packets), "doc"), packets);
}
