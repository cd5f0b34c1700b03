// Lesson: memory-windows — a type 2 memory window grants a peer remote access to part of a
// registered region, with its own rkey and rights, revocable without deregistering anything.
// Run: memory-windows server [-s SIZE] | memory-windows client ADDR [-s SIZE]
//
// The MR grants no remote access at all; every remote access goes through a window bound over
// the middle half of the region. An error completion moves an RC QP to ERROR, so each
// deliberate failure comes last on its own connection:
//   1. range:  a READ/WRITE window; the client writes and reads back inside it (both sides
//              verify), then writes one byte just past it: refused (remote access error).
//   2. rights: a READ-only window; the client reads it (verified), then tries to write: refused.
//   3. revoke: the client reads (verified); the server invalidates the window (LOCAL_INV); the
//              client's next read with the old rkey is refused.
//   4. type 1: a READ-only type 1 window, bound with ibv_bind_mw; the client reads it (verified),
//              then tries to write: refused. (A device without type 1 windows is named.)
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/control_endpoint.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kClientSeed = 0x3a;   // what the client writes through window 1
constexpr std::uint64_t kServerSeed = 0x5b;   // what the server offers in windows 2 and 3
constexpr std::uint64_t kOutsideSeed = 0x7c;  // the rest of the region in connections 2 and 3
constexpr std::size_t kMinSize = 4;           // a middle half with bytes on either side

// Control words that keep the two sides in step (SENDs; the advertisement is a SEND too).
enum Word : std::uint32_t {
    kWritten = 1,
    kChecked = 2,
    kReadDone = 3,
    kRevoked = 4,
    kNoWindow = 5
};

// The control messages (SENDs that keep the two sides in step, the advertisement among them) go
// through a ControlEndpoint (control_endpoint.hpp): two receive slots, each holding the 24-byte
// advertisement or a 4-byte word.
ControlEndpoint control_endpoint(Connection connection) {
    return {
        std::move(connection), {.send = 4, .recv = 2, .completions = 8}, kRemoteBufferWireSize, 2};
}

void post_send(ControlEndpoint& endpoint, ibv_send_wr& wr, std::string_view call) {
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(endpoint.connection().qp(), &wr, &bad), call);
}

// ---- Server

// Type 2 windows are optional: ask the device before relying on them.
void require_type2_windows(ibv_context* context) {
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context, &device), "ibv_query_device");
    const char* name = ibv_get_device_name(context->device);
    if (device.max_mw <= 0 || !(device.device_cap_flags &
                                (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)))
        fail(
            fmt::format("{} has no type 2 memory windows (max_mw {}, no MEM_WINDOW_TYPE_2A/2B in "
                        "device_cap_flags): this lesson needs them",
                        name, device.max_mw));
}

// One connection's server side, declared in creation order (released in reverse: the window
// before the MR it covers, everything before the connection's QP, CQ and PD).
struct ServerSide {
    ControlEndpoint endpoint;
    Buffer region;
    MemoryRegion region_mr{};
    MemoryWindow window{};
    std::size_t offset = 0;  // the window: [offset, offset + length) of the region
    std::size_t length = 0;
    std::uint32_t rkey = 0;  // the key the bind gave it (a bind WR does not update window->rkey)
};

// Accepts `client` with a region (filled by `fill`) registered for windows over its middle half.
ServerSide accept_with_region(Connection client, const ConnectionOptions& options, bool fill) {
    // Returned by value: everything registered lives on the heap and stays where it is.
    ServerSide side{.endpoint = control_endpoint(std::move(client)),
                    .region = Buffer(options.size),
                    .offset = options.size / 4,
                    .length = options.size / 2};
    Connection& connection = side.endpoint.connection();
    connection.require_size_fits(options.size);
    if (fill) {  // data for the client to read in the window; other data (not zeros) around it
        fill_pattern(side.region.bytes(), kOutsideSeed);
        fill_pattern(side.region.bytes().subspan(side.offset, side.length), kServerSeed);
    }
    // #region mw-bind-only-mr
    // Least privilege: the MR itself grants NO remote access — only the right to bind windows
    // over it (MW_BIND) and local writes (required under any window that allows remote writes).
    side.region_mr.reset(ibv_reg_mr(connection.pd(), side.region.data(), side.region.size(),
                                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND));
    check_ptr(side.region_mr.get(), "ibv_reg_mr(region, MW_BIND)");
    // #endregion mw-bind-only-mr
    connection.accept();
    return side;
}

