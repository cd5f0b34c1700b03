// Unit tests for the codec: big-endian layouts and round trips, and that the reader and the
// writer refuse to go past the end of their bytes.
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

using namespace rdmalab;

namespace {

std::vector<std::byte> bytes(std::initializer_list<unsigned> values) {
    std::vector<std::byte> out;
    for (unsigned value : values) out.push_back(static_cast<std::byte>(value));
    return out;
}

// The message of the Error that f throws ("" if it throws none).
template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Codec, StoresMostSignificantByteFirst) {
    std::array<std::byte, 2> two{};
    store_be16(two, 0x0102);
    EXPECT_EQ(std::vector(two.begin(), two.end()), bytes({0x01, 0x02}));
    std::array<std::byte, 4> four{};
    store_be32(four, 0x01020304u);
    EXPECT_EQ(std::vector(four.begin(), four.end()), bytes({0x01, 0x02, 0x03, 0x04}));
    std::array<std::byte, 8> eight{};
    store_be64(eight, 0x0102030405060708ull);
    EXPECT_EQ(std::vector(eight.begin(), eight.end()),
              bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}));
}

TEST(Codec, LoadsMostSignificantByteFirst) {
    EXPECT_EQ(load_be16(bytes({0xab, 0xcd})), 0xabcdu);
    EXPECT_EQ(load_be32(bytes({0x01, 0x02, 0x03, 0x04})), 0x01020304u);
    EXPECT_EQ(load_be64(bytes({0x80, 0, 0, 0, 0, 0, 0, 0xff})), 0x80000000000000ffull);
}

TEST(Codec, RoundTripsEveryWidth) {
    for (std::uint16_t value :
         {std::uint16_t{0}, std::uint16_t{1}, std::uint16_t{0x8001}, std::uint16_t{0xffff}}) {
        std::array<std::byte, 2> wire{};
        store_be16(wire, value);
        EXPECT_EQ(load_be16(wire), value);
    }
    for (std::uint32_t value : {0u, 1u, 0x80000001u, 0xdeadbeefu, 0xffffffffu}) {
        std::array<std::byte, 4> wire{};
        store_be32(wire, value);
        EXPECT_EQ(load_be32(wire), value);
    }
    for (std::uint64_t value : {0ull, 1ull, 0x8000000000000001ull, 0x0123456789abcdefull, ~0ull}) {
        std::array<std::byte, 8> wire{};
        store_be64(wire, value);
        EXPECT_EQ(load_be64(wire), value);
    }
}

TEST(Be32, RoundTripsAndIsBigEndian) {
    std::array<std::byte, 4> bytes{};
    store_be32(bytes, 0x01020304u);
    EXPECT_EQ(bytes[0], std::byte{1});
    EXPECT_EQ(bytes[3], std::byte{4});
    EXPECT_EQ(load_be32(bytes), 0x01020304u);
}

TEST(Codec, RefusesBytesOfTheWrongSize) {
    std::array<std::byte, 8> wire{};
    EXPECT_EQ(error_of([&] { store_be32(std::span(wire).first(3), 1); }),
              "store_be32 needs exactly 4 bytes, got 3");
    EXPECT_EQ(error_of([&] { load_be16(std::span(wire).first(3)); }),
              "load_be16 needs exactly 2 bytes, got 3");
    EXPECT_THROW(load_be64(std::span(wire).first(7)), Error);
}

TEST(Codec, VerbsBigEndianFieldsHoldTheBytesInNetworkOrder) {
    const std::uint32_t field = to_be32(0x01020304u);
    EXPECT_EQ(std::vector(std::as_bytes(std::span(&field, 1)).begin(),
                          std::as_bytes(std::span(&field, 1)).end()),
              bytes({0x01, 0x02, 0x03, 0x04}));
    EXPECT_EQ(from_be32(field), 0x01020304u);
    const std::uint16_t protocol = to_be16(0x0800);  // ETH_P_IP, as a packet socket takes it
    EXPECT_EQ(std::vector(std::as_bytes(std::span(&protocol, 1)).begin(),
                          std::as_bytes(std::span(&protocol, 1)).end()),
              bytes({0x08, 0x00}));
    std::array<std::byte, 8> guid{};
    store_be64(guid, 0x0002c90300a1b2c3ull);
    std::uint64_t guid_field = 0;
    std::memcpy(&guid_field, guid.data(), 8);
    EXPECT_EQ(from_be64(guid_field), 0x0002c90300a1b2c3ull);
}

