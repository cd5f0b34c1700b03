// The reliable unordered layer's protocol, without verbs (unit-tested on any host): what a
// datagram and an acknowledgement carry, the receiver's account of one transfer, and the
// sender's window. In the spirit of UEC 1.0's RUD (reliable, unordered delivery):
//   - a transfer (bytes for one place in the receiver's target) is cut into datagrams of at most
//     one path MTU; each carries the transfer's place and its own sequence number, so it is put
//     where it belongs on arrival, whatever came before it: no reordering buffer, no NAK;
//   - the receiver acknowledges selectively: everything below `cumulative`, and a bitmap of what
//     arrived beyond it;
//   - the sender resends a datagram on a gap (datagrams it sent later were acknowledged, more
//     than `reorder_tolerance` of them: reordering that deep is taken for loss) or on a timeout,
//     and only that datagram (no go-back-N); a window bounds what is in flight. The timeout is
//     TCP's (RFC 6298): smoothed from round trips of datagrams sent once, one resend when it
//     fires, doubled until something new is acknowledged. A gap resend acknowledged sooner than
//     half a round trip after it went out was not needed (its first copy had only been late,
//     Eifel's test): the tolerance doubles, up to the window.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace rdmalab::unordered {

using Clock = std::chrono::steady_clock;

// ---- On the wire (big-endian, through codec.hpp).

// A data datagram: 32 bytes of header, then the payload.
//   "RUDD" | transfer (4) | sequence (4) | total length of the transfer (4) |
//   target offset of the transfer (8) | payload bytes per datagram (4) | reserved, 0 (4)
// Datagram `sequence` holds the transfer's bytes [sequence × payload, + payload), the last one
// fewer: its place in the target is target offset + sequence × payload.
inline constexpr std::size_t kDataHeaderBytes = 32;
// The most datagrams one transfer may have: a receiver sizes its account from the header.
inline constexpr std::uint32_t kMaxDatagramsPerTransfer = 1U << 20;

struct DataHeader {
    std::uint32_t transfer = 0;
    std::uint32_t sequence = 0;
    std::uint32_t total = 0;  // bytes of the whole transfer
    std::uint64_t target_offset = 0;
    std::uint32_t payload = 0;  // bytes per datagram (the last may carry fewer)

    std::uint32_t count() const { return (total + payload - 1) / payload; }
    std::uint32_t length() const;  // this datagram's payload bytes
    std::uint64_t place() const { return target_offset + std::uint64_t{sequence} * payload; }
    bool same_transfer(const DataHeader& other) const;  // total, offset and payload agree
};

// An acknowledgement: 48 bytes.
//   "RUDA" | transfer (4) | count (4) | cumulative (4) | bitmap (32)
// Every datagram below `cumulative` arrived; bit i of the bitmap (byte i / 8, bit i % 8 from
// the least significant) says whether datagram cumulative + 1 + i did. Datagram `cumulative`
// itself has not (else cumulative would be larger), unless cumulative == count: all arrived.
inline constexpr std::size_t kAckBytes = 48;
inline constexpr std::uint32_t kAckBitmapBits = 256;

struct Ack {
    std::uint32_t transfer = 0;
    std::uint32_t count = 0;
    std::uint32_t cumulative = 0;
    std::array<std::uint8_t, kAckBitmapBits / 8> bitmap{};

    bool covers(std::uint32_t sequence) const;  // this ACK says `sequence` arrived
};

void write_data_header(std::span<std::byte, kDataHeaderBytes> out, const DataHeader& header);
void write_ack(std::span<std::byte, kAckBytes> out, const Ack& ack);

// What arrived: a datagram's header (payload_bytes: what follows it in the datagram) or an
// acknowledgement; else why it was refused (magic, a count of 0 or over the limit, a sequence
// past the count, a payload of another length than its place says, a bitmap bit past the count).
using Arrival = std::variant<DataHeader, Ack>;
std::variant<Arrival, std::string> read_datagram(std::span<const std::byte> bytes);

// Why a datagram may not be placed in a target of `target_bytes` — its transfer does not fit
// inside, or it disagrees with the transfer's first datagram (`first`, when one arrived) — or
// nullopt when it may. From the network: checked before a byte is copied.
std::optional<std::string> refuse_placement(const DataHeader& header, std::size_t target_bytes,
                                            const DataHeader* first);

// ---- The receiver's account of one transfer.
class Reassembly {
  public:
    explicit Reassembly(const DataHeader& first);
    const DataHeader& transfer() const { return header_; }
    // Records datagram `sequence` (< count); false when it had arrived before (a duplicate: a
    // resend whose first copy was only late, or whose ACK was lost).
    bool record(std::uint32_t sequence);
    bool complete() const { return cumulative_ == header_.count(); }
    std::uint32_t received() const { return received_; }
    Ack ack() const;

