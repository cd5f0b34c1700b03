// Lesson: unordered-delivery — reliable delivery that does not need packets in order. RC numbers
// every packet of a QP (the PSN) and its responder accepts only the next one: a packet that
// overtakes another on a second path is NAKed ("PSN sequence error") and the sender goes back
// and sends everything from the gap again (go-back-N). Spread one QP's packets over two paths of
// different delay (packet spraying) and RC spends the paths on resends.
// The layer here (unordered/, in the spirit of UEC 1.0's RUD and AWS SRD) cuts each transfer
// into datagrams of one MTU that carry their own place: the receiver copies each where it
// belongs on arrival, acknowledges selectively (what arrived below a point, and a bitmap beyond
// it), and the sender resends only what a gap or a timeout says is lost.
// Needs two hosts; in the lab, over two sprayed paths (lab/paths.sh, docs/many-paths.md):
//   ./rdmalab lab --hosts 3 --on 1 'lab/paths.sh setup --mode spray'
//       --on 2 'lab/paths.sh setup --mode spray && build/bin/unordered-delivery client
//       198.51.100.3'
//       --on 3 'lab/paths.sh setup --mode spray && build/bin/unordered-delivery server'
// (the client retries its TCP connect for a few seconds while the server starts).
// Run: unordered-delivery server|client ADDR [-n TRANSFERS] [-s SIZE] (both sides given the
// same two; defaults 16 transfers of 128 KiB). The last line each side prints is a record:
// `record KEY=VALUE ...`.
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/unordered/channel.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <thread>

using namespace rdmalab;
using rdmalab::unordered::Channel;
using rdmalab::unordered::Event;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kSeed = 0x52;
constexpr std::uint32_t kAllAcknowledged = 0x41434b44;  // "ACKD"
constexpr std::uint32_t kVerified = 0x4f4b2121;         // "OK!!"

struct UnorderedOptions : QpOptions {
    std::uint32_t transfers = 16;
};
constexpr std::size_t kMaxBytes = 256 * 1024 * 1024;

// #region settings
// The window: 128 datagrams unacknowledged at most. A gap is taken for loss once 48 datagrams
// sent after it are acknowledged: paths of 1 and 3 ms at a few thousand datagrams a second
// reorder about ten deep, so reordering alone never triggers a resend. The timeout catches a
// lost last datagram or a lost acknowledgement.
unordered::Settings layer_settings() {
    return {.window = 128,
            .reorder_tolerance = 48,
            .retransmit_timeout = std::chrono::milliseconds(60),
            .max_sends = 40};
}
// #endregion settings

// Both sides: the channel's UD QP, its record swapped over TCP, connected. The peer's record
// must name a UD QP (decode_qp_endpoint checks it, with its Q_Key).
void connect_channel(Channel& channel, TcpExchange& tcp, const char* who) {
    const QpEndpoint peer =
        exchange_endpoints(tcp, channel.port(), channel.endpoint(), PeerBuffer::kNone, who);
    channel.connect(peer);
    exchange_ready(tcp);
    fmt::print("{}: datagrams of {} bytes: a {}-byte header, then {} bytes of the transfer\n", who,
               channel.payload_bytes() + unordered::kDataHeaderBytes, unordered::kDataHeaderBytes,
               channel.payload_bytes());
}

int run_server(const UnorderedOptions& options) {
    Channel channel(options, layer_settings());
    Buffer target(std::size_t{options.transfers} * options.size);
    // #region expose
    // Datagrams land in the channel's receive slots; the layer copies each payload to target +
    // the place its header names, after checking it lies inside the target.
    channel.expose(target.bytes());
    // #endregion expose
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    connect_channel(channel, tcp, "server");

    // #region receiver
    // Poll until every transfer has landed, then on until the client has heard so: a lost
    // acknowledgement makes it send again, and a duplicate is answered with the whole account.
    std::set<std::uint32_t> landed;
    const auto deadline = Clock::now() + options.timeout();
    while (!tcp.readable()) {
        for (const Event& event : channel.poll())
            if (event.kind == Event::Kind::kLanded) landed.insert(event.transfer);
        if (Clock::now() > deadline)
            fail(fmt::format("{} of {} transfers landed within {} s", landed.size(),
                             options.transfers, options.timeout_s));
    }
    expect_word(tcp, kAllAcknowledged, "the client's word that every transfer was acknowledged");
    // #endregion receiver
    if (landed.size() != options.transfers)
        fail(fmt::format("the client heard every transfer acknowledged; {} of {} landed here",
                         landed.size(), options.transfers));
    if (auto bad = find_pattern_mismatch(target.bytes(), kSeed))
        fail(fmt::format("byte {} of {} is not what the client sent", *bad, target.size()));
    send_word(tcp, kVerified);
    const unordered::Stats& stats = channel.stats();
    fmt::print(
        "server: {} transfers landed, all {} bytes verified; {} datagrams arrived, {} of them "
        "after a later one of their transfer (out of order: placed all the same), {} "
        "duplicates; {} acknowledgements sent\n",
        landed.size(), target.size(), stats.received, stats.out_of_order, stats.duplicates,
        stats.acks_sent);
    fmt::print(
        "record side=server transfers={} bytes={} verified=1 received={} out_of_order={} "
        "duplicates={} acks_sent={}\n",
        landed.size(), target.size(), stats.received, stats.out_of_order, stats.duplicates,
        stats.acks_sent);
    return 0;
}

