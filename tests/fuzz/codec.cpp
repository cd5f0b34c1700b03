// Fuzzes ByteReader, the codec every record is read with. The input is a small program and a
// record: byte 0 is the number of reads n (0..15), bytes 1..n the reads (low 3 bits: 0 u8, 1 u16,
// 2 u32, 3 u64, 4 bytes(op >> 3), 5 expect_end), the rest the record. Checks: a read is refused
// (rdmalab::Error, nothing else) exactly when the record has too few bytes left (expect_end:
// any left); remaining() counts down by each field's size; the fields written back with
// ByteWriter, growing and into a fixed span of the record's size, are the record's bytes.
#include "rdmalab/codec.hpp"
#include "fuzz.hpp"

#include <algorithm>
#include <vector>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t reads = std::min<std::size_t>(data[0] % 16, size - 1);
    const auto program = fuzz::bytes(data + 1, reads);
    const auto record = fuzz::bytes(data + 1 + reads, size - 1 - reads);

    ByteReader in(record, "the fuzzed record");
    std::vector<std::byte> grown;
    ByteWriter back(grown, "the record written back");
    std::vector<std::byte> fixed(record.size());
    ByteWriter fixed_back(std::span(fixed), "the record written back");
    std::size_t consumed = 0;
    for (std::byte step : program) {
        const auto op = std::to_integer<unsigned>(step);
        const std::size_t left = in.remaining();
        FUZZ_CHECK(left == record.size() - consumed);
        std::size_t field = 0;
        const bool ok = fuzz::accepts([&] {
            switch (op & 7) {
                case 0: {
                    const std::uint8_t v = in.u8();
                    back.u8(v);
                    fixed_back.u8(v);
                    field = 1;
                    break;
                }
                case 1: {
                    const std::uint16_t v = in.u16();
                    back.u16(v);
                    fixed_back.u16(v);
                    field = 2;
                    break;
                }
                case 2: {
                    const std::uint32_t v = in.u32();
                    back.u32(v);
                    fixed_back.u32(v);
                    field = 4;
                    break;
                }
                case 3: {
                    const std::uint64_t v = in.u64();
                    back.u64(v);
                    fixed_back.u64(v);
                    field = 8;
                    break;
                }
                case 4: {
                    const auto v = in.bytes(op >> 3);
                    FUZZ_CHECK(v.size() == op >> 3);
                    back.bytes(v);
                    fixed_back.bytes(v);
                    field = v.size();
                    break;
                }
                default:
                    in.expect_end();
                    fixed_back.expect_end();
                    break;
            }
        });
        const std::size_t wanted = (op & 7) == 4 ? op >> 3 : (op & 7) < 4 ? 1u << (op & 7) : 0;
        if ((op & 7) > 4)
            FUZZ_CHECK(ok == (left == 0));
        else
            FUZZ_CHECK(ok == (wanted <= left));
        if (!ok) {
            FUZZ_CHECK(in.remaining() == left);  // a refused read consumes nothing
            continue;
        }
        consumed += field;
        FUZZ_CHECK(in.remaining() == left - field);
    }
    FUZZ_CHECK(grown.size() == consumed && back.written() == consumed);
    FUZZ_CHECK(fixed_back.written() == consumed);
    FUZZ_CHECK(std::ranges::equal(grown, record.first(consumed)));
    FUZZ_CHECK(std::ranges::equal(std::span(fixed).first(consumed), record.first(consumed)));
    return 0;
}
