// Writes the seed corpora (tests/fuzz/corpus/<target>/) from the real encoders, so every seed
// is a valid message of today's format, plus edge cases each parser must refuse. Run it after a
// format changes: build-fuzz/bin/fuzz/fuzz_make_corpus tests/fuzz/corpus (from the repository
// root; it also copies two result files from bench/results).
#include "efa_rdm_exchange.hpp"
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/codec.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/transfer/plan.hpp"
#include "rdmalab/ud_datagrams.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace rdmalab;
using namespace rdmalab::bench;
namespace fs = std::filesystem;

namespace {

fs::path root;

void seed(const std::string& target, const std::string& name, std::span<const std::byte> bytes) {
    fs::create_directories(root / target);
    std::ofstream(root / target / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}
void seed(const std::string& target, const std::string& name, std::string_view text) {
    seed(target, name, std::as_bytes(std::span(text)));
}
std::vector<std::byte> concat(std::initializer_list<std::span<const std::byte>> parts) {
    std::vector<std::byte> out;
    for (auto part : parts) out.insert(out.end(), part.begin(), part.end());
    return out;
}
std::vector<std::byte> u8s(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int v : values) out.push_back(static_cast<std::byte>(v));
    return out;
}

QpEndpoint endpoint(ibv_qp_type type, bool buffer) {
    QpEndpoint e{.qp_type = type, .active_mtu = IBV_MTU_1024, .qpn = 0x11, .psn = 0xabcdef};
    e.gid.raw[10] = e.gid.raw[11] = 0xff;  // ::ffff:198.51.100.1
    e.gid.raw[12] = 198, e.gid.raw[13] = 51, e.gid.raw[14] = 100, e.gid.raw[15] = 1;
    if (buffer) e.address = 0x7f0000001000, e.rkey = 0x1234, e.length = 65536;
    return e;
}

void private_data() {
    const RemoteBuffer write{.address = 0x7f0000001000, .rkey = 0x1234, .length = 4096};
    seed("private_data", "write-target", encode_remote_buffer(write));
    RemoteBuffer read = write;
    read.use = BufferUse::kReadSource;
    seed("private_data", "read-source", encode_remote_buffer(read));
    RemoteBuffer atomic{.address = 0x1000, .rkey = 7, .length = 8, .use = BufferUse::kAtomicTarget};
    auto padded = concat({encode_remote_buffer(atomic), std::vector<std::byte>(32)});
    seed("private_data", "atomic-target-cm-padding", padded);  // as IB/RoCE CM delivers it
    RemoteBuffer wraps = write;
    wraps.address = ~std::uint64_t{0} - 10;
    seed("private_data", "edge-wraps", encode_remote_buffer(wraps));
    const RemoteBufferWire whole = encode_remote_buffer(write);
    seed("private_data", "edge-short", std::span(whole).first(23));
}

void qp_endpoint() {
    seed("qp_endpoint", "rc-advertised", encode_qp_endpoint(endpoint(IBV_QPT_RC, true)));
    seed("qp_endpoint", "uc-none", encode_qp_endpoint(endpoint(IBV_QPT_UC, false)));
    QpEndpoint ib = endpoint(IBV_QPT_RC, false);
    ib.link_layer = IBV_LINK_LAYER_INFINIBAND, ib.lid = 0x17, ib.gid = {},
    ib.active_mtu = IBV_MTU_4096;
    seed("qp_endpoint", "rc-infiniband-lid", encode_qp_endpoint(ib));
    QpEndpoint ud = endpoint(IBV_QPT_UD, false);
    ud.qkey = 0x1ab2c3d4;
    seed("qp_endpoint", "ud-qkey", encode_qp_endpoint(ud));
    QpEndpoint special = endpoint(IBV_QPT_UD, false);
    special.qpn = 1;  // the GSI QP: refused
    seed("qp_endpoint", "edge-qpn-1", encode_qp_endpoint(special));
}

void codec() {
    // Programs that read the endpoint record and the buffer advertisement field by field.
    const auto endpoint_reads = u8s({14, 2, 0, 0, 0, 0, 2, 2, 1, 1, 4 | 16 << 3, 3, 2, 2, 5});
    seed("codec", "endpoint-record",
         concat({endpoint_reads, encode_qp_endpoint(endpoint(IBV_QPT_RC, true))}));
    const auto advertisement_reads = u8s({8, 2, 0, 0, 4 | 2 << 3, 3, 2, 2, 5});
    seed("codec", "buffer-advertisement",
         concat({advertisement_reads,
                 encode_remote_buffer({.address = 0x1000, .rkey = 1, .length = 64})}));
    seed("codec", "edge-reads-past-the-end", u8s({3, 3, 3, 5, 1, 2, 3}));
}

std::vector<std::byte> datagram(DatagramKind kind, std::uint32_t sequence, std::size_t size) {
    std::vector<std::byte> message(size);
    write_datagram(message, {.kind = kind, .sequence = sequence, .count = 100});
    return message;
}

void ud_datagram() {
    std::vector<std::byte> ipv4(kGrhBytes);  // RoCE v2 over IPv4: the header in bytes 20..39
    ipv4[20] = std::byte{0x45};
    const auto addresses = u8s({198, 51, 100, 1, 198, 51, 100, 2});  // source, destination
    std::ranges::copy(addresses, ipv4.begin() + 32);
    std::vector<std::byte> grh(kGrhBytes);  // a GRH: version 6, source and destination GIDs
    grh[0] = std::byte{0x60};
    grh[8] = grh[24] = std::byte{0xfe};
    grh[9] = grh[25] = std::byte{0x80};
    grh[23] = std::byte{1}, grh[39] = std::byte{2};
    seed("ud_datagram", "ipv4-data", concat({ipv4, datagram(DatagramKind::kData, 7, 64)}));
    seed("ud_datagram", "grh-end", concat({grh, datagram(DatagramKind::kEnd, 100, 16)}));
    auto corrupt = datagram(DatagramKind::kData, 3, 48);
    corrupt[40] ^= std::byte{1};
    seed("ud_datagram", "edge-pattern-differs", concat({ipv4, corrupt}));
    seed("ud_datagram", "edge-header-only", std::vector<std::byte>(kGrhBytes + 15));
}

void efa_hello() {
    FabricHello tcp;
    tcp.provider = "tcp";
    tcp.address_format = 2;  // FI_SOCKADDR_IN
    tcp.address = u8s({2, 0, 0x4a, 0x38, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0});
    tcp.receive_capacity = 65536;
    tcp.write_target = {.address = 0x7f0000001000, .key = 3, .length = 65536};
    tcp.read_source = {.address = 0x7f0000011000, .key = 4, .length = 65536};
    seed("efa_hello", "tcp-server", encode_fabric_hello(tcp));
    FabricHello shm;
    shm.provider = "shm";
    shm.address_format = 13;  // FI_ADDR_STR
    const std::string name = "fi_shm://12345";
    shm.address.assign(std::as_bytes(std::span(name)).begin(),
                       std::as_bytes(std::span(name)).end());
    seed("efa_hello", "shm-client", encode_fabric_hello(shm));
    FabricHello efa = tcp;
    efa.provider = "efa";
    efa.address = std::vector<std::byte>(32, std::byte{0x5a});  // GID, QPN, Q_Key
    seed("efa_hello", "efa-server", encode_fabric_hello(efa));
    FabricHello unprintable = tcp;
    unprintable.provider = "t p";
    seed("efa_hello", "edge-unprintable-provider", encode_fabric_hello(unprintable));
}

void bench_json() {
    BenchConfig latency;
    latency.op = Op::kSend, latency.transport = Transport::kUD, latency.mode = Mode::kLatency;
    latency.size = 1024;
    BenchConfig sweep;
    sweep.op = Op::kWriteImm, sweep.qps = 4, sweep.post_list = 8, sweep.signal_every = 16;
    sweep.srq = true, sweep.duration_s = 2.5, sweep.iters = 0;
    seed("bench_config", "default", BenchConfig{}.to_json().dump());
    seed("bench_config", "ud-send-latency", latency.to_json().dump());
    seed("bench_config", "write-imm-srq-duration", sweep.to_json().dump());
    Record negative = BenchConfig{}.to_json();
    negative["qps"] = -1;
    seed("bench_config", "edge-negative-qps", negative.dump());

    auto message = [](const Record& json) {
        const std::string text = json.dump();
        std::vector<std::byte> bytes(4);
        store_be32(bytes, static_cast<std::uint32_t>(text.size()));
        return concat({bytes, std::as_bytes(std::span(text))});
    };
    seed("bench_control", "hello",
         message({{"type", "hello"},
                  {"protocol", kProtocolVersion},
                  {"tool", "0.1.0"},
                  {"device", "rxe0"},
                  {"provider", "rxe"},
                  {"host", "lab"},
                  {"memory", "host"},
                  {"active_mtu", 3}}));
    seed("bench_control", "config", message({{"type", "config"}, {"config", sweep.to_json()}}));
    seed("bench_control", "endpoints",
         message({{"type", "endpoints"},
                  {"endpoints", {to_hex(encode_qp_endpoint(endpoint(IBV_QPT_RC, true)))}},
                  {"responder_depth", 16},
                  {"memory_path", "host"},
                  {"memory_where", "host memory"},
                  {"memory_copies", "none"}}));
    seed("bench_control", "phase",
         message({{"type", "phase"}, {"count", 10000}, {"duration_s", 0.0}, {"warmup", true}}));
    seed("bench_control", "sent", message({{"type", "sent"}, {"per_qp", {10000, 10000}}}));
    seed("bench_control", "counted",
         message({{"type", "counted"},
                  {"messages", 10000},
                  {"bytes", 655360000},
                  {"seconds", 0.25},
                  {"cpu_s", 0.2},
                  {"elapsed_s", 0.26},
                  {"counter", 0},
                  {"staging_copies", 0}}));
    seed("bench_control", "edge-error", message({{"error", "the server stops"}}));

    const std::vector<Record> records = {
        Record{{"config", BenchConfig{}.to_json()},
               {"result", {{"gib_per_s", 1.5}, {"mops", 0.25}, {"latency", {{"p99_us", 9.5}}}}},
               {"environment", {{"device", "rxe0"}, {"provider", "rxe"}, {"path_mtu", 1024}}}},
        Record{{"config", latency.to_json()},
               {"result", {{"gib_per_s", 0.5}, {"latency", {{"p99_us", 12.0}}}}}}};
    for (const char* target : {"bench_records", "bench_plot"}) {
        seed(target, "two-records", to_json(records));
        seed(target, "edge-no-records", "{\"rows\": []}");
        for (const char* file : {"wire/ud-loss-0.1.json", "optimizations/post-list/round1-64.json"})
            fs::copy_file(fs::path("bench/results") / file,
                          root / target / fs::path(file).filename(),
                          fs::copy_options::overwrite_existing);
    }
}

void text_parsers() {
    auto bounded = [](std::uint64_t min, std::uint64_t max, std::string_view text) {
        std::vector<std::byte> bytes(16);
        ByteWriter out(std::span(bytes), "the bounds");
        out.u64(min);
        out.u64(max);
        return concat({bytes, std::as_bytes(std::span(text))});
    };
    seed("sweep_values", "list", bounded(1, 1 << 30, "4,64,4K"));
    seed("sweep_values", "range", bounded(1, 1 << 30, "32..8192"));
    seed("sweep_values", "zero", bounded(0, 1024, "0"));
    seed("sweep_values", "edge-backwards", bounded(1, 1 << 30, "64..8"));
    auto ported = [](std::string_view text) {
        return concat({u8s({0x4a, 0x38}), std::as_bytes(std::span(text))});
    };
    seed("options", "size-k", ported("64K"));
    seed("options", "size-gib", ported("1GiB"));
    seed("options", "ipv4", ported("198.51.100.1"));
    seed("options", "ipv6", ported("fe80::1"));
    seed("options", "edge-size-overflow", ported("18446744073709551615G"));
    for (const char* spec : {"host", "cuda:0", "rocm:1"}) {
        std::string name = spec;
        std::replace(name.begin(), name.end(), ':', '-');
        seed("memory_spec", name, std::string_view(spec));
    }
    seed("memory_spec", "edge-host-device", std::string_view("host:1"));
}

// An IPv4 + UDP + BTH packet as a link carries it (the dcqcn lesson's notification point reads
// such copies): TOS, IHL in words, BTH opcode, destination QP, PSN, payload bytes.
std::vector<std::byte> roce_packet(int tos, int ihl_words, int opcode, std::uint32_t qp,
                                   std::uint32_t psn, std::size_t payload) {
    std::vector<int> p = {0x40 | ihl_words,
                          tos,
                          0,
                          0,
                          0x12,
                          0x34,
                          0x40,
                          0,
                          64,
                          17,
                          0,
                          0,
                          198,
                          51,
                          100,
                          1,
                          198,
                          51,
                          100,
                          23};
    p.resize(static_cast<std::size_t>(ihl_words) * 4, 0);  // options, if any: zeros (end of list)
    const std::size_t udp_at = p.size();
    const std::size_t total = udp_at + 8 + 12 + payload;
    const std::size_t udp_length = total - udp_at;
    for (int b : {0xc0, 0x00, 0x12, 0xb7, static_cast<int>(udp_length >> 8),
                  static_cast<int>(udp_length & 0xff), 0, 0})
        p.push_back(b);
    for (int b : {opcode, 0, 0xff, 0xff, 0, static_cast<int>(qp >> 16 & 0xff),
                  static_cast<int>(qp >> 8 & 0xff), static_cast<int>(qp & 0xff), 0x80,
                  static_cast<int>(psn >> 16 & 0xff), static_cast<int>(psn >> 8 & 0xff),
                  static_cast<int>(psn & 0xff)})
        p.push_back(b);
    p.resize(total, 0x5a);
    p[2] = static_cast<int>(total >> 8);
    p[3] = static_cast<int>(total & 0xff);
    std::vector<std::byte> out;
    for (int b : p) out.push_back(static_cast<std::byte>(b));
    return out;
}

void roce_header() {
    seed("roce_header", "write-first-ce", roce_packet(107, 5, 0x06, 0x14, 0x123456, 1024));
    seed("roce_header", "ack-ect0", roce_packet(106, 5, 0x11, 0x12, 77, 4));
    auto headers_only = roce_packet(106, 5, 0x07, 0x14, 1, 1024);
    headers_only.resize(40);  // what the lesson's filter keeps of a packet
    seed("roce_header", "headers-only", headers_only);
    seed("roce_header", "ip-options", roce_packet(106, 6, 0x0a, 0x15, 9, 16));
    auto fragment = roce_packet(106, 5, 0x06, 0x14, 2, 64);
    fragment[6] = std::byte{0x20};  // more fragments: refused
    seed("roce_header", "edge-fragment", fragment);
}

void transfer_records() {
    transfer::RailEndpoint rail{.rail = 1, .mtu = 4096, .qpn = 0x12, .psn = 0xabcdef, .gid = {}};
    rail.gid[10] = rail.gid[11] = 0xff;
    rail.gid[12] = 203, rail.gid[13] = 0, rail.gid[14] = 113, rail.gid[15] = 2;
    seed("transfer_records", "rail-endpoint", transfer::encode(rail));
    const transfer::SegmentDescriptor segment{
        .id = 1, .address = 0x7f0000001000, .length = 50331648, .rkeys = {0x1234, 0x5678}};
    seed("transfer_records", "segment-two-rails", transfer::encode(segment));
    auto wraps = segment;
    wraps.address = ~std::uint64_t{0} - 10;
    seed("transfer_records", "edge-segment-wraps", transfer::encode(wraps));
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR (run from the repository root)\n", argv[0]);
        return 2;
    }
    root = argv[1];
    private_data();
    qp_endpoint();
    codec();
    ud_datagram();
    efa_hello();
    bench_json();
    text_parsers();
    roce_header();
    transfer_records();
    return 0;
}
