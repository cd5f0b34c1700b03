// Lesson: srq — one Shared Receive Queue feeds the connections of several clients; completions
// say which connection by QP number, and the SRQ limit event asks for a refill before it runs dry.
// Run: srq server [--clients N] | srq client ADDR [-n MESSAGES]   (one client per terminal)
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/receive_slots.hpp"
#include "rdmalab/send_slots.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"
#include "srq_messages.hpp"

#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace rdmalab;
using namespace rdmalab::srq;  // the messages: srq_messages.hpp
using Clock = std::chrono::steady_clock;

namespace {

struct SrqOptions : ConnectionOptions {
    std::uint32_t clients = 3;     // server
    std::uint32_t messages = 20;   // client
    std::uint32_t srq_depth = 16;  // server: max_wr asked for
};

// How long the server waits for the limit event once it knows the SRQ is below the limit.
constexpr auto kLimitEventWait = std::chrono::seconds(2);

// Client c's message i: distinct for every client and message.
std::uint64_t message_seed(std::uint32_t client, std::uint32_t index) {
    return std::uint64_t{client} << 32 | index;
}

// The messages (the server's go and verified, a client's message header) are in
// srq_messages.hpp.

// ---------------------------------------------------------------- server

// What every connection shares. Created from the first client's device context (rdma_cm
// keeps it open), and owned by an object declared before the connections, so that it outlives
// every QP that uses it. Members are released in reverse order: MRs, CQ, SRQ, PD.
struct SharedQueues {
    SharedQueues(ibv_context* context, const SrqOptions& options)
        : pd(check_ptr(ibv_alloc_pd(context), "ibv_alloc_pd")),
          srq(create_srq(pd.get(), options.srq_depth)),
          depth(query_depth(srq.get())),
          // Every receive the SRQ holds, plus two sends per client, may complete at once.
          cq(check_ptr(ibv_create_cq(context, static_cast<int>(depth + 2 * options.clients + 8),
                                     nullptr, nullptr, 0),
                       "ibv_create_cq")),
          slot_size(options.size),
          slots(std::size_t{depth} * slot_size),
          // Only our NIC writes the receive buffers: LOCAL_WRITE; it only reads the outgoing ones.
          slots_mr(
              check_ptr(ibv_reg_mr(pd.get(), slots.data(), slots.size(), IBV_ACCESS_LOCAL_WRITE),
                        "ibv_reg_mr(receive buffers)")),
          outgoing(pd.get(), sizeof(Control), options.clients) {}

    // #region create-srq
    static ibv_srq* create_srq(ibv_pd* pd, std::uint32_t max_wr) {
        ibv_srq_init_attr init{};
        init.attr.max_wr = max_wr;  // receives it can hold, for all connections together
        init.attr.max_sge = 1;
        init.attr.srq_limit = 0;  // not armed yet
        return check_ptr(ibv_create_srq(pd, &init), "ibv_create_srq");
    }
    static std::uint32_t query_depth(ibv_srq* srq) {
        ibv_srq_attr attributes{};
        check_ibv(ibv_query_srq(srq, &attributes), "ibv_query_srq");
        return attributes.max_wr;  // providers may round up
    }
    // #endregion create-srq

    // #region post-srq-recv
    // One ibv_post_srq_recv for a list of receive buffers; wr_id is the buffer's number.
    void post_receives(const std::vector<std::uint64_t>& buffers) {
        if (buffers.empty()) return;
        std::vector<ibv_sge> sges(buffers.size());
        std::vector<ibv_recv_wr> wrs(buffers.size());
        for (std::size_t i = 0; i < buffers.size(); ++i) {
            sges[i] = {
                .addr = reinterpret_cast<std::uintptr_t>(slots.data() + buffers[i] * slot_size),
                .length = static_cast<std::uint32_t>(slot_size),
                .lkey = slots_mr->lkey};
            wrs[i] = {.wr_id = buffers[i],
                      .next = i + 1 < buffers.size() ? &wrs[i + 1] : nullptr,
                      .sg_list = &sges[i],
                      .num_sge = 1};
        }
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_srq_recv(srq.get(), wrs.data(), &bad), "ibv_post_srq_recv");
        posted += buffers.size();
    }
    // #endregion post-srq-recv

