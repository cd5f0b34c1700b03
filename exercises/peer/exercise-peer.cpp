// The reference peer of the exercises: the server side each exercise's program connects to.
// It advertises what the exercise needs, does its half, verifies what the reader's program did
// and ends with one verdict line: "peer: verified ..." (exit 0) or "peer: FAILED: ..." (exit 1).
//   exercise-peer EXERCISE [--port P] [--size BYTES] [--timeout S]
// EXERCISE: write | read | receives | write-imm | atomic | by-hand | ud | inbox | fence (each
// exercise's rules.sh names its own).
#include "by-hand.hpp"
#include "exercise.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <array>
#include <cstdint>
#include <vector>

using namespace rdmalab;

namespace {

constexpr std::uint32_t kMessages = 4;       // the receives exercise: SENDs the peer makes
constexpr std::uint32_t kAdds = 10;          // the atomic exercise: fetch-and-adds expected
constexpr std::uint32_t kInboxMessages = 8;  // the inbox exercise: SENDs the peer receives
constexpr std::uint32_t kInboxBytes = 32;    // each of them
constexpr std::uint32_t kMessageBytes = 64;  // each of them

struct PeerOptions {
    std::string exercise;
    ConnectionOptions connection;
};

// Where `length` bytes at `address`, registered as `mr`, are: the accept's private data.
std::array<std::byte, exercise::kRemoteBufferBytes> advertise(const void* address,
                                                              std::size_t length,
                                                              const ibv_mr& mr) {
    std::array<std::byte, exercise::kRemoteBufferBytes> out{};
    exercise::encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(address),
                                    .rkey = mr.rkey,
                                    .length = static_cast<std::uint32_t>(length)},
                                   reinterpret_cast<std::uint8_t*>(out.data()));
    return out;
}

// Sends our 40-byte record over TCP and returns the reader's (its buffer field unused).
exercise::Endpoint swap_records(TcpExchange& tcp, const exercise::Endpoint& ours) {
    std::array<std::byte, exercise::kEndpointBytes> record{};
    exercise::encode_endpoint(ours, reinterpret_cast<std::uint8_t*>(record.data()));
    tcp.send_all(record);
    tcp.receive_exact(record);
    return exercise::decode_endpoint(reinterpret_cast<const std::uint8_t*>(record.data()), false);
}

// The first byte of `bytes` that is not the pattern, if any.
std::optional<std::size_t> first_wrong_byte(const std::vector<std::uint8_t>& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] != exercise::pattern_byte(i)) return i;
    return std::nullopt;
}

int verdict_on(const std::vector<std::uint8_t>& target, const char* how) {
    if (auto wrong = first_wrong_byte(target)) {
        fmt::print("peer: FAILED: byte {} of {} is {:#04x}, the pattern says {:#04x}\n", *wrong,
                   target.size(), target[*wrong], exercise::pattern_byte(*wrong));
        return 1;
    }
    fmt::print("peer: verified {} bytes {}\n", target.size(), how);
    return 0;
}

