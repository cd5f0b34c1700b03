// Unit tests for the out-of-band TCP exchange, over loopback only.
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/error.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <array>
#include <chrono>
#include <future>

using namespace rdmalab;
using namespace std::chrono_literals;

namespace {
constexpr std::uint16_t kPort = 18777;
}

TEST(TcpExchange, SwapsBytesBothWays) {
    auto server = std::async(std::launch::async, [] {
        auto peer = TcpExchange::accept_one(kPort, "127.0.0.1", 5000ms);
        std::array<std::byte, 3> in{};
        peer.receive_exact(in);
        std::array<std::byte, 3> out{in[2], in[1], in[0]};
        peer.send_all(out);
        return in;
    });
    std::this_thread::sleep_for(100ms);
    auto client = TcpExchange::connect_to("127.0.0.1", kPort, 5000ms);
    std::array<std::byte, 3> sent{std::byte{1}, std::byte{2}, std::byte{3}};
    client.send_all(sent);
    std::array<std::byte, 3> back{};
    client.receive_exact(back);
    EXPECT_EQ(server.get(), sent);
    EXPECT_EQ(back, (std::array<std::byte, 3>{std::byte{3}, std::byte{2}, std::byte{1}}));
    // Each end's addresses: ours is loopback on some port, the peer's is the server's port.
    const sockaddr_storage local = client.local_address();
    const sockaddr_storage peer = client.peer_address();
    ASSERT_EQ(local.ss_family, AF_INET);
    ASSERT_EQ(peer.ss_family, AF_INET);
    const auto& local_v4 = reinterpret_cast<const sockaddr_in&>(local);
    const auto& peer_v4 = reinterpret_cast<const sockaddr_in&>(peer);
    EXPECT_EQ(ntohl(local_v4.sin_addr.s_addr), INADDR_LOOPBACK);
    EXPECT_EQ(ntohs(peer_v4.sin_port), kPort);
    EXPECT_NE(local_v4.sin_port, peer_v4.sin_port);
}

TEST(TcpExchange, RefusedConnectionSaysSo) {
    try {
        TcpExchange::connect_to("127.0.0.1", kPort + 1, 2000ms);
        FAIL() << "connect succeeded with nobody listening";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("is the server running?"), std::string::npos)
            << e.what();
    }
}

// A client started a moment before its server (both sides of a job start together) connects
// once the server listens, within kStartupGrace.
TEST(TcpExchange, ClientStartedBeforeItsServerConnects) {
    const auto start = std::chrono::steady_clock::now();
    auto server = std::async(std::launch::async, [] {
        std::this_thread::sleep_for(700ms);
        auto peer = TcpExchange::accept_one(kPort + 3, "127.0.0.1", 5000ms);
        std::array<std::byte, 1> in{};
        peer.receive_exact(in);
        return in[0];
    });
    auto client = TcpExchange::connect_to("127.0.0.1", kPort + 3, 5000ms);
    std::array<std::byte, 1> out{std::byte{42}};
    client.send_all(out);
    EXPECT_EQ(server.get(), std::byte{42});
    EXPECT_GE(std::chrono::steady_clock::now() - start, 700ms);
}

// The grace is the caller's: a short one reports a refusal sooner than kStartupGrace (a ring's
// ranks pass their whole timeout instead, to wait for a neighbour that starts late).
TEST(TcpExchange, StartupGraceIsTheCallers) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(TcpExchange::connect_to("127.0.0.1", kPort + 1, 5000ms, 300ms), Error);
    EXPECT_LT(std::chrono::steady_clock::now() - start, TcpExchange::kStartupGrace);
}

TEST(TcpExchange, ShortReadFromAClosingPeerThrows) {
    auto server = std::async(std::launch::async, [] {
        auto peer = TcpExchange::accept_one(kPort + 2, "127.0.0.1", 5000ms);
        std::array<std::byte, 2> half{std::byte{9}, std::byte{9}};
        peer.send_all(half);
    });
    std::this_thread::sleep_for(100ms);
    auto client = TcpExchange::connect_to("127.0.0.1", kPort + 2, 5000ms);
    server.get();
    std::array<std::byte, 4> whole{};
    EXPECT_THROW(client.receive_exact(whole), Error);
}