// The advertisement goes out with a SEND: a window exists only once the QP is connected, too
// late for the accept's private data.
void advertise(ServerSide& side, std::uint32_t rkey, BufferUse use) {
    const auto address = reinterpret_cast<std::uintptr_t>(side.region.data() + side.offset);
    side.endpoint.send(encode_remote_buffer({.address = address,
                                             .rkey = rkey,
                                             .length = static_cast<std::uint32_t>(side.length),
                                             .use = use}),
                       "the window advertisement");
}

// Accepts the next client and binds a type 2 window over the region's middle half with
// `access` rights.
ServerSide serve_window(Listener& listener, const ConnectionOptions& options, bool fill,
                        unsigned access, BufferUse use, int step) {
    Connection connection = listener.next_client();
    require_type2_windows(connection.context());
    ServerSide side = accept_with_region(std::move(connection), options, fill);

    // #region mw-bind
    // A type 2 window is allocated unbound; a BIND_MW work request on a connected QP gives it a
    // range, rights and a new rkey (the old one with its low 8 bits advanced: ibv_inc_rkey).
    // From then on it can be used only through this QP.
    side.window.reset(ibv_alloc_mw(side.endpoint.connection().pd(), IBV_MW_TYPE_2));
    check_ptr(side.window.get(), "ibv_alloc_mw(IBV_MW_TYPE_2)");
    side.rkey = ibv_inc_rkey(side.window->rkey);
    ibv_send_wr bind{};
    bind.opcode = IBV_WR_BIND_MW;
    bind.send_flags = IBV_SEND_SIGNALED;
    bind.bind_mw.mw = side.window.get();
    bind.bind_mw.rkey = side.rkey;
    bind.bind_mw.bind_info = {
        .mr = side.region_mr.get(),
        .addr = reinterpret_cast<std::uintptr_t>(side.region.data() + side.offset),
        .length = side.length,
        .mw_access_flags = access};
    post_send(side.endpoint, bind, "ibv_post_send(BIND_MW)");
    side.endpoint.expect_completion(IBV_WC_BIND_MW, "the window bind");
    // #endregion mw-bind

    advertise(side, side.rkey, use);
    fmt::print(
        "server: [{}] window rkey {:#x} ({}) covers bytes {}..{} of the {}-byte region; the MR's "
        "own rkey {:#x} grants nothing remote\n",
        step, side.rkey, access & IBV_ACCESS_REMOTE_WRITE ? "READ and WRITE" : "READ only",
        side.offset, side.offset + side.length, side.region.size(), side.region_mr->rkey);
    return side;
}

