// Lesson: proxy — how a GPU drives a NIC it cannot drive itself. A producer (the "device": a
// CUDA kernel with --mem cuda, or a host thread standing in for one) writes transfer requests
// into a ring in memory it shares with the CPU; a CPU proxy thread polls that ring, turns each
// request into an RDMA WRITE to the peer (ibv_post_send), polls the CQ, and writes the
// completion into a completion ring the producer waits on. This is the shape of NCCL's proxy
// thread and of NVSHMEM's proxy transport. The server checks every byte of every request; the
// client measures each request's latency and splits it into its legs. The producers (kernel and
// host thread) and the latency report are in rdmalab_gpu: proxy_producer.hpp, proxy_latency.hpp.
// Run: proxy server [-n N] [-s SIZE] | proxy client ADDR [-n N] [-s SIZE] [--in-flight K]
//      [--mem host|cuda[:N]] | proxy no-nic [--mem host|cuda[:N]] (the ring alone, no NIC)
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/gpu/proxy_latency.hpp"
#include "rdmalab/gpu/proxy_producer.hpp"
#include "rdmalab/gpu/proxy_ring.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;
using gpu::kProxySlots;

namespace {

constexpr std::uint64_t kSeed = 0x50;  // request k's bytes: the pattern for kSeed + k
constexpr std::size_t kMaxData = std::size_t{1} << 30;

// Both sides of the ring read and write its words with std::atomic_ref. That is only sound if
// the atomics are plain loads and stores of the words themselves (lock-free, no hidden lock
// word): the other side may be a GPU that knows nothing of a C++ library's locks.
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint64_t>::required_alignment <= alignof(std::uint64_t));

struct Options {
    unsigned requests = 1000;  // -n
    unsigned in_flight = 1;    // requests the producer may have outstanding
};

// The NIC side of the proxy: where a request's bytes are and where they go. Without it
// (proxy no-nic) the proxy completes each request the moment it sees it.
struct WritePath {
    ibv_qp* qp;
    ibv_cq* cq;
    gpu::RegisteredMemory* source;
    RemoteBuffer remote;
};