// write, write-imm: a zeroed buffer the reader may write (REMOTE_WRITE needs LOCAL_WRITE).
int serve_write(const PeerOptions& options, Listener& listener, bool with_immediate) {
    auto connection = listener.next_client();
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    std::vector<std::uint8_t> target(options.connection.size, 0);
    MemoryRegion target_mr{ibv_reg_mr(connection.pd(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    // Either the reader's 4-byte "done" SEND lands here, or its WRITE WITH IMMEDIATE consumes it.
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 1);
    connection.accept(advertise(target.data(), target.size(), *target_mr));
    fmt::print("peer: connected; advertised {} bytes, rkey {:#x}\n", target.size(),
               target_mr->rkey);

    const ibv_wc wc = connection.wait_for_completion("the reader's notification");
    if (with_immediate) {
        if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM)
            return fmt::print(
                       "peer: FAILED: the notification was a {} completion, not RDMA "
                       "WRITE WITH IMMEDIATE's\n",
                       wc.opcode == IBV_WC_RECV ? "plain receive (a SEND)" : "non-receive"),
                   1;
        const std::uint32_t immediate = ntohl(wc.imm_data);
        if (immediate != target.size())
            return fmt::print(
                       "peer: FAILED: the immediate says {} (network order), the buffer "
                       "holds {} bytes (host-order {:#x} read as big-endian?)\n",
                       immediate, target.size(), wc.imm_data),
                   1;
        fmt::print("peer: RDMA WRITE WITH IMMEDIATE arrived, immediate {}\n", immediate);
    } else {
        const std::uint32_t written = done.received_value(wc, "the done message");
        fmt::print("peer: the done message says {} bytes\n", written);
    }
    const int rc = verdict_on(
        target, with_immediate ? "placed by RDMA WRITE WITH IMMEDIATE" : "placed by RDMA WRITE");
    connection.wait_for_disconnect();
    return rc;
}

// read: a buffer holding the pattern, readable by the reader (REMOTE_READ only); the reader's
// done message carries the checksum of what it read.
int serve_read(const PeerOptions& options, Listener& listener) {
    auto connection = listener.next_client();
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    std::vector<std::uint8_t> source(options.connection.size);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = exercise::pattern_byte(i);
    MemoryRegion source_mr{
        ibv_reg_mr(connection.pd(), source.data(), source.size(), IBV_ACCESS_REMOTE_READ)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 1);
    connection.accept(advertise(source.data(), source.size(), *source_mr));
    fmt::print("peer: connected; advertised {} bytes to read, rkey {:#x}\n", source.size(),
               source_mr->rkey);
    const std::uint32_t said = done.received_value(
        connection.wait_for_completion("the reader's done message"), "the done message");
    const std::uint32_t expected = exercise::checksum(source.data(), source.size());
    int rc = 0;
    if (said != expected) {
        fmt::print("peer: FAILED: the reader's checksum is {:#010x}, the buffer's is {:#010x}\n",
                   said, expected);
        rc = 1;
    } else {
        fmt::print("peer: verified: the reader read all {} bytes (checksum {:#010x})\n",
                   source.size(), expected);
    }
    connection.wait_for_disconnect();
    return rc;
}

// receives: kMessages SENDs as soon as the connection is up; the reader must have posted its
// receives before connecting. Its done message says how many it verified.
int serve_receives(Listener& listener) {
    auto connection = listener.next_client();
    connection.create_queues({.send = kMessages + 1, .recv = 1, .completions = kMessages + 2});
    std::vector<std::uint8_t> messages(std::size_t{kMessages} * kMessageBytes);
    for (std::size_t i = 0; i < messages.size(); ++i) messages[i] = exercise::pattern_byte(i);
    MemoryRegion messages_mr{ibv_reg_mr(connection.pd(), messages.data(), messages.size(), 0)};
    check_ptr(messages_mr.get(), "ibv_reg_mr(messages)");
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 100);
    connection.accept();
    fmt::print("peer: connected; sending {} messages of {} bytes at once\n", kMessages,
               kMessageBytes);
    for (std::uint32_t m = 0; m < kMessages; ++m) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(messages.data()) + m * kMessageBytes,
                    .length = kMessageBytes,
                    .lkey = messages_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = m;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(connection.qp(), &wr, &bad), "ibv_post_send(message)");
    }
    // Every SEND must complete: one whose receiver never posted a receive ends in an RNR error.
    std::uint32_t sent = 0;
    std::optional<std::uint32_t> said;
    while (sent < kMessages || !said) {
        const ibv_wc wc = connection.wait_for_completion("the messages and the done message");
        if (wc.wr_id == 100)
            said = done.received_value(wc, "the done message");
        else
            ++sent;
    }
    int rc = 0;
    if (*said != kMessages) {
        fmt::print("peer: FAILED: the reader says it verified {} of the {} messages\n", *said,
                   kMessages);
        rc = 1;
    } else {
        fmt::print("peer: verified: all {} messages were received and checked\n", kMessages);
    }
    connection.wait_for_disconnect();
    return rc;
}