int run_server(const ConnectionOptions& options) {
    Listener listener(options);

    // ---- 1. Range: the window covers the middle half; the byte after it is not the client's.
    std::string range_not_enforced_by;  // the device, if the byte past the window changed
    {
        ServerSide side =
            serve_window(listener, options, false, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
                         BufferUse::kWriteTarget, 1);
        side.endpoint.expect_word(kWritten, "the client's 'written'");
        auto region = side.region.bytes();
        if (auto mismatch =
                find_pattern_mismatch(region.subspan(side.offset, side.length), kClientSeed))
            fail(fmt::format("window byte {} is not what the client wrote", *mismatch));
        if (!all_zero(region.first(side.offset)) ||
            !all_zero(region.subspan(side.offset + side.length)))
            fail("bytes outside the window changed");
        fmt::print(
            "server: [1] verified the {} bytes the client wrote through the window; the rest of "
            "the region is untouched\n",
            side.length);
        side.endpoint.send_word(kChecked);
        // The client now writes one byte just past the window, then disconnects.
        side.endpoint.connection().wait_for_disconnect();
        if (all_zero(region.subspan(side.offset + side.length))) {
            fmt::print(
                "server: [1] the byte past the window is still zero: the write there was "
                "refused\n");
        } else {
            range_not_enforced_by =
                ibv_get_device_name(side.endpoint.connection().context()->device);
            fmt::print(
                "server: [1] NOTE: the byte past the window CHANGED: {} checked that write "
                "against the MR's range, not the window's\n",
                range_not_enforced_by);
        }
    }

    // ---- 2. Rights: a READ-only window refuses a WRITE.
    {
        ServerSide side = serve_window(listener, options, true, IBV_ACCESS_REMOTE_READ,
                                       BufferUse::kReadSource, 2);
        // The client reads, tries to write, and leaves.
        side.endpoint.connection().wait_for_disconnect();
        if (find_pattern_mismatch(side.region.bytes().subspan(side.offset, side.length),
                                  kServerSeed))
            fail("the READ-only window was written to");
        fmt::print("server: [2] the READ-only window is unchanged\n");
    }

    // ---- 3. Revoke: invalidating the window closes it at once.
    {
        ServerSide side = serve_window(listener, options, true, IBV_ACCESS_REMOTE_READ,
                                       BufferUse::kReadSource, 3);
        side.endpoint.expect_word(kReadDone, "the client's 'read done'");
        // #region mw-invalidate
        // LOCAL_INV with the window's rkey: once it completes, that rkey opens nothing. (The client
        // could do the same with a SEND_WITH_INV carrying the rkey.)
        ibv_send_wr invalidate{};
        invalidate.opcode = IBV_WR_LOCAL_INV;
        invalidate.send_flags = IBV_SEND_SIGNALED;
        invalidate.invalidate_rkey = side.rkey;
        post_send(side.endpoint, invalidate, "ibv_post_send(LOCAL_INV)");
        side.endpoint.expect_completion(IBV_WC_LOCAL_INV, "the window invalidation");
        // #endregion mw-invalidate
        fmt::print("server: [3] invalidated window rkey {:#x}\n", side.rkey);
        side.endpoint.send_word(kRevoked);
        side.endpoint.connection().wait_for_disconnect();
    }
    // ---- 4. Type 1: bound by a verb, not a work request; READ-only, so a WRITE is refused.
    {
        ServerSide side = accept_with_region(listener.next_client(), options, true);
        Connection& connection = side.endpoint.connection();
        ibv_device_attr device{};
        check_ibv(ibv_query_device(connection.context(), &device), "ibv_query_device");
        const char* name = ibv_get_device_name(connection.context()->device);
        std::string refused;  // why there is no type 1 window, if there is none
        // #region mw-type1
        // A type 1 window is bound by a verb, ibv_bind_mw (libibverbs posts the bind on the QP
        // given), which sets its new rkey in mw->rkey. Once bound it is not tied to that QP: any
        // QP of the PD may use it. LOCAL_INV and SEND_WITH_INV do not apply: binding it again
        // with length 0 closes it.
        MemoryWindow window{ibv_alloc_mw(connection.pd(), IBV_MW_TYPE_1)};
        if (!window) {
            refused = fmt::format("ibv_alloc_mw(IBV_MW_TYPE_1) failed: {}", std::strerror(errno));
        } else {
            ibv_mw_bind bind{};
            bind.wr_id = 4;
            bind.send_flags = IBV_SEND_SIGNALED;
            bind.bind_info = {
                .mr = side.region_mr.get(),
                .addr = reinterpret_cast<std::uintptr_t>(side.region.data() + side.offset),
                .length = side.length,
                .mw_access_flags = IBV_ACCESS_REMOTE_READ};
            if (int rc = ibv_bind_mw(connection.qp(), window.get(), &bind); rc != 0)
                refused = fmt::format("ibv_bind_mw failed: {}", std::strerror(rc));
            else if (ibv_wc wc = wait_for_any_completion(
                         connection.cq(), connection.options().timeout(), "the type 1 bind");
                     wc.status != IBV_WC_SUCCESS)
                refused = fmt::format("the bind completed with {}", ibv_wc_status_str(wc.status));
        }
        // #endregion mw-type1
        if (!refused.empty()) {
            fmt::print(
                "server: [4] {} refuses type 1 windows: {} (device_cap_flags {} "
                "IBV_DEVICE_MEM_WINDOW)\n",
                name, refused, device.device_cap_flags & IBV_DEVICE_MEM_WINDOW ? "has" : "lacks");
            side.endpoint.send_word(kNoWindow);
        } else {
            advertise(side, window->rkey, BufferUse::kReadSource);
            fmt::print(
                "server: [4] type 1 window rkey {:#x} (READ only) bound with ibv_bind_mw over "
                "bytes {}..{}\n",
                window->rkey, side.offset, side.offset + side.length);
        }
        connection.wait_for_disconnect();
        if (find_pattern_mismatch(side.region.bytes().subspan(side.offset, side.length),
                                  kServerSeed))
            fail("the READ-only type 1 window was written to");
        if (refused.empty()) fmt::print("server: [4] the READ-only type 1 window is unchanged\n");
    }

    if (range_not_enforced_by.empty())
        fmt::print(
            "server: verified: each window opened only its part of the region, with only its "
            "rights, until it was invalidated\n");
    else
        fmt::print(
            "server: verified: each window opened the region only with its rights, until it was "
            "invalidated; its range was not enforced by {}\n",
            range_not_enforced_by);
    return 0;
}

