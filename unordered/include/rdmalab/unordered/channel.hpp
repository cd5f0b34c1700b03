// The reliable unordered layer on a UD QP (protocol.hpp is its logic): one Channel per peer,
// shaped like a transfer engine's API — register the source, expose the target, submit a
// transfer, poll for what finished (the sender hears "acknowledged", the receiver "landed").
// Both sides post receives (data one way, acknowledgements the other) and poll; nothing runs
// unless poll() is called.
//
// What a NIC with RUD does and this layer cannot: place the payload straight into the target
// (the packet names its place, so the NIC could DMA it there). UD delivers into a posted receive
// slot; the layer copies each payload to its place. The sender sends from the caller's
// registered memory without a copy (a second SGE after the header).
#pragma once

#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_endpoint.hpp"
#include "rdmalab/unordered/protocol.hpp"
#include "rdmalab/verbs.hpp"

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace rdmalab::unordered {

// Memory the layer sends from: registered for local access only (a UD peer cannot name it).
struct Source {
    std::span<const std::byte> bytes;
    MemoryRegion mr;
};

struct Event {
    enum class Kind { kAcknowledged, kLanded } kind;
    std::uint32_t transfer = 0;
    std::uint64_t target_offset = 0;
    std::uint32_t length = 0;
};

struct Stats {
    std::uint64_t sent = 0;               // data datagrams, first sends
    std::uint64_t resent_on_gap = 0;      // sent again: later ones were acknowledged
    std::uint64_t resent_on_timeout = 0;  // sent again: no acknowledgement in time
    std::uint64_t resent_not_needed = 0;  // gap resends whose first copy had only been late
    std::uint64_t acks_sent = 0;
    std::uint64_t acks_received = 0;
    std::uint64_t received = 0;      // data datagrams that arrived, duplicates included
    std::uint64_t duplicates = 0;    // arrived before (a resend whose first copy was late)
    std::uint64_t out_of_order = 0;  // arrived after a later datagram of its transfer
};

class Channel {
  public:
    // Opens the device (options.device, or the first), chooses the port's RoCE v2 GID and
    // creates the PD, one CQ, the UD QP (RESET→INIT with kQkey) and its receive slots.
    Channel(const QpOptions& options, const Settings& settings);
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;
    ~Channel();

    static constexpr std::uint32_t kQkey = 0x52554400;

    // This side's record for the out-of-band exchange (QPN, GID, MTU, Q_Key).
    QpEndpoint endpoint() const;
    // RTR, RTS, and the address handle of the peer's port. Posts the receive slots first.
    void connect(const QpEndpoint& peer);
    const PortAddress& port() const { return local_; }
    std::uint32_t payload_bytes() const { return payload_; }  // path MTU - header

    Source register_source(std::span<const std::byte> bytes);
    // Queues `length` bytes of `source` from `offset` for the peer's target at target_offset;
    // returns the transfer's id. `source` must outlive the transfer.
    std::uint32_t submit(const Source& source, std::size_t offset, std::uint32_t length,
                         std::uint64_t target_offset);
    // Where the peer's transfers land; they must fit inside it (else the datagram is refused).
    void expose(std::span<std::byte> target) { target_ = target; }

    // Progress: completions (datagrams placed, acknowledgements applied), acknowledgements due,
    // sends and resends due. Returns what finished. Throws rdmalab::Error on a failed
    // completion, a datagram that fails its checks, or a datagram never acknowledged.
    std::vector<Event> poll();
    bool sending() const { return !window_.idle(); }
    const Stats& stats() const { return stats_; }

  private:
    void post_receive(std::uint32_t slot);
    void on_receive(const ibv_wc& wc);
    void place(const DataHeader& header, std::span<const std::byte> payload);
    void send_ack(const Ack& ack);
    void post_datagram(const Transmission& transmission);
    void post_send(std::uint32_t slot, std::span<ibv_sge> sges, const char* call);
    std::uint32_t take_send_slot();
    void flush_acks(bool all);

    Settings settings_;
    Context context_;
    PortAddress local_;
    ProtectionDomain pd_;
    CompletionQueue cq_;
    QueuePair qp_;
    AddressHandle peer_ah_;
    std::uint32_t peer_qpn_ = 0;
    std::uint32_t payload_ = 0;

    // Receive slots: the 40-byte GRH area, then one datagram of at most the path MTU.
    std::uint32_t receive_slots_;
    std::size_t receive_slot_bytes_ = 0;
    Buffer receives_;
    MemoryRegion receives_mr_;
    // Send slots: a header (data) or a whole acknowledgement each, freed by its completion.
    std::uint32_t send_slots_;
    Buffer sends_;
    MemoryRegion sends_mr_;
    std::vector<std::uint32_t> free_send_slots_;

    // Sender: the window, and each transfer's source.
    SendWindow window_;
    struct Outgoing {
        const Source* source;
        std::size_t offset;
        DataHeader header;
    };
    std::map<std::uint32_t, Outgoing> outgoing_;
    std::uint32_t next_transfer_ = 1;

    // Receiver: each transfer's account, what arrived since its last acknowledgement.
    std::span<std::byte> target_;
    struct Incoming {
        Reassembly reassembly;
        std::uint32_t unacknowledged = 0;  // arrivals since the last ACK
        std::uint32_t highest = 0;         // the highest sequence seen
        Clock::time_point first_unacknowledged{};
    };
    std::map<std::uint32_t, Incoming> incoming_;
    std::vector<Event> events_;
    Stats stats_;
};

}  // namespace rdmalab::unordered