// inbox: kInboxMessages receives of kInboxBytes, posted before accepting; message m must be the
// pattern at offset m * kInboxBytes.
int serve_inbox(Listener& listener) {
    auto connection = listener.next_client();
    connection.create_queues(
        {.send = 1, .recv = kInboxMessages, .completions = kInboxMessages + 1});
    std::vector<std::uint8_t> inbox(std::size_t{kInboxMessages} * kInboxBytes, 0);
    MemoryRegion inbox_mr{
        ibv_reg_mr(connection.pd(), inbox.data(), inbox.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(inbox_mr.get(), "ibv_reg_mr(inbox)");
    for (std::uint32_t m = 0; m < kInboxMessages; ++m) {
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(inbox.data()) + m * kInboxBytes, kInboxBytes,
                    inbox_mr->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = m;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(connection.qp(), &wr, &bad), "ibv_post_recv");
    }
    connection.accept();
    fmt::print("peer: connected; {} receives of {} bytes posted\n", kInboxMessages, kInboxBytes);
    for (std::uint32_t m = 0; m < kInboxMessages; ++m) {
        const ibv_wc wc = connection.wait_for_completion("the reader's messages");
        if (wc.opcode != IBV_WC_RECV || wc.byte_len != kInboxBytes)
            return fmt::print("peer: FAILED: message {} arrived as {} bytes, not {}\n", m,
                              wc.byte_len, kInboxBytes),
                   1;
    }
    int rc = 0;
    if (auto wrong = first_wrong_byte(inbox)) {
        fmt::print(
            "peer: FAILED: byte {} of message {} is not the pattern (was the buffer "
            "refilled before the NIC read it?)\n",
            *wrong % kInboxBytes, *wrong / kInboxBytes);
        rc = 1;
    } else {
        fmt::print("peer: verified {} messages of {} bytes, each as it was when posted\n",
                   kInboxMessages, kInboxBytes);
    }
    connection.wait_for_disconnect();
    return rc;
}

// fence: an 8-byte word the reader may read (REMOTE_READ), and a receive for 8 bytes: the
// reader READs the word and SENDs back what it read, which must be the word.
int serve_fence(Listener& listener) {
    constexpr std::uint64_t kWord = 0x5eed'f00d'cafe'0042;
    auto connection = listener.next_client();
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    alignas(8) static std::uint64_t word = kWord;
    alignas(8) static std::uint64_t echoed = 0;
    MemoryRegion word_mr{ibv_reg_mr(connection.pd(), &word, sizeof word, IBV_ACCESS_REMOTE_READ)};
    check_ptr(word_mr.get(), "ibv_reg_mr(word)");
    MemoryRegion echoed_mr{
        ibv_reg_mr(connection.pd(), &echoed, sizeof echoed, IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(echoed_mr.get(), "ibv_reg_mr(echoed)");
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(&echoed), sizeof echoed, echoed_mr->lkey};
    ibv_recv_wr receive{};
    receive.sg_list = &sge;
    receive.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(connection.qp(), &receive, &bad), "ibv_post_recv");
    connection.accept(advertise(&word, sizeof word, *word_mr));
    fmt::print("peer: connected; advertised an 8-byte word to read, rkey {:#x}\n", word_mr->rkey);
    const ibv_wc wc = connection.wait_for_completion("the reader's echo");
    int rc = 0;
    if (wc.byte_len != sizeof echoed || echoed != kWord) {
        fmt::print("peer: FAILED: the reader sent back {:#018x} ({} bytes), the word is {:#018x}\n",
                   echoed, wc.byte_len, kWord);
        rc = 1;
    } else {
        fmt::print("peer: verified: the reader sent back the word it read, {:#018x}\n", echoed);
    }
    connection.wait_for_disconnect();
    return rc;
}

// atomic: one 8-byte counter, zero, that the reader may only apply atomics to (REMOTE_ATOMIC,
// which requires LOCAL_WRITE). The reader's done message says how many old values it checked.
int serve_atomic(Listener& listener) {
    auto connection = listener.next_client();
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    alignas(8) static std::uint64_t counter = 0;  // atomics need an 8-byte aligned target
    MemoryRegion counter_mr{ibv_reg_mr(connection.pd(), &counter, sizeof counter,
                                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC)};
    check_ptr(counter_mr.get(), "ibv_reg_mr(counter)");
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 1);
    connection.accept(advertise(&counter, sizeof counter, *counter_mr));
    fmt::print("peer: connected; advertised an 8-byte counter, rkey {:#x}\n", counter_mr->rkey);
    const std::uint32_t said = done.received_value(
        connection.wait_for_completion("the reader's done message"), "the done message");
    int rc = 0;
    if (counter != kAdds || said != kAdds) {
        fmt::print(
            "peer: FAILED: the counter is {} and the reader checked {} old values; both "
            "should be {}\n",
            counter, said, kAdds);
        rc = 1;
    } else {
        fmt::print(
            "peer: verified: the counter is {} after {} fetch-and-adds, each old value "
            "checked by the reader\n",
            counter, kAdds);
    }
    connection.wait_for_disconnect();
    return rc;
}