// The proxy thread's loop: take every request whose doorbell is rung, post its WRITE, poll the
// CQ, publish each completion. It never blocks: a real proxy serves many rings and many QPs
// from one thread, and a blocking call on one would stall all of them.
std::vector<gpu::ProxyTimes> run_proxy(gpu::ProxyRings& rings, const gpu::ProducerPlan& plan,
                                       std::size_t data_size, const WritePath* nic,
                                       std::chrono::milliseconds timeout) {
    // #region proxy-publish
    std::vector<gpu::ProxyTimes> times(plan.requests);
    std::uint64_t taken = 0;      // requests taken (the request ring's tail: ours alone)
    std::uint64_t completed = 0;  // completions published (the completion ring's head)
    auto publish = [&](std::int32_t status) {
        gpu::ProxyCompletion& completion = rings.completions[completed % kProxySlots];
        completion.sequence = completed + 1;
        completion.status = status;
        // Release: the completion is written before the index that announces it.
        std::atomic_ref(rings.completions_published)
            .store(completed + 1, std::memory_order_release);
        times[completed].published = gpu::host_clock_ns();
        ++completed;
    };
    // #endregion proxy-publish
    auto last_progress = Clock::now();
    unsigned idle_turns = 0;
    while (completed < plan.requests) {
        bool progress = false;
        // #region proxy-take
        // 1. The next request: its doorbell read with acquire, so its fields (and the bytes the
        // producer wrote before ringing) are complete when read below.
        gpu::ProxyRequest& slot = rings.requests[taken % kProxySlots];
        if (taken < plan.requests &&
            std::atomic_ref(slot.doorbell).load(std::memory_order_acquire) == 1) {
            times[taken].seen = gpu::host_clock_ns();
            // Copied out and checked before use: a producer's bug must not become a WRITE of
            // the wrong bytes to the wrong place.
            const std::uint64_t sequence = slot.sequence, offset = slot.offset;
            const std::uint32_t length = slot.length;
            if (sequence != taken + 1)
                fail(fmt::format("request slot {} holds sequence {}, expected {}",
                                 taken % kProxySlots, sequence, taken + 1));
            if (length == 0 || offset > data_size || length > data_size - offset)
                fail(fmt::format("request {} asks for {} bytes at offset {} of a {}-byte buffer",
                                 sequence, length, offset, data_size));
            // The slot is free again. Release: our reads of it happen before the producer's
            // next writes to it.
            std::atomic_ref(slot.doorbell).store(0, std::memory_order_release);
            // #endregion proxy-take
            if (nic) {
                // #region proxy-post
                // Staging: the NIC cannot reach the GPU memory, so copy the bytes to the bounce
                // buffer first (a direct path needs nothing: the doorbell ordered the bytes).
                if (nic->source->path() == gpu::Path::kStaging)
                    nic->source->before_nic_reads(length, offset);
                ibv_sge sge{.addr = nic->source->nic_address() + offset,
                            .length = length,
                            .lkey = nic->source->lkey()};
                ibv_send_wr write{};
                write.wr_id = sequence;  // the completion names the request it finishes
                write.sg_list = &sge;
                write.num_sge = 1;
                write.opcode = IBV_WR_RDMA_WRITE;
                write.send_flags = IBV_SEND_SIGNALED;
                write.wr.rdma.remote_addr = nic->remote.address + offset;
                write.wr.rdma.rkey = nic->remote.rkey;
                ibv_send_wr* bad = nullptr;
                check_ibv(ibv_post_send(nic->qp, &write, &bad), "ibv_post_send(RDMA_WRITE)");
                times[taken].posted = gpu::host_clock_ns();
                // #endregion proxy-post
            } else {
                publish(0);  // no NIC: complete at once
            }
            ++taken;
            progress = true;
        }
        // #region proxy-complete
        // 2. The CQ: RC completes one QP's WRITEs in order, so the next is request completed + 1.
        if (nic) {
            ibv_wc wc{};
            const int found = ibv_poll_cq(nic->cq, 1, &wc);
            if (found < 0) fail("ibv_poll_cq failed");
            if (found == 1) {
                times[completed].completed = gpu::host_clock_ns();
                if (wc.wr_id != completed + 1)
                    fail(fmt::format("a completion for request {} arrived; request {} was due",
                                     wc.wr_id, completed + 1));
                if (wc.status != IBV_WC_SUCCESS) {
                    publish(static_cast<std::int32_t>(wc.status));  // the producer learns too
                    fail(fmt::format("the RDMA WRITE of request {} failed: {}", wc.wr_id,
                                     ibv_wc_status_str(wc.status)));
                }
                publish(0);
                progress = true;
            }
        }
        // #endregion proxy-complete
        // 3. Every wait is bounded: a producer that stopped, or a NIC that went quiet, ends it.
        const std::uint32_t producer =
            std::atomic_ref(rings.producer_state).load(std::memory_order_acquire);
        if (producer != gpu::kProducerRunning && producer != gpu::kProducerDone)
            fail(fmt::format("the producer {}", gpu::producer_outcome(producer)));
        if (progress) {
            last_progress = Clock::now();
            idle_turns = 0;
        } else if (++idle_turns % 64 == 0) {
            // Idle for a while: let the threads this one shares CPUs with run (the lab has 2).
            std::this_thread::yield();
        }
        if (!progress && Clock::now() - last_progress > timeout)
            fail(
                fmt::format("no request and no completion for {:.1f} s ({} of {} requests taken, "
                            "{} completed)",
                            timeout.count() / 1000.0, taken, plan.requests, completed));
    }
    return times;
}

// Runs the proxy loop; if it fails, tells the producer (proxy_stopped) before the error goes on,
// so a producer waiting for room or a completion stops too.
std::vector<gpu::ProxyTimes> proxy_or_stop(gpu::ProxyRings& rings, const gpu::ProducerPlan& plan,
                                           std::size_t data_size, const WritePath* nic,
                                           std::chrono::milliseconds timeout) {
    try {
        return run_proxy(rings, plan, data_size, nic, timeout);
    } catch (...) {
        std::atomic_ref(rings.proxy_stopped).store(1, std::memory_order_release);
        throw;
    }
}

