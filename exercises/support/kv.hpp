// The capstone's protocol: a key-value service over RC, shared by the reader's server and the
// reference clients that judge it (exercise-kv-clients). Only the messages' layout is here; what
// a server must check before it trusts a request is the server's own work.
//
// A client connects with rdma_cm and SENDs requests of kRequestBytes; the server answers each
// with a SEND of kReplyBytes. Values never travel in a SEND:
//   PUT key, length, checksum, (address, rkey) of the client's value: the server RDMA READs
//       `length` bytes from there, checks them against `checksum`, and only then stores them.
//   GET key, length (the room the client has), (address, rkey) of that room: the server RDMA
//       WRITEs the stored value there, then replies with its length and checksum.
//   SHUTDOWN: the server replies, then disconnects every client, releases everything, exits 0.
// Byte order on the wire: big-endian, every field.
#pragma once

#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kv {

// #region messages
constexpr std::uint32_t kKeys = 16;         // keys 0 … 15
constexpr std::uint32_t kValueBytes = 256;  // a value holds 1 … 256 bytes
constexpr std::size_t kRequestBytes = 32;
constexpr std::size_t kReplyBytes = 16;

enum Op : std::uint32_t { kPut = 1, kGet = 2, kShutdown = 3 };
enum Status : std::uint32_t {
    kOk = 0,
    kBadRequest = 1,  // an unknown op, a key out of range, a length of 0 or over the limit…
    kCorrupt = 2,     // PUT: the bytes read do not match the checksum (nothing stored)
    kNotFound = 3,    // GET: nothing stored under that key yet
};

struct Request {
    std::uint32_t op = 0;
    std::uint32_t key = 0;
    std::uint32_t length = 0;    // PUT: the value's bytes; GET: the room at address
    std::uint32_t checksum = 0;  // PUT: exercise::checksum of the value
    std::uint64_t address = 0;   // the client's buffer
    std::uint32_t rkey = 0;
    std::uint32_t id = 0;  // echoed in the reply
};

struct Reply {
    std::uint32_t id = 0;
    std::uint32_t status = kOk;
    std::uint32_t length = 0;    // the value's bytes (PUT: stored; GET: written)
    std::uint32_t checksum = 0;  // of those bytes
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

inline void encode_request(const Request& r, std::uint8_t* out) {
    using detail::put32;
    put32(out, r.op);
    put32(out + 4, r.key);
    put32(out + 8, r.length);
    put32(out + 12, r.checksum);
    put32(out + 16, static_cast<std::uint32_t>(r.address >> 32));
    put32(out + 20, static_cast<std::uint32_t>(r.address));
    put32(out + 24, r.rkey);
    put32(out + 28, r.id);
}

// The fields as they arrived: nothing is checked here.
inline Request decode_request(const std::uint8_t* in) {
    using detail::get32;
    return {get32(in),
            get32(in + 4),
            get32(in + 8),
            get32(in + 12),
            (std::uint64_t{get32(in + 16)} << 32) | get32(in + 20),
            get32(in + 24),
            get32(in + 28)};
}

inline void encode_reply(const Reply& r, std::uint8_t* out) {
    detail::put32(out, r.id);
    detail::put32(out + 4, r.status);
    detail::put32(out + 8, r.length);
    detail::put32(out + 12, r.checksum);
}

inline Reply decode_reply(const std::uint8_t* in) {
    using detail::get32;
    return {get32(in), get32(in + 4), get32(in + 8), get32(in + 12)};
}

}  // namespace kv