// ---- Client

// The client's side of one connection: the endpoint, the window it was granted, and a local
// buffer of the window's size (the READ's target: LOCAL_WRITE; the WRITE's source).
struct ClientSide {
    ControlEndpoint endpoint;
    RemoteBuffer window;
    Buffer data;
    MemoryRegion data_mr{};
};

// The window the server advertised, with a local buffer of its size.
ClientSide take_window(ControlEndpoint endpoint, std::span<const std::byte> advertisement,
                       BufferUse use, const ConnectionOptions& options) {
    // The advertisement came from the network: the codec checks magic, version, use and length,
    // and the length, which sizes our buffer, must fit our own -s.
    RemoteBuffer window = decode_remote_buffer_or_throw(advertisement, use);
    if (window.length > options.size)
        fail(fmt::format("the server's window has {} bytes, more than this client's -s {}",
                         window.length, options.size));
    ClientSide side{std::move(endpoint), window, Buffer(window.length), {}};
    side.data_mr.reset(ibv_reg_mr(side.endpoint.connection().pd(), side.data.data(),
                                  side.data.size(), IBV_ACCESS_LOCAL_WRITE));
    check_ptr(side.data_mr.get(), "ibv_reg_mr(data)");
    return side;
}

ClientSide connect_for_window(const ConnectionOptions& options, BufferUse use, int step) {
    ControlEndpoint endpoint = control_endpoint(Connection::resolve(options));
    endpoint.connection().connect();
    auto advertisement = endpoint.receive("the window advertisement");
    ClientSide side = take_window(std::move(endpoint), advertisement, use, options);
    fmt::print("client: [{}] over {}: granted a {}-byte window at {:#x}, rkey {:#x}\n", step,
               side.endpoint.connection().path_description(), side.window.length,
               side.window.address, side.window.rkey);
    return side;
}

// One RDMA WRITE or READ of the first `length` bytes of data at remote_address (with the
// window's rkey); returns the completion's status, whatever it is.
ibv_wc_status access(ClientSide& side, ibv_wr_opcode opcode, std::uint64_t remote_address,
                     std::size_t length, std::string_view what) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(side.data.data()),
                .length = static_cast<std::uint32_t>(length),
                .lkey = side.data_mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_address;
    wr.wr.rdma.rkey = side.window.rkey;
    post_send(
        side.endpoint, wr,
        opcode == IBV_WR_RDMA_WRITE ? "ibv_post_send(RDMA_WRITE)" : "ibv_post_send(RDMA_READ)");
    return wait_for_any_completion(side.endpoint.connection().cq(),
                                   side.endpoint.connection().options().timeout(), what)
        .status;
}

void require_success(ibv_wc_status status, std::string_view what) {
    if (status != IBV_WC_SUCCESS)
        fail(fmt::format("{} failed: {}", what, ibv_wc_status_str(status)));
}

// A deliberate bad access must fail with a remote access error, and nothing else.
void require_refused(ibv_wc_status status, std::string_view what, int step) {
    if (status == IBV_WC_SUCCESS)
        fail(fmt::format("{} SUCCEEDED: the window did not protect the region", what));
    if (status != IBV_WC_REM_ACCESS_ERR)
        fail(fmt::format("{} failed with {}, expected a remote access error", what,
                         ibv_wc_status_str(status)));
    fmt::print("client: [{}] {} was refused: IBV_WC_REM_ACCESS_ERR ({}), as expected\n", step, what,
               ibv_wc_status_str(status));
}

void read_server_data(ClientSide& side, int step) {
    require_success(
        access(side, IBV_WR_RDMA_READ, side.window.address, side.window.length, "RDMA READ"),
        "RDMA READ of the window");
    if (auto mismatch = find_pattern_mismatch(side.data.bytes(), kServerSeed))
        fail(fmt::format("window byte {} is not the data the server put there", *mismatch));
    fmt::print("client: [{}] read the window's {} bytes, verified\n", step, side.window.length);
}