    // #region arm-limit
    // Asks for IBV_EVENT_SRQ_LIMIT_REACHED once fewer than `limit` receives remain posted.
    // The event fires once; after it the limit is disarmed until set again.
    void arm_limit() {
        ibv_srq_attr attributes{};
        attributes.srq_limit = limit;
        check_ibv(ibv_modify_srq(srq.get(), &attributes, IBV_SRQ_LIMIT),
                  "ibv_modify_srq(IBV_SRQ_LIMIT)");
    }
    // #endregion arm-limit

    ProtectionDomain pd;
    SharedReceiveQueue srq;
    std::uint32_t depth;
    CompletionQueue cq;
    std::size_t slot_size;
    Buffer slots;
    MemoryRegion slots_mr;
    SendSlots outgoing;  // one per client: our go, then our verdict (send_slots.hpp)
    std::uint32_t limit = std::max(1U, depth / 4);
    std::uint64_t posted = 0;  // receives in the SRQ, as far as the completions we polled tell
};

// Our SENDs' wr_ids: kSendWrId + the client's number. A failed completion carries no valid
// opcode; its wr_id still tells a SEND from a receive (an SRQ buffer's number, below depth).
constexpr std::uint64_t kSendWrId = std::uint64_t{1} << 32;

struct ClientState {
    Connection* connection;
    std::uint32_t number;  // 1, 2, …
    std::uint32_t received = 0;
    std::uint32_t expected = 0;  // the count the client's messages announce
    bool finished = false;
    bool lost = false;     // it disconnected before its last message: the others go on
    unsigned pending = 0;  // our SENDs to it not yet completed
};

// The server's state while it serves: the shared queues, each client's connection and progress,
// and what the SRQ holds. run_server below goes through its steps in order.
class Server {
  public:
    explicit Server(const SrqOptions& options) : options_(options), listener_(options) {
        connections_.reserve(options.clients);  // clients_ point into it: never reallocated
    }

    // Step 1: accept every client, attaching each QP to the one SRQ. The shared queues are
    // created from the first client's device, and the SRQ filled and armed before any accept.
    void accept_clients() {
        for (std::uint32_t number = 1; number <= options_.clients; ++number) {
            Connection connection = listener_.next_client();
            if (!shared_) {
                shared_.emplace(connection.context(), options_);
                std::vector<std::uint64_t> all(shared_->depth);
                for (std::uint32_t i = 0; i < shared_->depth; ++i) all[i] = i;
                shared_->post_receives(all);
                shared_->arm_limit();
                fmt::print(
                    "server: one PD, one CQ and one SRQ for all clients: asked for {} receives, "
                    "got {}; limit event armed at {}\n",
                    options_.srq_depth, shared_->depth, shared_->limit);
            } else if (connection.context() != shared_->pd->context) {
                fail("a client arrived on another RDMA device: one SRQ serves one device");
            }
            // #region attach-qp
            // No receive queue of its own: rdma_create_qp attaches the QP to the SRQ.
            connection.create_queues({.send = 2,
                                      .recv = 0,
                                      .completions = 0,
                                      .shared_pd = shared_->pd.get(),
                                      .shared_cq = shared_->cq.get(),
                                      .srq = shared_->srq.get()});
            // #endregion attach-qp
            connection.accept();
            connections_.push_back(std::move(connection));
            by_qp_num_[connections_.back().qp()->qp_num] = clients_.size();
            clients_.push_back({.connection = &connections_.back(), .number = number});
            fmt::print("server: client {} connected: QP {:#x}, attached to the SRQ\n", number,
                       connections_.back().qp()->qp_num);
        }
    }

    // Step 2: everyone is here: tell each client to start (and how large a message may be).
    void send_go() {
        for (auto& client : clients_)
            send(client, encode_go({client.number, options_.clients,
                                    static_cast<std::uint32_t>(shared_->slot_size)}));
    }

    // Step 3: poll the shared CQ until every client is served; between polls, look for clients
    // that went away and for the SRQ's limit event, and refill the SRQ when it asks.
    void serve() {
        auto last_progress = Clock::now(), last_look = Clock::now();
        while (finished_ < clients_.size() || pending_sends_ > 0) {
            const int found = poll_completions();
            const auto now = Clock::now();
            if (found > 0) last_progress = now;
            if (now - last_look > std::chrono::milliseconds(50)) {  // has a client gone?
                last_look = now;
                look_for_lost_clients();
            }
            if (now - last_progress > options_.timeout())
                fail(fmt::format("no completion within {:.1f} s ({} of {} clients finished)",
                                 options_.timeout_s, finished_, clients_.size()));
            if (take_async_event(found > 0 ? 0 : 1)) continue;
            watch_for_missing_limit_event(now);
            if (!limit_armed_ && !consumed_.empty()) refill();
        }
    }

