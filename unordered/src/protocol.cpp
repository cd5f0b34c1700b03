#include "rdmalab/unordered/protocol.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab::unordered {

namespace {

constexpr std::uint32_t kDataMagic = 0x52554444;  // "RUDD"
constexpr std::uint32_t kAckMagic = 0x52554441;   // "RUDA"

}  // namespace

std::uint32_t DataHeader::length() const {
    const std::uint64_t start = std::uint64_t{sequence} * payload;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(payload, total - start));
}

bool DataHeader::same_transfer(const DataHeader& other) const {
    return transfer == other.transfer && total == other.total &&
           target_offset == other.target_offset && payload == other.payload;
}

bool Ack::covers(std::uint32_t sequence) const {
    if (sequence < cumulative) return true;
    if (sequence == cumulative || sequence >= count) return false;
    const std::uint32_t bit = sequence - cumulative - 1;
    return bit < kAckBitmapBits && (bitmap[bit / 8] >> (bit % 8) & 1U) != 0;
}

void write_data_header(std::span<std::byte, kDataHeaderBytes> out, const DataHeader& header) {
    ByteWriter writer(out, "the unordered layer's data header");
    writer.u32(kDataMagic);
    writer.u32(header.transfer);
    writer.u32(header.sequence);
    writer.u32(header.total);
    writer.u64(header.target_offset);
    writer.u32(header.payload);
    writer.zeros(4);
    writer.expect_end();
}

void write_ack(std::span<std::byte, kAckBytes> out, const Ack& ack) {
    ByteWriter writer(out, "the unordered layer's acknowledgement");
    writer.u32(kAckMagic);
    writer.u32(ack.transfer);
    writer.u32(ack.count);
    writer.u32(ack.cumulative);
    writer.bytes(std::as_bytes(std::span(ack.bitmap)));
    writer.expect_end();
}

std::variant<Arrival, std::string> read_datagram(std::span<const std::byte> bytes) {
    if (bytes.size() < 4) return fmt::format("a datagram of {} bytes has no magic", bytes.size());
    const std::uint32_t magic = load_be32(bytes.first(4));
    if (magic == kAckMagic) {
        if (bytes.size() != kAckBytes)
            return fmt::format("an acknowledgement of {} bytes (it has {})", bytes.size(),
                               kAckBytes);
        ByteReader reader(bytes.subspan(4), "the unordered layer's acknowledgement");
        Ack ack;
        ack.transfer = reader.u32();
        ack.count = reader.u32();
        ack.cumulative = reader.u32();
        for (auto& byte : ack.bitmap) byte = reader.u8();
        if (ack.count == 0 || ack.count > kMaxDatagramsPerTransfer)
            return fmt::format("an acknowledgement of transfer {} counts {} datagrams (1 to {})",
                               ack.transfer, ack.count, kMaxDatagramsPerTransfer);
        if (ack.cumulative > ack.count)
            return fmt::format("an acknowledgement of transfer {} says {} of its {} arrived",
                               ack.transfer, ack.cumulative, ack.count);
        for (std::uint32_t bit = 0; bit < kAckBitmapBits; ++bit)
            if ((ack.bitmap[bit / 8] >> (bit % 8) & 1U) != 0 &&
                std::uint64_t{ack.cumulative} + 1 + bit >= ack.count)
                return fmt::format(
                    "an acknowledgement of transfer {} names datagram {}, past its {}",
                    ack.transfer, std::uint64_t{ack.cumulative} + 1 + bit, ack.count);
        return Arrival{ack};
    }
    if (magic != kDataMagic) return fmt::format("a datagram with magic {:#010x}", magic);
    if (bytes.size() < kDataHeaderBytes)
        return fmt::format("a data datagram of {} bytes, shorter than its header ({})",
                           bytes.size(), kDataHeaderBytes);
    ByteReader reader(bytes.subspan(4, kDataHeaderBytes - 4), "the unordered layer's data header");
    DataHeader header;
    header.transfer = reader.u32();
    header.sequence = reader.u32();
    header.total = reader.u32();
    header.target_offset = reader.u64();
    header.payload = reader.u32();
    if (header.total == 0 || header.payload == 0)
        return fmt::format("transfer {}: a total of {} bytes in datagrams of {}", header.transfer,
                           header.total, header.payload);
    if (header.count() > kMaxDatagramsPerTransfer)
        return fmt::format("transfer {}: {} datagrams (at most {})", header.transfer,
                           header.count(), kMaxDatagramsPerTransfer);
    if (header.sequence >= header.count())
        return fmt::format("transfer {}: datagram {} of {}", header.transfer, header.sequence,
                           header.count());
    if (bytes.size() - kDataHeaderBytes != header.length())
        return fmt::format("transfer {}: datagram {} carries {} bytes, its place holds {}",
                           header.transfer, header.sequence, bytes.size() - kDataHeaderBytes,
                           header.length());
    return Arrival{header};
}