int run_client(const UnorderedOptions& options) {
    Channel channel(options, layer_settings());
    Buffer source(std::size_t{options.transfers} * options.size);
    fill_pattern(source.bytes(), kSeed);
    // #region register
    // Registered for local access only: the NIC reads it for the sends (the payload is the
    // second SGE of each send, after the header: no copy on this side).
    const unordered::Source registered = channel.register_source(source.bytes());
    // #endregion register
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    connect_channel(channel, tcp, "client");

    // #region submit
    // Every transfer submitted at once, each for its own place in the server's target; poll()
    // sends as the window allows, applies acknowledgements and resends what is lost.
    const auto start = Clock::now();
    for (std::uint32_t i = 0; i < options.transfers; ++i)
        channel.submit(registered, std::size_t{i} * options.size,
                       static_cast<std::uint32_t>(options.size), std::uint64_t{i} * options.size);
    std::uint32_t acknowledged = 0;
    const auto deadline = start + options.timeout();
    while (acknowledged < options.transfers) {
        for (const Event& event : channel.poll())
            if (event.kind == Event::Kind::kAcknowledged) ++acknowledged;
        if (Clock::now() > deadline)
            fail(fmt::format("{} of {} transfers acknowledged within {} s", acknowledged,
                             options.transfers, options.timeout_s));
    }
    // #endregion submit
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    send_word(tcp, kAllAcknowledged);
    expect_word(tcp, kVerified, "the server's check of every byte");
    const unordered::Stats& stats = channel.stats();
    const double mbit = source.size() * 8 / seconds / 1e6;
    fmt::print(
        "client: {} transfers of {} bytes acknowledged in {:.3f} s ({:.2f} Mbit/s of goodput); "
        "the server verified every byte. {} datagrams sent, {} sent again on a gap (later ones "
        "acknowledged; {} of them not needed: the first copy was only late), {} on a timeout; {} "
        "acknowledgements received\n",
        options.transfers, options.size, seconds, mbit, stats.sent, stats.resent_on_gap,
        stats.resent_not_needed, stats.resent_on_timeout, stats.acks_received);
    fmt::print(
        "record side=client transfers={} bytes={} seconds={:.6f} goodput_mbit={:.3f} sent={} "
        "resent_on_gap={} resent_not_needed={} resent_on_timeout={} acks_received={}\n",
        options.transfers, source.size(), seconds, mbit, stats.sent, stats.resent_on_gap,
        stats.resent_not_needed, stats.resent_on_timeout, stats.acks_received);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("unordered-delivery", [&] {
        CommandLine cli{"Reliable, unordered delivery over UD: datagrams that carry their place",
                        "unordered-delivery"};
        UnorderedOptions options;
        options.size = 128 * 1024;
        options.timeout_s = 60;
        add_qp_options(cli, options);
        cli.option("-n,--transfers", options.transfers, "transfers, all submitted at once")
            .range(1U, 4096U)
            .show_default();
        cli.parse_or_exit(argc, argv);
        if (std::size_t{options.transfers} * options.size > kMaxBytes) {
            fmt::print(stderr,
                       "unordered-delivery: -n {} x -s {} is more than {} bytes (run with --help "
                       "for usage)\n",
                       options.transfers, options.size, kMaxBytes);
            return 2;
        }
        return options.server ? run_server(options) : run_client(options);
    });
}
