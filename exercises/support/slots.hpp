// Exercise 14's protocol: a slot service over RC, shared by the reader's server and the reference
// clients that judge it (exercise-slot-clients). Only the messages' layout is here; what the
// server opens to whom is the server's own work, and the exercise's subject.
//
// A client connects with rdma_cm; the server's accept carries, as private data, the client's slot
// (exercise::RemoteBuffer: address, rkey, kSlotBytes). The client RDMA WRITEs its slot, then
// SENDs messages of kMessageBytes; the server answers each with a SEND of kReplyBytes:
//   CHECK length, checksum: does the slot's first `length` bytes have that checksum? (kOk or
//       kMismatch, and the checksum the server computed)
//   END: the client is done with its slot: from now on its key must open nothing (kOk)
//   SHUTDOWN: the server replies, then disconnects every client, releases everything, exits 0.
// Byte order on the wire: big-endian, every field.
#pragma once

#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace slots {

// #region messages
constexpr std::uint32_t kSlots = 8;         // clients at once
constexpr std::uint32_t kSlotBytes = 256;   // what each client may WRITE
constexpr std::uint32_t kSecretBytes = 64;  // the server's own state: no client's business
constexpr std::size_t kMessageBytes = 12;
constexpr std::size_t kReplyBytes = 8;

enum Op : std::uint32_t { kCheck = 1, kEnd = 2, kShutdown = 3 };
enum Status : std::uint32_t { kOk = 0, kMismatch = 1, kBadRequest = 2 };

struct Message {
    std::uint32_t op = 0;
    std::uint32_t length = 0;    // CHECK: the bytes of the slot to check
    std::uint32_t checksum = 0;  // CHECK: exercise::checksum of what the client wrote
};

struct Reply {
    std::uint32_t status = kOk;
    std::uint32_t checksum = 0;  // CHECK: of the slot's bytes, as the server sees them
};
// #endregion messages

namespace detail {
inline void put32(std::uint8_t* out, std::uint32_t value) {
    value = htonl(value);
    std::memcpy(out, &value, 4);
}
inline std::uint32_t get32(const std::uint8_t* in) {
    std::uint32_t value;
    std::memcpy(&value, in, 4);
    return ntohl(value);
}
}  // namespace detail

inline void encode_message(const Message& m, std::uint8_t* out) {
    detail::put32(out, m.op);
    detail::put32(out + 4, m.length);
    detail::put32(out + 8, m.checksum);
}

// The fields as they arrived: nothing is checked here.
inline Message decode_message(const std::uint8_t* in) {
    return {detail::get32(in), detail::get32(in + 4), detail::get32(in + 8)};
}

inline void encode_reply(const Reply& r, std::uint8_t* out) {
    detail::put32(out, r.status);
    detail::put32(out + 4, r.checksum);
}

inline Reply decode_reply(const std::uint8_t* in) {
    return {detail::get32(in), detail::get32(in + 4)};
}

}  // namespace slots