// Checks the producer ended well, after the proxy's loop.
void require_producer_done(gpu::ProxyRings& rings) {
    const std::uint32_t state =
        std::atomic_ref(rings.producer_state).load(std::memory_order_acquire);
    if (state != gpu::kProducerDone)
        fail(fmt::format("the producer {}", gpu::producer_outcome(state)));
}

gpu::ProducerPlan make_plan(const Options& options, std::uint32_t length,
                            const ConnectionOptions& connection) {
    return {.requests = options.requests,
            .length = length,
            .in_flight = options.in_flight,
            .seed = kSeed,
            .timeout_ns = static_cast<std::uint64_t>(connection.timeout().count()) * 1'000'000};
}

int run_server(const ConnectionOptions& options, const Options& proxy_options,
               const gpu::MemoryOptions& memory_options) {
    // Room for every request the client may send: -n requests of -s bytes, zero-filled so a
    // request that never arrived cannot pass the check.
    const std::size_t capacity = std::size_t{proxy_options.requests} * options.size;
    gpu::DeviceMemory target(memory_options.memory, capacity);
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = 2, .completions = 4});
    connection.require_size_fits(capacity);
    // Least privilege: the peer may write (REMOTE_WRITE, which requires LOCAL_WRITE), not read.
    gpu::RegisteredMemory target_mr =
        gpu::register_memory(connection.pd(), target,
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, memory_options.path);
    // After the last WRITE the client says how long each request was and how many it sent.
    ControlWord length_word(connection.pd(), ControlWord::Direction::kReceive);
    ControlWord count_word(connection.pd(), ControlWord::Direction::kReceive);
    length_word.post_receive(connection.qp(), 1);
    count_word.post_receive(connection.qp(), 2);
    connection.accept(encode_remote_buffer({.address = target_mr.nic_address(),
                                            .rkey = target_mr.rkey(),
                                            .length = static_cast<std::uint32_t>(capacity),
                                            .use = BufferUse::kWriteTarget}));
    fmt::print("server: connected over {}; {} bytes of {} for up to {} requests ({})\n",
               connection.path_description(), capacity, target.description(),
               proxy_options.requests, gpu::path_name(target_mr.path()));

    auto word = [&](ControlWord& control, std::uint64_t wr_id, std::string_view what) {
        const ibv_wc wc = connection.wait_for_completion(what);
        if (wc.wr_id != wr_id) fail(fmt::format("{}: the receives completed out of order", what));
        return control.received_value(wc, what);
    };
    const std::uint32_t length = word(length_word, 1, "the client's request length");
    const std::uint32_t count = word(count_word, 2, "the client's request count");
    // A peer's claims are checked before use.
    if (length == 0 || count == 0 || std::uint64_t{length} * count > capacity)
        fail(fmt::format("the client claims {} requests of {} bytes; this buffer holds {}", count,
                         length, capacity));
    const std::size_t written = std::size_t{length} * count;
    fmt::print("server: {}\n", target_mr.after_nic_writes(written));

    // #region server-verify
    // RC order: the two SENDs came after every WRITE, so every request's bytes have landed.
    // Each request has its own pattern: one that landed at another request's offset fails.
    for (std::uint32_t k = 1; k <= count; ++k) {
        const std::size_t offset = std::size_t{k - 1} * length;
        if (auto bad = target.find_mismatch(kSeed + k, length, offset, length)) {
            fmt::print("server: data check FAILED: byte {} of request {} ({} bytes at offset {})\n",
                       *bad, k, length, offset);
            return 1;
        }
    }
    if (written < capacity && target.find_mismatch(0, 0, written, capacity - written)) {
        fmt::print("server: data check FAILED: bytes beyond the {} written were changed\n",
                   written);
        return 1;
    }
    // #endregion server-verify
    fmt::print(
        "server: verified {} requests of {} bytes ({} bytes, a pattern per request, every byte) "
        "placed by the client's proxy with RDMA WRITE; checked by {} in {}\n",
        count, length, written, target.worker(), target.description());
    connection.wait_for_disconnect();
    return 0;
}