std::optional<std::string> refuse_placement(const DataHeader& header, std::size_t target_bytes,
                                            const DataHeader* first) {
    if (header.target_offset > target_bytes || header.total > target_bytes - header.target_offset)
        return fmt::format("transfer {}: {} bytes at offset {} do not fit the target ({} bytes)",
                           header.transfer, header.total, header.target_offset, target_bytes);
    if (first != nullptr && !first->same_transfer(header))
        return fmt::format("transfer {}: datagram {} disagrees with its first about the transfer",
                           header.transfer, header.sequence);
    return std::nullopt;
}

// ---- Reassembly

Reassembly::Reassembly(const DataHeader& first) : header_(first), seen_(first.count(), false) {}

bool Reassembly::record(std::uint32_t sequence) {
    if (seen_[sequence]) return false;
    seen_[sequence] = true;
    ++received_;
    while (cumulative_ < seen_.size() && seen_[cumulative_]) ++cumulative_;
    return true;
}

// #region ack
Ack Reassembly::ack() const {
    Ack ack{.transfer = header_.transfer, .count = header_.count(), .cumulative = cumulative_};
    for (std::uint32_t bit = 0; bit < kAckBitmapBits; ++bit) {
        const std::uint64_t sequence = std::uint64_t{cumulative_} + 1 + bit;
        if (sequence >= seen_.size()) break;
        if (seen_[sequence]) ack.bitmap[bit / 8] |= static_cast<std::uint8_t>(1U << (bit % 8));
    }
    return ack;
}
// #endregion ack

// ---- SendWindow

void SendWindow::add(std::uint32_t transfer, std::uint32_t count) {
    if (count == 0 || count > kMaxDatagramsPerTransfer)
        fail(fmt::format("transfer {}: {} datagrams (1 to {})", transfer, count,
                         kMaxDatagramsPerTransfer));
    if (!transfers_.try_emplace(transfer, Transfer{std::vector<Datagram>(count), count}).second)
        fail(fmt::format("transfer {} is already under way", transfer));
}

Transmission SendWindow::send(std::uint32_t transfer, std::uint32_t sequence, SendReason reason,
                              Clock::time_point now) {
    Datagram& datagram = transfers_.at(transfer).datagrams[sequence];
    if (datagram.sends == settings_.max_sends)
        fail(fmt::format(
            "transfer {}: datagram {} sent {} times and never acknowledged (the peer, or every "
            "path to it, is gone)",
            transfer, sequence, datagram.sends));
    ++datagram.sends;
    datagram.order = ++sends_;
    datagram.sent_at = now;
    datagram.last_reason = reason;
    sent_.push_back({transfer, sequence, datagram.order});
    return {transfer, sequence, reason};
}

const SendWindow::InFlight* SendWindow::oldest() {
    // Sends are in order, so the first still current is the first to fall due either way (the
    // gap rule counts sends after it, the timer runs from it).
    while (!sent_.empty()) {
        const InFlight& entry = sent_.front();
        auto transfer = transfers_.find(entry.transfer);
        if (transfer != transfers_.end()) {
            const Datagram& datagram = transfer->second.datagrams[entry.sequence];
            if (!datagram.acked && datagram.order == entry.order) return &entry;
        }
        sent_.pop_front();  // acknowledged, sent again since, or its transfer is done
    }
    return nullptr;
}