TEST(ByteWriter, WritesFieldsInOrder) {
    std::array<std::byte, 16> wire{};
    ByteWriter out(wire, "test record");
    out.u8(0x01);
    out.u16(0x0203);
    out.u32(0x04050607u);
    out.zeros(1);
    out.bytes(bytes({0xaa, 0xbb}));
    out.u32(0x08090a0bu);
    EXPECT_EQ(out.written(), 14u);
    EXPECT_EQ(std::vector(wire.begin(), wire.end()),
              bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0xaa, 0xbb, 0x08, 0x09, 0x0a,
                     0x0b, 0x00, 0x00}));
}

TEST(ByteWriter, AppendsToAVector) {
    std::vector<std::byte> wire = bytes({0xff});
    ByteWriter out(wire, "test record");
    out.u64(0x0102030405060708ull);
    out.u16(0x0a0b);
    out.expect_end();  // a growing record is always complete
    EXPECT_EQ(wire, bytes({0xff, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b}));
    EXPECT_EQ(out.written(), 10u);
}

TEST(ByteWriter, RefusesToOverflowAndTruncatesNothing) {
    std::array<std::byte, 6> wire{};
    ByteWriter out(wire, "the test record");
    out.u32(0x01020304u);
    EXPECT_EQ(error_of([&] { out.u32(0x05060708u); }),
              "the test record: no room for a 4-byte field at offset 4 of 6");
    EXPECT_EQ(std::vector(wire.begin(), wire.end()), bytes({1, 2, 3, 4, 0, 0}));  // not cut short
    EXPECT_THROW(out.bytes(bytes({1, 2, 3})), Error);
    out.u16(0x0506);  // what fits still fits
    EXPECT_THROW(out.u8(7), Error);
    EXPECT_EQ(out.written(), 6u);
}

TEST(ByteWriter, ExpectEndRefusesARecordWrittenOnlyInPart) {
    std::array<std::byte, 8> wire{};
    ByteWriter out(wire, "the test record");
    out.u32(1);
    EXPECT_EQ(error_of([&] { out.expect_end(); }), "the test record: 4 of its 8 bytes written");
    out.u32(2);
    EXPECT_NO_THROW(out.expect_end());
}

TEST(ByteReader, ReadsFieldsInOrder) {
    const auto wire =
        bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xaa, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8});
    ByteReader in(wire, "test record");
    EXPECT_EQ(in.u8(), 0x01u);
    EXPECT_EQ(in.u16(), 0x0203u);
    EXPECT_EQ(in.u32(), 0x04050607u);
    const auto raw = in.bytes(2);
    EXPECT_EQ(std::vector(raw.begin(), raw.end()), bytes({0xaa, 0xbb}));
    EXPECT_EQ(in.remaining(), 8u);
    EXPECT_EQ(in.u64(), 0x0102030405060708ull);
    EXPECT_EQ(in.remaining(), 0u);
    EXPECT_NO_THROW(in.expect_end());
}

TEST(ByteReader, ReadingPastTheEndNamesTheRecord) {
    const auto wire = bytes({1, 2, 3, 4, 5, 6});
    ByteReader in(wire, "the peer's hello");
    in.u32();
    EXPECT_EQ(error_of([&] { in.u32(); }),
              "the peer's hello: too short for a 4-byte field at offset 4 (2 left)");
    EXPECT_THROW(in.u64(), Error);
    EXPECT_THROW(in.bytes(3), Error);
    EXPECT_EQ(in.u16(), 0x0506u);  // a failed read consumes nothing
    EXPECT_THROW(in.u8(), Error);

    ByteReader empty(std::span<const std::byte>{}, "an empty record");
    EXPECT_EQ(error_of([&] { empty.u8(); }),
              "an empty record: too short for a 1-byte field at offset 0 (0 left)");
}

TEST(ByteReader, ExpectEndRefusesTrailingBytes) {
    const auto wire = bytes({0, 0, 0, 1, 0xee, 0xee});
    ByteReader in(wire, "the test record");
    EXPECT_EQ(in.u32(), 1u);
    EXPECT_EQ(in.remaining(), 2u);
    EXPECT_EQ(error_of([&] { in.expect_end(); }),
              "the test record: trailing bytes after offset 4 (6 in all)");
}