// What one run of the producer and the proxy gives back.
struct ProxyRun {
    std::vector<gpu::ProxyTimes> times;
    std::string producer_description;
    bool same_clock = true;  // false for a GPU producer: its clock is not this CPU's
};

// Starts the producer, makes this thread its proxy (posting WRITEs on nic, or, with no NIC,
// completing each request as it arrives), then waits for the producer to finish.
ProxyRun produce_and_proxy(std::string_view side, gpu::DeviceMemory& data,
                           gpu::ProxySharedMemory& shared, const gpu::ProducerPlan& plan,
                           const WritePath* nic, std::chrono::milliseconds timeout) {
    ProxyRun run;
    {
        gpu::ProxyProducer producer(data, shared, plan);
        run.producer_description = producer.description();
        run.same_clock = producer.same_clock_as_proxy();
        fmt::print("{}: producer: {}; rings: {}; {} requests of {} bytes, {} in flight\n", side,
                   run.producer_description, shared.description(), plan.requests, plan.length,
                   plan.in_flight);
        run.times = proxy_or_stop(shared.rings(), plan, data.size(), nic, timeout);
        producer.wait(timeout);
    }
    require_producer_done(shared.rings());
    return run;
}

int run_client(const ConnectionOptions& options, const Options& proxy_options,
               const gpu::MemoryOptions& memory_options) {
    gpu::require_proxy_producer(memory_options.memory);
    const std::uint32_t length = static_cast<std::uint32_t>(options.size);
    const std::size_t data_size = std::size_t{proxy_options.requests} * length;
    // #region client-memory
    // The requests' bytes live where --mem says (GPU memory with --mem cuda); the rings and the
    // producer's samples live in memory both the producer and this CPU reach.
    gpu::DeviceMemory data(memory_options.memory, data_size);
    gpu::ProxySharedMemory shared(memory_options.memory, proxy_options.requests);
    // #endregion client-memory

    auto connection = Connection::resolve(options);
    connection.create_queues(
        {.send = kProxySlots + 2, .recv = 1, .completions = 2 * kProxySlots + 4});
    connection.require_size_fits(data_size);
    // Only our own NIC reads the data: access flags 0 (local read) are enough.
    gpu::RegisteredMemory source_mr =
        gpu::register_memory(connection.pd(), data, 0, memory_options.path);
    for (const std::string& line : source_mr.report()) fmt::print("client: {}\n", line);
    ControlWord length_word(connection.pd(), ControlWord::Direction::kSend);
    ControlWord count_word(connection.pd(), ControlWord::Direction::kSend);

    auto private_data = connection.connect();
    const RemoteBuffer remote =
        decode_remote_buffer_or_throw(private_data, BufferUse::kWriteTarget, data_size);
    const std::string device = ibv_get_device_name(connection.context()->device);
    fmt::print("client: connected over {}; server buffer {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), remote.length, remote.address, remote.rkey);

    const gpu::ProducerPlan plan = make_plan(proxy_options, length, options);
    const WritePath nic{connection.qp(), connection.cq(), &source_mr, remote};
    const ProxyRun run = produce_and_proxy("client", data, shared, plan, &nic, options.timeout());
    const auto& [times, producer_description, same_clock] = run;

    length_word.post_send(connection.qp(), length, 1);
    connection.wait_for_completion("the request length");
    count_word.post_send(connection.qp(), plan.requests, 2);
    connection.wait_for_completion("the request count");
    connection.disconnect();

    gpu::report_proxy_latency("client", times, shared, same_clock, true);
    if (device.starts_with("rxe"))
        fmt::print(
            "client: {} is Soft-RoCE: these are Soft-RoCE numbers (the \"NIC\" is kernel code on "
            "these CPUs, here emulated); compare the legs with each other, not with hardware\n",
            device);
    fmt::print(
        "client: {} requests of {} bytes produced by {}, each turned into an RDMA WRITE by the "
        "proxy thread and its completion returned through the ring (path: {})\n",
        plan.requests, length, producer_description, gpu::path_name(source_mr.path()));
    return 0;
}

// proxy no-nic: the producer and the proxy without a NIC. The proxy completes each request the
// moment it sees it, so what is measured is the ring alone, both ways: how long a request takes
// to reach the proxy, and a completion to reach the producer. It runs on a GPU machine that has
// no RDMA device.
int run_no_nic(const ConnectionOptions& options, const Options& proxy_options,
               const gpu::MemoryOptions& memory_options) {
    gpu::require_proxy_producer(memory_options.memory);
    const std::uint32_t length = static_cast<std::uint32_t>(options.size);
    const std::size_t data_size = std::size_t{proxy_options.requests} * length;
    gpu::DeviceMemory data(memory_options.memory, data_size);
    gpu::ProxySharedMemory shared(memory_options.memory, proxy_options.requests);
    const gpu::ProducerPlan plan = make_plan(proxy_options, length, options);
    fmt::print(
        "no-nic: no NIC and no verbs: the proxy completes each request as soon as it sees it; "
        "what is measured is the ring alone, both ways (producer → proxy → producer)\n");
    const ProxyRun run =
        produce_and_proxy("no-nic", data, shared, plan, nullptr, options.timeout());
    const auto& [times, producer_description, same_clock] = run;
    // No NIC moved the bytes, but the producer wrote them before each doorbell: check them where
    // they are (a kernel for GPU memory).
    for (std::uint32_t k = 1; k <= plan.requests; ++k) {
        const std::size_t offset = std::size_t{k - 1} * length;
        if (auto bad = data.find_mismatch(kSeed + k, length, offset, length))
            fail(
                fmt::format("data check FAILED: byte {} of request {} is not what the producer "
                            "was to write",
                            *bad, k));
    }
    gpu::report_proxy_latency("no-nic", times, shared, same_clock, false);
    fmt::print(
        "no-nic: verified {} requests of {} bytes where the producer wrote them, in {}, checked by "
        "{}\n",
        plan.requests, length, data.description(), data.worker());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("proxy", [&] {
        CommandLine cli{
            "The proxy pattern: a producer's ring of requests, a CPU proxy thread posting RDMA "
            "WRITEs for it, a ring of completions back",
            "proxy"};
        ConnectionOptions options;
        Options proxy_options;
        gpu::MemoryOptions memory_options;
        cli.add_connection_options(options);
        cli.add_subcommand("no-nic",
                           "no peer and no verbs: the producer and the proxy with the ring alone "
                           "(for a GPU machine without an RDMA device)");
        cli.existing("--size").description("bytes per request (server: the most it accepts)");
        cli.option("-n,--iters", proxy_options.requests, "requests (server: the most it accepts)")
            .range(1u, 1'000'000u)
            .show_default();
        cli.option("--in-flight", proxy_options.in_flight,
                   "requests the producer may have outstanding (1 to the ring's 16 slots)")
            .range(1u, kProxySlots)
            .show_default();
        gpu::add_memory_options(cli, memory_options);
        cli.parse_or_exit(argc, argv);
        if (options.size > std::numeric_limits<std::uint32_t>::max() ||
            std::size_t{proxy_options.requests} * options.size > kMaxData) {
            std::fprintf(stderr,
                         "proxy: -n %u requests of -s %zu bytes is more than the %zu bytes this "
                         "lesson allows (run with --help for usage)\n",
                         proxy_options.requests, options.size, kMaxData);
            return 2;
        }
        if (cli.chose("no-nic")) return run_no_nic(options, proxy_options, memory_options);
        return options.server ? run_server(options, proxy_options, memory_options)
                              : run_client(options, proxy_options, memory_options);
    });
}
