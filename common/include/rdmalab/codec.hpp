// The codec: the bytes a peer sends. Every record, control word and message that crosses to the
// other side — rdma_cm private data, the TCP exchange, SEND payloads, words a peer RDMA-WRITEs —
// is written and read here: unsigned integers big-endian (network byte order, so hosts of either
// order agree), every access checked against the size of the bytes. No other file converts byte
// order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rdmalab {

namespace codec_detail {

// Throws rdmalab::Error: "store_be32 needs exactly 4 bytes, got 3".
[[noreturn]] void wrong_size(std::string_view what, std::size_t size, std::size_t expected);

template <typename T>
void store(std::span<std::byte> out, T value, std::string_view what) {
    if (out.size() != sizeof(T)) wrong_size(what, out.size(), sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i)
        out[i] = static_cast<std::byte>(value >> (8 * (sizeof(T) - 1 - i)));
}

template <typename T>
T load(std::span<const std::byte> in, std::string_view what) {
    if (in.size() != sizeof(T)) wrong_size(what, in.size(), sizeof(T));
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
        value = static_cast<T>(value << 8 | std::to_integer<T>(in[i]));
    return value;
}

}  // namespace codec_detail

// ---- One value in bytes of exactly its size, most significant byte first: 0x01020304 is stored
// as 01 02 03 04 on every host. Bytes of another size throw rdmalab::Error.

inline void store_be16(std::span<std::byte> out, std::uint16_t value) {
    codec_detail::store(out, value, "store_be16");
}
inline void store_be32(std::span<std::byte> out, std::uint32_t value) {
    codec_detail::store(out, value, "store_be32");
}
inline void store_be64(std::span<std::byte> out, std::uint64_t value) {
    codec_detail::store(out, value, "store_be64");
}
inline std::uint16_t load_be16(std::span<const std::byte> in) {
    return codec_detail::load<std::uint16_t>(in, "load_be16");
}
inline std::uint32_t load_be32(std::span<const std::byte> in) {
    return codec_detail::load<std::uint32_t>(in, "load_be32");
}
inline std::uint64_t load_be64(std::span<const std::byte> in) {
    return codec_detail::load<std::uint64_t>(in, "load_be64");
}

// ---- Fields an API itself declares big-endian (verbs' __be32 imm_data and __be64 device GUID, a
// packet socket's protocol): an integer whose own bytes are in network order. to_be16/32 make
// one; from_be32/64 read one.

inline std::uint16_t to_be16(std::uint16_t value) {
    std::uint16_t field = 0;
    store_be16(std::as_writable_bytes(std::span(&field, 1)), value);
    return field;
}

inline std::uint32_t to_be32(std::uint32_t value) {
    std::uint32_t field = 0;
    store_be32(std::as_writable_bytes(std::span(&field, 1)), value);
    return field;
}
inline std::uint32_t from_be32(std::uint32_t field) {
    return load_be32(std::as_bytes(std::span(&field, 1)));
}
inline std::uint64_t from_be64(std::uint64_t field) {
    return load_be64(std::as_bytes(std::span(&field, 1)));
}

// ---- A record, field after field.
// `record` names it in errors ("the endpoint record: …"); it must outlive the writer or reader
// (a string literal does).

// Writes into a fixed span (a std::array, a registered buffer) or appends to a vector. A field
// that does not fit in the span throws rdmalab::Error: nothing is ever cut short.
class ByteWriter {
  public:
    ByteWriter(std::span<std::byte> out, std::string_view record);
    ByteWriter(std::vector<std::byte>& out, std::string_view record);

    void u8(std::uint8_t value);
    void u16(std::uint16_t value);
    void u32(std::uint32_t value);
    void u64(std::uint64_t value);
    void bytes(std::span<const std::byte> value);  // copied as they are: a GID, a name
    void zeros(std::size_t count);                 // reserved bytes

    std::size_t written() const { return written_; }
    // A fixed-size record: throws unless every byte of the span was written.
    void expect_end() const;

  private:
    std::span<std::byte> next(std::size_t size);  // room for the next field, or throws

    std::span<std::byte> fixed_;
    std::vector<std::byte>* growing_ = nullptr;
    std::size_t written_ = 0;
    std::string_view record_;
};

// Reads fields in order. Reading past the end throws rdmalab::Error naming the record, the
// offset and what was left.
class ByteReader {
  public:
    ByteReader(std::span<const std::byte> in, std::string_view record);

    std::uint8_t u8();
    std::uint16_t u16();
    std::uint32_t u32();
    std::uint64_t u64();
    std::span<const std::byte> bytes(std::size_t count);  // the next count bytes, as they are

    std::size_t remaining() const { return in_.size() - offset_; }
    // Throws if bytes remain: a record of fixed size with trailing bytes is refused.
    void expect_end() const;

  private:
    std::span<const std::byte> next(std::size_t size);  // the next field's bytes, or throws

    std::span<const std::byte> in_;
    std::size_t offset_ = 0;
    std::string_view record_;
};

}  // namespace rdmalab