// #region resend-rules
std::optional<Transmission> SendWindow::next(Clock::time_point now) {
    if (const InFlight* entry = oldest()) {
        const InFlight first = *entry;
        const Datagram& datagram = transfers_.at(first.transfer).datagrams[first.sequence];
        std::optional<SendReason> due;
        if (highest_acked_order_ > datagram.order + tolerance_)
            due = SendReason::kGap;
        else if (now - std::max(datagram.sent_at, timer_start_) >= rto_) {
            due = SendReason::kTimeout;
            // One resend per timeout, and the next one twice as far (up to 2 s): a timer that
            // fired early must not resend the whole window, nor keep doing so.
            rto_ = std::min<Clock::duration>(2 * rto_, std::chrono::seconds(2));
            timer_start_ = now;
        }
        if (due) {
            sent_.pop_front();
            return send(first.transfer, first.sequence, *due, now);
        }
    }
    if (in_flight_ >= settings_.window) return std::nullopt;
    for (auto& [id, transfer] : transfers_) {
        if (transfer.next_new < transfer.datagrams.size()) {
            if (in_flight_ == 0) timer_start_ = now;
            ++in_flight_;
            return send(id, transfer.next_new++, SendReason::kNew, now);
        }
    }
    return std::nullopt;
}
// #endregion resend-rules

void SendWindow::sample_round_trip(Clock::duration sample) {
    // RFC 6298: SRTT and RTTVAR with gains 1/8 and 1/4; RTO = SRTT + 4 RTTVAR, at least the
    // configured timeout.
    if (!srtt_) {
        srtt_ = sample;
        rttvar_ = sample / 2;
    } else {
        const Clock::duration error = sample > *srtt_ ? sample - *srtt_ : *srtt_ - sample;
        rttvar_ = (3 * rttvar_ + error) / 4;
        srtt_ = (7 * *srtt_ + sample) / 8;
    }
    rto_ = std::clamp<Clock::duration>(*srtt_ + 4 * rttvar_, settings_.retransmit_timeout,
                                       std::chrono::seconds(2));
}

std::vector<std::uint32_t> SendWindow::acknowledge(const Ack& ack, Clock::time_point now) {
    auto found = transfers_.find(ack.transfer);
    if (found == transfers_.end()) return {};
    Transfer& transfer = found->second;
    if (ack.count != transfer.datagrams.size())
        fail(fmt::format("an acknowledgement of transfer {} counts {} datagrams; it has {}",
                         ack.transfer, ack.count, transfer.datagrams.size()));
    bool progress = false;
    std::optional<Clock::time_point> newest_sample;
    auto mark = [&](std::uint32_t sequence) {
        Datagram& datagram = transfer.datagrams[sequence];
        if (datagram.acked) return;
        if (datagram.sends == 0)
            fail(fmt::format("an acknowledgement of transfer {} names datagram {}, never sent",
                             ack.transfer, sequence));
        datagram.acked = true;
        --transfer.unacked;
        --in_flight_;
        progress = true;
        // A gap resend acknowledged within half a round trip: the first copy had arrived, only
        // late. Reordering runs deeper than the tolerance: double it.
        if (datagram.last_reason == SendReason::kGap && srtt_ &&
            now - datagram.sent_at < *srtt_ / 2) {
            ++spurious_;
            tolerance_ = std::min(2 * tolerance_, settings_.window);
        }
        // Only a datagram sent once says when its packet arrived (Karn): after a resend the ACK
        // may answer either copy.
        if (datagram.sends == 1) {
            highest_acked_order_ = std::max(highest_acked_order_, datagram.order);
            if (!newest_sample || datagram.sent_at > *newest_sample)
                newest_sample = datagram.sent_at;
        }
    };
    for (; transfer.acked_below < ack.cumulative; ++transfer.acked_below)
        mark(transfer.acked_below);
    for (std::uint32_t bit = 0; bit < kAckBitmapBits; ++bit) {
        const std::uint64_t sequence = std::uint64_t{ack.cumulative} + 1 + bit;
        if (sequence >= ack.count) break;
        if (ack.covers(static_cast<std::uint32_t>(sequence)))
            mark(static_cast<std::uint32_t>(sequence));
    }
    if (progress) timer_start_ = now;  // the timer restarts whenever something new is acknowledged
    if (newest_sample) sample_round_trip(now - *newest_sample);
    if (transfer.unacked > 0) return {};
    transfers_.erase(found);
    return {ack.transfer};
}

std::optional<Clock::time_point> SendWindow::next_timeout() const {
    for (const InFlight& entry : sent_) {
        auto transfer = transfers_.find(entry.transfer);
        if (transfer == transfers_.end()) continue;
        const Datagram& datagram = transfer->second.datagrams[entry.sequence];
        if (!datagram.acked && datagram.order == entry.order)
            return std::max(datagram.sent_at, timer_start_) + rto_;
    }
    return std::nullopt;
}

}  // namespace rdmalab::unordered
