// Unit tests that pin, byte for byte, the records common/ and rdma-bench send a peer: the layouts
// their headers document. A peer built from another commit must read them the same way.
#include "efa_rdm_exchange.hpp"
#include "rdmalab/bench/control.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/ud_datagrams.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

using namespace rdmalab;
using namespace std::chrono_literals;

namespace {

constexpr std::uint16_t kRecordsPort = 18797;

// Lower-case hex of any range of bytes.
template <typename Bytes>
std::string hex(const Bytes& bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    for (auto b : bytes) {
        const auto value = static_cast<unsigned>(b);
        text += kDigits[value >> 4];
        text += kDigits[value & 15];
    }
    return text;
}

// What `send` writes to a TCP peer, as hex: the first `size` bytes.
template <typename Send>
std::string sent_over_tcp(std::uint16_t port, std::size_t size, Send send) {
    auto receiver = std::async(std::launch::async, [&] {
        auto peer = TcpExchange::accept_one(port, "127.0.0.1", 5000ms);
        std::vector<std::byte> bytes(size);
        peer.receive_exact(bytes);
        return hex(bytes);
    });
    std::this_thread::sleep_for(100ms);
    auto sender = TcpExchange::connect_to("127.0.0.1", port, 5000ms);
    send(sender);
    return receiver.get();
}

}  // namespace

TEST(WireRecords, RemoteBuffer) {
    const auto wire = encode_remote_buffer({.address = 0x00007f1234560000ull,
                                            .rkey = 0xabcd1234u,
                                            .length = 65536,
                                            .use = BufferUse::kReadSource});
    // "RDLB" | version 1 | use 2 | 2 reserved | address | rkey | length
    EXPECT_EQ(hex(wire),
              "52444c42"
              "01"
              "02"
              "0000"
              "00007f1234560000"
              "abcd1234"
              "00010000");
}

TEST(WireRecords, FabricHello) {
    FabricHello hello;
    hello.provider = "tcp";
    hello.address_format = 2;
    hello.address = {std::byte{0xc0}, std::byte{0xa8}};
    hello.receive_capacity = 0x1000;
    hello.write_target = {.address = 0x1122334455667788ull, .key = 7, .length = 0x100};
    hello.read_source = {.address = 0x10, .key = 0xfedcba9876543210ull, .length = 0x200};
    // "RDMF" | version 1 | address format | provider length | address length (4 each), seven
    // 8-byte values, provider name, address.
    EXPECT_EQ(hex(encode_fabric_hello(hello)),
              "52444d46"
              "00000001"
              "00000002"
              "00000003"
              "00000002"
              "0000000000001000"
              "1122334455667788"
              "0000000000000007"
              "0000000000000100"
              "0000000000000010"
              "fedcba9876543210"
              "0000000000000200"
              "746370"
              "c0a8");
}

TEST(WireRecords, FabricHelloDecodes) {
    FabricHello hello;
    hello.provider = "shm";
    hello.address_format = 13;
    hello.address = {std::byte{'f'}, std::byte{'i'}};
    hello.write_target = {.address = 0x1000, .key = 1, .length = 64};
    const auto wire = encode_fabric_hello(hello);
    EXPECT_EQ(fabric_hello_size(std::span(wire).first(kFabricHelloHeaderSize), "server"),
              wire.size());
    const FabricHello back = decode_fabric_hello(wire, "server");
    EXPECT_EQ(back.provider, "shm");
    EXPECT_EQ(back.address, hello.address);
    EXPECT_EQ(back.write_target.length, 64u);
    EXPECT_THROW(decode_fabric_hello(std::span(wire).first(wire.size() - 1), "server"), Error);
    auto unprintable = wire;
    unprintable[kFabricHelloHeaderSize] = std::byte{' '};
    EXPECT_THROW(decode_fabric_hello(unprintable, "server"), Error);
    auto too_long = wire;
    too_long[15] = std::byte{65};  // a provider name of 65 bytes
    EXPECT_THROW(fabric_hello_size(std::span(too_long).first(kFabricHelloHeaderSize), "server"),
                 Error);
}

TEST(WireRecords, DatagramHeader) {
    std::vector<std::byte> message(24);
    write_datagram(message, {.kind = DatagramKind::kData, .sequence = 0x0a0b0c, .count = 300});
    // "RDUD" | sequence | count | length, then the pattern.
    EXPECT_EQ(hex(std::span(message).first(16)),
              "52445544"
              "000a0b0c"
              "0000012c"
              "00000018");
    write_datagram(message, {.kind = DatagramKind::kEnd, .sequence = 300, .count = 300});
    EXPECT_EQ(hex(std::span(message).first(16)),
              "52445545"
              "0000012c"
              "0000012c"
              "00000018");
}

TEST(WireRecords, ControlWordOverTcp) {
    EXPECT_EQ(sent_over_tcp(kRecordsPort, 4, [](TcpExchange& tcp) { send_word(tcp, 0x01020304u); }),
              "01020304");
}

TEST(WireRecords, BenchControlMessageOverTcp) {
    // A 4-byte big-endian length, then the JSON text.
    const std::string text = R"({"a":1})";
    EXPECT_EQ(sent_over_tcp(kRecordsPort + 1, 4 + text.size(),
                            [](TcpExchange& tcp) {
                                bench::ControlChannel channel(std::move(tcp));
                                channel.send(bench::Record{{"a", 1}});
                            }),
              "00000007" + hex(text));
}