TEST(TcpExchange, SilentPeerTimesOut) {
    auto server = std::async(std::launch::async, [] {
        auto peer = TcpExchange::accept_one(kPort + 4, "127.0.0.1", 5000ms);
        std::this_thread::sleep_for(1500ms);
    });
    std::this_thread::sleep_for(100ms);
    auto client = TcpExchange::connect_to("127.0.0.1", kPort + 4, 300ms);
    std::array<std::byte, 1> byte{};
    auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(client.receive_exact(byte), Error);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1200ms);
    server.get();
}

// peer_closed() never waits: false while the peer is there (even with its bytes unread), true
// once it has gone; the bytes it sent before going can still be read.
TEST(TcpExchange, PeerClosedSeesTheEndWithoutWaiting) {
    std::promise<void> may_close;
    auto server = std::async(std::launch::async, [closing = may_close.get_future()]() mutable {
        auto peer = TcpExchange::accept_one(kPort + 5, "127.0.0.1", 5000ms);
        std::array<std::byte, 1> word{std::byte{7}};
        peer.send_all(word);
        closing.wait_for(5s);
    });
    std::this_thread::sleep_for(100ms);
    auto client = TcpExchange::connect_to("127.0.0.1", kPort + 5, 5000ms);
    std::this_thread::sleep_for(200ms);  // the byte has arrived
    EXPECT_FALSE(client.peer_closed());
    may_close.set_value();
    server.get();
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (!client.peer_closed() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(client.peer_closed());
    std::array<std::byte, 1> word{};
    client.receive_exact(word);
    EXPECT_EQ(word[0], std::byte{7});
}

// readable() never waits: false until the peer's bytes arrive, true while they wait unread.
TEST(TcpExchange, ReadableOnceBytesWait) {
    std::promise<void> may_send;
    auto server = std::async(std::launch::async, [sending = may_send.get_future()]() mutable {
        auto peer = TcpExchange::accept_one(kPort + 6, "127.0.0.1", 5000ms);
        sending.wait_for(5s);
        std::array<std::byte, 1> word{std::byte{5}};
        peer.send_all(word);
        std::array<std::byte, 1> done{};
        peer.receive_exact(done);  // stay connected until the client has read
    });
    std::this_thread::sleep_for(100ms);
    auto client = TcpExchange::connect_to("127.0.0.1", kPort + 6, 5000ms);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(client.readable());
    EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
    may_send.set_value();
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (!client.readable() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(client.readable());
    std::array<std::byte, 1> word{};
    client.receive_exact(word);
    EXPECT_EQ(word[0], std::byte{5});
    EXPECT_FALSE(client.readable());
    client.send_all(word);
    server.get();
}

// A listener kept open takes one client after another: the second client connects while the
// server still serves the first (it is queued in the backlog, never refused), and a wait with
// no client ends empty, not with an exception.
TEST(TcpListener, TakesClientsOneAfterAnotherWithoutRefusingAny) {
    TcpListener listener(kPort + 7, "127.0.0.1");
    // Both connect before anything is accepted: the backlog holds them. A refused connection
    // would be tried again only for the grace given, here none.
    auto first = TcpExchange::connect_to("127.0.0.1", kPort + 7, 2000ms, 0ms);
    auto second = TcpExchange::connect_to("127.0.0.1", kPort + 7, 2000ms, 0ms);
    for (TcpExchange* client : {&first, &second}) {
        TcpExchange served = listener.accept(2000ms);
        send_word(served, 7);
        EXPECT_EQ(receive_word(*client), 7u);
    }
    EXPECT_FALSE(listener.try_accept(50ms, 1000ms).has_value());
    try {
        listener.accept(50ms);
        FAIL() << "accept returned with no client";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("waiting for a client"), std::string::npos)
            << e.what();
    }
}