    // Step 4: every client hung up on (or lost), then report.
    int report() {
        for (auto& connection : connections_) connection.wait_for_disconnect();
        for (const auto& client : clients_)
            fmt::print("server: client {} (QP {:#x}): {} messages, every one verified{}\n",
                       client.number, client.connection->qp()->qp_num, client.received,
                       client.lost ? " (then it was lost)" : "");
        ibv_context* context = shared_->pd->context;
        if (event_missing_)
            fmt::print(
                "server: {} did not deliver IBV_EVENT_SRQ_LIMIT_REACHED: refilled without it\n",
                ibv_get_device_name(context->device));
        fmt::print(
            "server: verified {} messages from {} clients through one SRQ of {} receives; {} "
            "refills on IBV_EVENT_SRQ_LIMIT_REACHED\n",
            total_, clients_.size(), shared_->depth, limit_events_);
        if (lost_ > 0)
            fail(
                fmt::format("{} of {} clients were lost before their last message; the other {} "
                            "were served to the end",
                            lost_, clients_.size(), clients_.size() - lost_));
        return 0;
    }

  private:
    void send(ClientState& client, const Control& message) {
        // wr_id kSendWrId + the client's number: apart from the SRQ's buffer numbers.
        shared_->outgoing.send(client.connection->qp(), client.number - 1, message,
                               kSendWrId + client.number);
        ++pending_sends_;
        ++client.pending;
    }

    ClientState* client_of(std::uint32_t qp_num) {
        auto found = by_qp_num_.find(qp_num);
        return found == by_qp_num_.end() ? nullptr : &clients_[found->second];
    }

    // A client that disconnects before its last message (it died, or gave up) is lost: it is
    // reported, its SENDs no longer awaited, and the others are served to the end.
    void lose(ClientState& client) {
        client.lost = client.finished = true;
        ++finished_;
        ++lost_;
        pending_sends_ -= client.pending;
        client.pending = 0;
        fmt::print(
            "server: client {} (QP {:#x}) disconnected after {} of {} messages: lost; serving the "
            "other clients\n",
            client.number, client.connection->qp()->qp_num, client.received,
            client.expected ? std::to_string(client.expected) : std::string("?"));
    }
    void look_for_lost_clients() {
        for (auto& client : clients_) {
            if (client.lost || (client.finished && client.pending == 0) ||
                !client.connection->peer_disconnected())
                continue;
            while (poll_completions() > 0) {  // what it sent before it went counts
            }
            if (!client.finished) lose(client);
        }
    }

    int poll_completions() {
        std::array<ibv_wc, 16> wcs{};
        int found = ibv_poll_cq(shared_->cq.get(), static_cast<int>(wcs.size()), wcs.data());
        if (found < 0) fail("ibv_poll_cq failed");
        for (int i = 0; i < found; ++i) handle(wcs[static_cast<std::size_t>(i)]);
        return found;
    }