int run_client(const ConnectionOptions& options) {
    // ---- 1. Range: inside the window works; one byte past it must not.
    std::string range_not_enforced_by;  // the device, if a write past the window succeeded
    {
        ClientSide side = connect_for_window(options, BufferUse::kWriteTarget, 1);
        fill_pattern(side.data.bytes(), kClientSeed);
        require_success(
            access(side, IBV_WR_RDMA_WRITE, side.window.address, side.window.length, "RDMA WRITE"),
            "RDMA WRITE into the window");
        std::fill(side.data.bytes().begin(), side.data.bytes().end(), std::byte{0});
        require_success(
            access(side, IBV_WR_RDMA_READ, side.window.address, side.window.length, "RDMA READ"),
            "RDMA READ of the window");
        if (auto mismatch = find_pattern_mismatch(side.data.bytes(), kClientSeed))
            fail(fmt::format("read back: window byte {} differs from what was written", *mismatch));
        fmt::print("client: [1] wrote {} bytes through the window and read them back, verified\n",
                   side.window.length);
        side.endpoint.send_word(kWritten);
        side.endpoint.expect_word(kChecked, "the server's 'checked'");  // it has looked

        const std::string_view what = "an RDMA WRITE of one byte just past the window";
        const ibv_wc_status status =
            access(side, IBV_WR_RDMA_WRITE, side.window.address + side.window.length, 1, what);
        if (status == IBV_WC_SUCCESS) {
            // Soft-RoCE (rxe) checks a window access against the MR's range only: say so.
            range_not_enforced_by =
                ibv_get_device_name(side.endpoint.connection().context()->device);
            fmt::print(
                "client: [1] NOTE: {} SUCCEEDED: {} does not enforce a window's range (it checks "
                "the MR's); an InfiniBand/RoCE NIC refuses it with IBV_WC_REM_ACCESS_ERR\n",
                what, range_not_enforced_by);
        } else {
            require_refused(status, what, 1);
        }
        side.endpoint.connection().disconnect();
    }

    // ---- 2. Rights: a READ-only window refuses a WRITE.
    {
        ClientSide side = connect_for_window(options, BufferUse::kReadSource, 2);
        read_server_data(side, 2);
        require_refused(access(side, IBV_WR_RDMA_WRITE, side.window.address, 1, "RDMA WRITE"),
                        "an RDMA WRITE through the READ-only window", 2);
        side.endpoint.connection().disconnect();
    }

    // ---- 3. Revoke: the window works until the server invalidates it.
    {
        ClientSide side = connect_for_window(options, BufferUse::kReadSource, 3);
        read_server_data(side, 3);
        side.endpoint.send_word(kReadDone);
        side.endpoint.expect_word(kRevoked, "the server's 'revoked'");
        require_refused(
            access(side, IBV_WR_RDMA_READ, side.window.address, side.window.length, "RDMA READ"),
            "an RDMA READ with the invalidated rkey", 3);
        side.endpoint.connection().disconnect();
    }
    // ---- 4. Type 1: read through it, then a WRITE it does not allow (or the server says why
    // there is no window).
    {
        ControlEndpoint endpoint = control_endpoint(Connection::resolve(options));
        endpoint.connection().connect();
        auto bytes = endpoint.receive("the type 1 window advertisement");
        if (bytes.size() == 4 && load_be32(bytes) == kNoWindow) {
            fmt::print(
                "client: [4] the server's device has no type 1 windows (the server says why)\n");
            endpoint.connection().disconnect();
        } else {
            ClientSide side =
                take_window(std::move(endpoint), bytes, BufferUse::kReadSource, options);
            fmt::print("client: [4] granted a {}-byte type 1 window, rkey {:#x}\n",
                       side.window.length, side.window.rkey);
            read_server_data(side, 4);
            require_refused(access(side, IBV_WR_RDMA_WRITE, side.window.address, 1, "RDMA WRITE"),
                            "an RDMA WRITE through the READ-only type 1 window", 4);
            side.endpoint.connection().disconnect();
        }
    }

    if (range_not_enforced_by.empty())
        fmt::print(
            "client: verified: each window let us in only within its range, with only its rights, "
            "and only until it was invalidated\n");
    else
        fmt::print(
            "client: verified: each window let us in only with its rights and only until it was "
            "invalidated; its range was not enforced by {}\n",
            range_not_enforced_by);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("memory-windows", [&] {
        CommandLine cli{"Type 2 memory windows: remote access to part of a region, revocable",
                        "memory-windows"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.existing("--size")
            .description("region size; each window is its middle half (at least 4 bytes)")
            .size_at_least(kMinSize, fmt::format("the region needs at least {} bytes, so that its "
                                                 "middle half has bytes on either side",
                                                 kMinSize));
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
