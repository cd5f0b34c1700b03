// The codec: see codec.hpp.
#include "rdmalab/codec.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab {

namespace codec_detail {

void wrong_size(std::string_view what, std::size_t size, std::size_t expected) {
    fail(fmt::format("{} needs exactly {} bytes, got {}", what, expected, size));
}

}  // namespace codec_detail

// ---- ByteWriter

ByteWriter::ByteWriter(std::span<std::byte> out, std::string_view record)
    : fixed_(out), record_(record) {}

ByteWriter::ByteWriter(std::vector<std::byte>& out, std::string_view record)
    : growing_(&out), record_(record) {}

std::span<std::byte> ByteWriter::next(std::size_t size) {
    std::span<std::byte> room;
    if (growing_ != nullptr) {
        growing_->resize(growing_->size() + size);
        room = std::span(*growing_).last(size);
    } else {
        if (size > fixed_.size() - written_)
            fail(fmt::format("{}: no room for a {}-byte field at offset {} of {}", record_, size,
                             written_, fixed_.size()));
        room = fixed_.subspan(written_, size);
    }
    written_ += size;
    return room;
}

void ByteWriter::u8(std::uint8_t value) {
    next(1)[0] = std::byte{value};
}
void ByteWriter::u16(std::uint16_t value) {
    store_be16(next(2), value);
}
void ByteWriter::u32(std::uint32_t value) {
    store_be32(next(4), value);
}
void ByteWriter::u64(std::uint64_t value) {
    store_be64(next(8), value);
}
void ByteWriter::bytes(std::span<const std::byte> value) {
    std::ranges::copy(value, next(value.size()).begin());
}
void ByteWriter::zeros(std::size_t count) {
    std::ranges::fill(next(count), std::byte{0});
}

void ByteWriter::expect_end() const {
    if (growing_ == nullptr && written_ != fixed_.size())
        fail(fmt::format("{}: {} of its {} bytes written", record_, written_, fixed_.size()));
}

// ---- ByteReader

ByteReader::ByteReader(std::span<const std::byte> in, std::string_view record)
    : in_(in), record_(record) {}

std::span<const std::byte> ByteReader::next(std::size_t size) {
    if (size > remaining())
        fail(fmt::format("{}: too short for a {}-byte field at offset {} ({} left)", record_, size,
                         offset_, remaining()));
    std::span<const std::byte> field = in_.subspan(offset_, size);
    offset_ += size;
    return field;
}

std::uint8_t ByteReader::u8() {
    return std::to_integer<std::uint8_t>(next(1)[0]);
}
std::uint16_t ByteReader::u16() {
    return load_be16(next(2));
}
std::uint32_t ByteReader::u32() {
    return load_be32(next(4));
}
std::uint64_t ByteReader::u64() {
    return load_be64(next(8));
}
std::span<const std::byte> ByteReader::bytes(std::size_t count) {
    return next(count);
}

void ByteReader::expect_end() const {
    if (remaining() != 0)
        fail(fmt::format("{}: trailing bytes after offset {} ({} in all)", record_, offset_,
                         in_.size()));
}

}  // namespace rdmalab