// by-hand: no rdma_cm. The peer listens on TCP, swaps 40-byte records (exercises/support/
// by-hand.hpp) with the reader, takes its own QP to RTS, says 'R' (ready), and then serves as in
// `write`: a zeroed buffer the reader may write, verified after its done message.
int serve_by_hand(const PeerOptions& options) {
    fmt::print("peer: by-hand exercise, listening (TCP) on port {}\n", options.connection.port);
    std::fflush(stdout);
    auto tcp =
        TcpExchange::accept_one(options.connection.port, "", options.connection.accept_timeout());
    QpOptions qp_options;
    qp_options.size = options.connection.size;
    auto r = create_qp_resources(qp_options, IBV_QPT_RC, 2, 2, "peer");
    std::vector<std::uint8_t> target(options.connection.size, 0);
    MemoryRegion target_mr{ibv_reg_mr(r.pd.get(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    ControlWord done(r.pd.get(), ControlWord::Direction::kReceive);
    apply_transition(r.qp.get(), init_transition(r.local, IBV_ACCESS_REMOTE_WRITE), "peer");
    done.post_receive(r.qp.get(), 1);

    exercise::Endpoint ours;
    ours.qpn = r.qp->qp_num;
    ours.psn = random_psn();
    ours.gid = r.local.gid;
    ours.buffer = {.address = reinterpret_cast<std::uintptr_t>(target.data()),
                   .rkey = target_mr->rkey,
                   .length = static_cast<std::uint32_t>(target.size())};
    const exercise::Endpoint theirs = swap_records(tcp, ours);
    QpEndpoint remote;
    remote.qpn = theirs.qpn;
    remote.psn = theirs.psn;
    remote.gid = theirs.gid;
    remote.active_mtu = r.local.active_mtu;
    const Reliability reliability;
    apply_transition(r.qp.get(), rtr_transition(IBV_QPT_RC, r.local, remote, reliability), "peer");
    apply_transition(r.qp.get(), rts_transition(IBV_QPT_RC, ours.psn, reliability), "peer");
    const std::array<std::byte, 1> ready{std::byte{'R'}};
    tcp.send_all(ready);
    fmt::print("peer: QP {:#x} in RTS towards QP {:#x}; advertised {} bytes, rkey {:#x}\n",
               ours.qpn, theirs.qpn, target.size(), target_mr->rkey);

    const ibv_wc wc = wait_for_any_completion(r.cq.get(), options.connection.timeout(),
                                              "the reader's done message");
    if (wc.status != IBV_WC_SUCCESS)
        return fmt::print("peer: FAILED: the done message's receive completed with {}\n",
                          ibv_wc_status_str(wc.status)),
               1;
    const std::uint32_t written = done.received_value(wc, "the done message");
    fmt::print("peer: the done message says {} bytes\n", written);
    return verdict_on(target, "placed by RDMA WRITE over a QP connected by hand");
}

// ud: no rdma_cm, no connection. The peer's UD QP (Q_Key exercise::kQkey) waits for the
// reader's 64-byte datagram, checks it behind its 40-byte GRH, answers with one of its own, and
// then reads the reader's verdict on that answer over TCP.
int serve_ud(const PeerOptions& options) {
    constexpr std::size_t kGrh = 40, kPayload = 64;
    fmt::print("peer: ud exercise, listening (TCP) on port {}\n", options.connection.port);
    std::fflush(stdout);
    auto tcp =
        TcpExchange::accept_one(options.connection.port, "", options.connection.accept_timeout());
    auto r = create_qp_resources(QpOptions{}, IBV_QPT_UD, 2, 2, "peer");
    std::vector<std::uint8_t> inbox(kGrh + kPayload, 0), outgoing(kPayload);
    for (std::size_t i = 0; i < outgoing.size(); ++i) outgoing[i] = exercise::pattern_byte(i);
    MemoryRegion inbox_mr{
        ibv_reg_mr(r.pd.get(), inbox.data(), inbox.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(inbox_mr.get(), "ibv_reg_mr(inbox)");
    MemoryRegion outgoing_mr{ibv_reg_mr(r.pd.get(), outgoing.data(), outgoing.size(), 0)};
    check_ptr(outgoing_mr.get(), "ibv_reg_mr(outgoing)");
    apply_transition(r.qp.get(), ud_init_transition(r.local, exercise::kQkey), "peer");
    ibv_sge receive_sge{reinterpret_cast<std::uintptr_t>(inbox.data()),
                        static_cast<std::uint32_t>(inbox.size()), inbox_mr->lkey};
    ibv_recv_wr receive{};
    receive.sg_list = &receive_sge;
    receive.num_sge = 1;
    ibv_recv_wr* bad_receive = nullptr;
    check_ibv(ibv_post_recv(r.qp.get(), &receive, &bad_receive), "ibv_post_recv");
    exercise::Endpoint ours;
    ours.qpn = r.qp->qp_num;
    ours.psn = random_psn();
    ours.gid = r.local.gid;
    const Reliability reliability;
    apply_transition(r.qp.get(), rtr_transition(IBV_QPT_UD, r.local, QpEndpoint{}, reliability),
                     "peer");
    apply_transition(r.qp.get(), rts_transition(IBV_QPT_UD, ours.psn, reliability), "peer");
    const exercise::Endpoint theirs = swap_records(tcp, ours);
    const std::array<std::byte, 1> ready{std::byte{'R'}};
    tcp.send_all(ready);
    fmt::print("peer: UD QP {:#x} ready, Q_Key {:#x}; the reader's QP is {:#x}\n", ours.qpn,
               exercise::kQkey, theirs.qpn);

    const ibv_wc in =
        wait_for_any_completion(r.cq.get(), options.connection.timeout(), "the reader's datagram");
    if (in.status != IBV_WC_SUCCESS || in.opcode != IBV_WC_RECV || in.byte_len != kGrh + kPayload)
        return fmt::print(
                   "peer: FAILED: the reader's datagram arrived as {} bytes, status {} "
                   "(expected the 40-byte GRH and 64 bytes)\n",
                   in.byte_len, ibv_wc_status_str(in.status)),
               1;
    for (std::size_t i = 0; i < kPayload; ++i)
        if (inbox[kGrh + i] != exercise::pattern_byte(i))
            return fmt::print("peer: FAILED: byte {} of the reader's datagram is not the pattern\n",
                              i),
                   1;
    fmt::print("peer: the reader's datagram arrived whole (64 bytes behind the GRH)\n");

    QpEndpoint reader;
    reader.gid = theirs.gid;
    ibv_ah_attr ah_attr = address_vector(r.local, reader);
    AddressHandle ah{check_ptr(ibv_create_ah(r.pd.get(), &ah_attr), "ibv_create_ah")};
    ibv_sge send_sge{reinterpret_cast<std::uintptr_t>(outgoing.data()),
                     static_cast<std::uint32_t>(outgoing.size()), outgoing_mr->lkey};
    ibv_send_wr send{};
    send.sg_list = &send_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    send.wr.ud.ah = ah.get();
    send.wr.ud.remote_qpn = theirs.qpn;
    send.wr.ud.remote_qkey = exercise::kQkey;
    ibv_send_wr* bad_send = nullptr;
    check_ibv(ibv_post_send(r.qp.get(), &send, &bad_send), "ibv_post_send(datagram)");
    const ibv_wc sent =
        wait_for_any_completion(r.cq.get(), options.connection.timeout(), "our datagram");
    if (sent.status != IBV_WC_SUCCESS) fail("our datagram failed to send");
    std::array<std::byte, 1> verdict{};
    tcp.receive_exact(verdict);
    if (verdict[0] != std::byte{'V'})
        return fmt::print(
                   "peer: FAILED: the reader did not find our 64 bytes behind the GRH of "
                   "its receive\n"),
               1;
    fmt::print("peer: verified: your datagram arrived whole, and you found ours behind its GRH\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("exercise-peer", [&] {
        CLI::App app{"The exercises' reference peer: serves one exercise's client and judges it"};
        PeerOptions options;
        options.connection.server = true;
        options.connection.accept_timeout_s = 30;
        app.add_option("exercise", options.exercise,
                       "write, read, receives, write-imm, atomic, by-hand, ud, inbox or fence")
            ->required()
            ->check(CLI::IsMember({"write", "read", "receives", "write-imm", "atomic", "by-hand",
                                   "ud", "inbox", "fence"}));
        app.add_option("-p,--port", options.connection.port, "port rdma_cm listens on")
            ->check(CLI::Range(1, 65535));
        app.add_option("-s,--size", options.connection.size, "buffer size in bytes")
            ->check(CLI::Range(1, 1 << 20));
        app.add_option("--timeout", options.connection.timeout_s, "seconds each wait may take")
            ->check(CLI::Range(0.1, 600.0));
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            std::exit(app.exit(e));
        }
        if (options.exercise == "by-hand") return serve_by_hand(options);
        if (options.exercise == "ud") return serve_ud(options);
        // Listener prints "server: listening on ..." once it listens: the judge waits for that
        // line.
        Listener listener(options.connection);
        if (options.exercise == "read") return serve_read(options, listener);
        if (options.exercise == "receives") return serve_receives(listener);
        if (options.exercise == "atomic") return serve_atomic(listener);
        if (options.exercise == "inbox") return serve_inbox(listener);
        if (options.exercise == "fence") return serve_fence(listener);
        return serve_write(options, listener, options.exercise == "write-imm");
    });
}