    void handle(const ibv_wc& wc) {
        ClientState* sender = client_of(wc.qp_num);
        if (wc.status != IBV_WC_SUCCESS && sender && !sender->finished &&
            sender->connection->peer_disconnected())
            lose(*sender);
        if (wc.status != IBV_WC_SUCCESS && sender && sender->lost) {
            // A lost client's work requests, flushed. An SRQ receive taken by its QP goes back.
            if (wc.wr_id < shared_->depth) {
                --shared_->posted;
                consumed_.push_back(wc.wr_id);
            }
            return;
        }
        if (wc.status != IBV_WC_SUCCESS) fail(failed_completion(wc));
        if (wc.opcode == IBV_WC_SEND) {
            if (sender && !sender->lost) {
                --pending_sends_;
                --sender->pending;
                // The side that sends last disconnects first: a client that hung up on its verdict
                // could beat the verdict's ACK, and rdma_cm would flush our SEND.
                if (sender->finished && sender->pending == 0) sender->connection->disconnect();
            }
            return;
        }
        // #region srq-by-qp-num
        // A receive from the SRQ: wc.qp_num says which connection the message came in on.
        auto found = by_qp_num_.find(wc.qp_num);
        if (wc.opcode != IBV_WC_RECV || found == by_qp_num_.end() || wc.wr_id >= shared_->depth)
            fail(fmt::format("unexpected completion: opcode {}, QP {:#x}, wr_id {}",
                             static_cast<int>(wc.opcode), wc.qp_num, wc.wr_id));
        --shared_->posted;
        consumed_.push_back(wc.wr_id);
        ClientState& client = clients_[found->second];
        // #endregion srq-by-qp-num
        std::span<const std::byte> message{shared_->slots.data() + wc.wr_id * shared_->slot_size,
                                           wc.byte_len};
        if (client.finished)
            fail(fmt::format("client {}: a message after its last one", client.number));
        const auto [index, count] = read_message_header(message);
        if (client.received == 0) client.expected = count;
        // Per connection, RC delivers in order: message i comes i-th.
        if (index != client.received || count != client.expected)
            fail(fmt::format("client {}: expected message {} of {}, got {} of {}", client.number,
                             client.received, client.expected, index, count));
        if (auto mismatch = find_pattern_mismatch(message.subspan(kMessageHeader),
                                                  message_seed(client.number, index)))
            fail(fmt::format("client {}: message {} differs at byte {}", client.number, index,
                             kMessageHeader + *mismatch));
        ++client.received;
        ++total_;
        if (client.received == client.expected) {
            client.finished = true;
            ++finished_;
            send(client, encode_verified({client.number, client.received}));
        }
    }

    std::size_t refill() {
        const std::size_t count = consumed_.size();
        shared_->post_receives(consumed_);
        consumed_.clear();
        shared_->arm_limit();  // the event fired once; ask for the next one
        below_limit_since_ = kNever;
        return count;
    }

    // Waits up to wait_ms for an async event; true if one was taken.
    bool take_async_event(int wait_ms) {
        ibv_context* context = shared_->pd->context;
        // #region limit-event
        // Async events (device-wide) arrive on the context's async_fd: wait on it briefly when
        // there is nothing else to do.
        pollfd ready{.fd = context->async_fd, .events = POLLIN, .revents = 0};
        int rc = poll(&ready, 1, wait_ms);
        check_errno(rc >= 0, "poll on the async event fd");
        if (rc == 0) return false;
        ibv_async_event event{};
        check_errno(ibv_get_async_event(context, &event) == 0, "ibv_get_async_event");
        const ibv_event_type type = event.event_type;
        const bool ours =
            type == IBV_EVENT_SRQ_LIMIT_REACHED && event.element.srq == shared_->srq.get();
        ibv_ack_async_event(&event);  // every event taken must be acked (destroy waits for it)
        if (ours) {
            while (poll_completions() > 0) {  // account for every receive consumed so far
            }
            ++limit_events_;
            const auto left = shared_->posted;
            const auto count = refill();
            fmt::print(
                "server: IBV_EVENT_SRQ_LIMIT_REACHED: fewer than {} receives were left ({} now{}); "
                "refilled {} with one ibv_post_srq_recv and armed the limit again\n",
                shared_->limit, left,
                left == 0 ? ": it ran dry, and senders were told RNR, receiver not ready, and retry"
                          : "",
                count);
        } else {
            fmt::print("server: async event: {}\n", ibv_event_type_str(type));
        }
        return true;
        // #endregion limit-event
    }

    // We know the SRQ is below its limit: the event must come. If it does not, say so, and
    // refill anyway (serve() does, as buffers come back) so the clients are not starved.
    void watch_for_missing_limit_event(Clock::time_point now) {
        if (!limit_armed_ || shared_->posted >= shared_->limit) return;
        if (below_limit_since_ == kNever) {
            below_limit_since_ = now;
        } else if (now - below_limit_since_ > kLimitEventWait) {
            event_missing_ = true;
            limit_armed_ = false;  // stop waiting for it
            fmt::print(
                "server: {} did not deliver IBV_EVENT_SRQ_LIMIT_REACHED: {} receives left, limit "
                "{}, waited {} s\n",
                ibv_get_device_name(shared_->pd->context->device), shared_->posted, shared_->limit,
                std::chrono::duration_cast<std::chrono::seconds>(kLimitEventWait).count());
        }
    }