  private:
    DataHeader header_;
    std::vector<bool> seen_;
    std::uint32_t cumulative_ = 0;  // datagrams 0..cumulative-1 all arrived
    std::uint32_t received_ = 0;
};

// ---- The sender's window.
struct Settings {
    std::uint32_t window = 128;            // datagrams sent and not yet acknowledged, at most
    std::uint32_t reorder_tolerance = 48;  // later datagrams acknowledged before a gap is loss
    // The first timeout and the least it may become; it doubles on each timeout, up to 2 s.
    std::chrono::milliseconds retransmit_timeout{60};
    std::uint32_t max_sends = 16;  // sends of one datagram before the transfer fails
    // The receiver: an acknowledgement after this many arrivals of one transfer, at once when
    // it completes or a duplicate arrives, and at the latest ack_delay after an arrival.
    std::uint32_t ack_every = 8;
    std::chrono::microseconds ack_delay{1000};
    std::uint32_t receive_slots = 512;  // datagrams the receiver can hold before it polls
    std::uint32_t send_slots = 256;     // sends posted and not yet completed
};

enum class SendReason { kNew, kGap, kTimeout };

struct Transmission {
    std::uint32_t transfer = 0;
    std::uint32_t sequence = 0;
    SendReason reason = SendReason::kNew;
};

class SendWindow {
  public:
    explicit SendWindow(const Settings& settings)
        : settings_(settings),
          tolerance_(settings.reorder_tolerance),
          rto_(settings.retransmit_timeout) {}
    // Queues a transfer of `count` datagrams (transfer ids unique, count ≥ 1).
    void add(std::uint32_t transfer, std::uint32_t count);
    // The datagram to send now, marked sent at `now`: a resend that is due (the oldest first),
    // else the next new one while fewer than `window` are unacknowledged; nullopt when neither.
    // Throws rdmalab::Error when a datagram has been sent max_sends times without an ACK.
    std::optional<Transmission> next(Clock::time_point now);
    // Applies an acknowledgement that arrived at `now`; returns the transfers it completed
    // (every datagram acknowledged). An ACK for a transfer it does not know (one completed
    // before) is ignored; one that contradicts what was sent throws rdmalab::Error.
    std::vector<std::uint32_t> acknowledge(const Ack& ack, Clock::time_point now);
    std::uint32_t in_flight() const { return in_flight_; }
    bool idle() const { return transfers_.empty(); }  // every transfer acknowledged
    // The earliest moment a timeout resend falls due (nullopt: nothing in flight).
    std::optional<Clock::time_point> next_timeout() const;
    Clock::duration retransmit_timeout() const { return rto_; }
    std::uint32_t reorder_tolerance() const { return tolerance_; }
    std::uint32_t spurious_resends() const { return spurious_; }  // gap resends not needed

  private:
    struct Datagram {
        bool acked = false;
        std::uint32_t sends = 0;
        std::uint64_t order = 0;  // when it was last sent, in sends counted from 1
        Clock::time_point sent_at{};
        SendReason last_reason = SendReason::kNew;
    };
    struct Transfer {
        std::vector<Datagram> datagrams;
        std::uint32_t unacked;
        std::uint32_t next_new = 0;
        std::uint32_t acked_below = 0;  // datagrams 0..acked_below-1 all acknowledged
    };
    struct InFlight {
        std::uint32_t transfer;
        std::uint32_t sequence;
        std::uint64_t order;  // matches the datagram's while this is its latest send
    };
    Transmission send(std::uint32_t transfer, std::uint32_t sequence, SendReason reason,
                      Clock::time_point now);
    const InFlight* oldest();  // the oldest send not yet acknowledged nor sent again
    void sample_round_trip(Clock::duration sample);

    Settings settings_;
    std::map<std::uint32_t, Transfer> transfers_;  // unfinished, by id (ids ascend: FIFO)
    std::deque<InFlight> sent_;                    // sends in order, stale entries skipped
    std::uint64_t sends_ = 0;
    std::uint64_t highest_acked_order_ = 0;  // of datagrams sent once: a resend's ACK is ambiguous
    std::uint32_t in_flight_ = 0;
    std::uint32_t tolerance_;  // reorder_tolerance, doubled on each unneeded gap resend
    std::uint32_t spurious_ = 0;
    // The timeout: smoothed round trip and its variation (none until the first sample), the
    // current timeout, and when the timer last restarted (an ACK of something new, a timeout).
    std::optional<Clock::duration> srtt_;
    Clock::duration rttvar_{};
    Clock::duration rto_;
    Clock::time_point timer_start_{};
};

}  // namespace rdmalab::unordered