    static constexpr auto kNever = Clock::time_point::max();
    const SrqOptions& options_;
    std::optional<SharedQueues> shared_;  // before the connections: outlives their QPs
    Listener listener_;
    std::vector<Connection> connections_;
    std::vector<ClientState> clients_;
    std::map<std::uint32_t, std::size_t> by_qp_num_;  // how a completion names its connection
    std::vector<std::uint64_t> consumed_;             // receive buffers whose message was handled
    unsigned pending_sends_ = 0, finished_ = 0, lost_ = 0, limit_events_ = 0;
    std::uint64_t total_ = 0;
    bool limit_armed_ = true, event_missing_ = false;
    Clock::time_point below_limit_since_ = kNever;  // when we first saw fewer than the limit
};

int run_server(const SrqOptions& options) {
    Server server(options);
    server.accept_clients();
    server.send_go();
    server.serve();
    return server.report();
}

// ---------------------------------------------------------------- client

int run_client(const SrqOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues(
        {.send = options.messages, .recv = 2, .completions = options.messages + 4});
    connection.require_size_fits(options.size);

    // Our NIC reads the messages (no access flags) and writes the server's two control messages.
    SendSlots messages(connection.pd(), options.size, options.messages);
    ReceiveSlots control(connection.pd(), connection.qp(), sizeof(Control), 2);  // go, verified
    connection.connect();
    fmt::print("client: connected over {}; waiting for the other clients\n",
               connection.path_description());

    // "go": our number (which seeds our messages), the number of clients, the largest message.
    ibv_wc go_wc = connection.wait_for_completion("the server's go (are all clients connected?)");
    if (go_wc.opcode != IBV_WC_RECV || go_wc.wr_id != 0)
        fail("expected the server's 12-byte go message");
    const auto [number, clients, largest] = read_go(control.message(go_wc));
    if (options.size > largest)
        fail(fmt::format(
            "the server's receive buffers hold {} bytes; cannot send {} (use -s {} or less)",
            largest, options.size, largest));

    // Message i: index and count, then the pattern for (our number, i). All posted at once.
    for (std::uint32_t i = 0; i < options.messages; ++i) {
        std::span<std::byte> message = messages.slot(i);
        write_message_header(message, {i, options.messages});
        fill_pattern(message.subspan(kMessageHeader), message_seed(number, i));
        messages.send(connection.qp(), i, message.size(), i);
    }
    std::uint32_t sent = 0;
    std::optional<ibv_wc> verdict;
    while (sent < options.messages || !verdict) {
        ibv_wc wc = connection.wait_for_completion("our SENDs and the server's verdict");
        if (wc.opcode == IBV_WC_SEND)
            ++sent;
        else if (wc.opcode == IBV_WC_RECV && wc.wr_id == 1 && wc.byte_len == sizeof(Control) &&
                 !verdict)
            verdict = wc;
        else
            fail(fmt::format("unexpected completion (opcode {})", static_cast<int>(wc.opcode)));
    }
    const auto [answered, verified] = read_verified(control.message(*verdict));  // our number?
    connection.wait_for_disconnect();  // the server hangs up once our verdict has completed
    if (answered != number || verified != options.messages)
        fail(fmt::format("the server verified {} of our {} messages", verified, options.messages));
    fmt::print(
        "client: client {} of {}: sent {} messages; the server verified all {}, taken from its "
        "shared receive queue\n",
        number, clients, options.messages, verified);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("srq", [&] {
        CommandLine cli{"Shared Receive Queue: one pool of receives for many connections", "srq"};
        SrqOptions options;
        options.size = 256;
        cli.add_connection_options(options);
        cli.existing("--size").size_at_least(
            kMessageHeader,
            fmt::format("every message starts with an {}-byte header", kMessageHeader));
        cli.option("-n,--iters", options.messages, "messages per client (client)")
            .range(1U, kMaxMessages)
            .show_default();
        cli.option("--clients", options.clients, "clients to serve (server)")
            .range(1U, kMaxClients)
            .show_default();
        cli.option("--srq-depth", options.srq_depth, "receives the SRQ holds (server; max_wr)")
            .range(2U, 1U << 16)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
