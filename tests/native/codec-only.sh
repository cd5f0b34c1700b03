# Native test: byte order is converted in one place, the codec (common/include/rdmalab/codec.hpp
# and common/src/codec.cpp). Anywhere else in the C++ tree (common, lessons, bench, gpu) none of
# these may appear, outside // comments:
#   - a byte-order call: htobe32, be64toh, htonl, ntohs, bswap_32, __builtin_bswap64, byteswap,
#     or <endian.h>/<byteswap.h>;
#   - a byte-order helper of its own: a function declared or defined as load_be…, store_be…,
#     get_be…, put_be…, read_be…, write_be… (or _le…);
#   - a byte shifted by hand: ">> 8", ">> 16", ">> 24", ">> (8 * …", "<< 8".
# Allowed, and why: the sockets API's own fields (sin_port, sin6_port, sin_addr) are in network
# order by definition, and htons/ntohl where they are set or read is that API's idiom — they are
# not records of ours.
# To mend a failure: write the field with the codec (store_be32, ByteWriter, to_be32, …).
# Usage: bash tests/native/codec-only.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$repo/tests/checks.sh"

# Extended regular expressions (awk has no \b: a name is bounded by a character that is not one
# of [[:alnum:]_], or by the line's ends).
calls='(^|[^[:alnum:]_])(hto(be|le)(16|32|64)|(be|le)(16|32|64)toh|hton[ls]|ntoh[ls]|bswap_(16|32|64)|__builtin_bswap(16|32|64)|byteswap)([^[:alnum:]_]|$)|<(endian|byteswap)\.h>'
# A type before the name makes it a declaration or definition, not a call ("return f(…)" is one).
helpers='[[:alnum:]_]>?[[:space:]]+(load|store|get|put|read|write)_(be|le)[0-9]*[[:space:]]*\('
calls_returned='(return|else)[[:space:]]+(load|store|get|put|read|write)_(be|le)'
shifts='>>[[:space:]]*\(?[[:space:]]*(8|16|24)([^0-9]|$)|<<[[:space:]]*8([^0-9]|$)'
allowed='sin6?_(port|addr)'

# scan FILE...: "FILE:LINE: TEXT" for every line that converts byte order and is not allowed.
scan() {
    awk -v calls="$calls" -v helpers="$helpers" -v returned="$calls_returned" -v shifts="$shifts" \
        -v allowed="$allowed" '
        {
            code = $0
            sub(/\/\/.*/, "", code)  # comments may name what they explain
            if (code ~ allowed) next
            if (code ~ calls || code ~ shifts || (code ~ helpers && code !~ returned))
                print FILENAME ":" FNR ": " $0
        }' "$@"
}

# The patterns find what this tree once had (each line below was in it), and leave alone what
# it has now.
cat >"$scratch/converts.cpp" <<'EOF'
#include <endian.h>
void store_be(std::uint8_t* out, T value) {
T load_be(const std::uint8_t* in) {
        out[i] = static_cast<std::uint8_t>(value >> (8 * (sizeof(T) - 1 - i)));
    for (std::size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>((value << 8) | in[i]);
void store_be32(std::span<std::uint8_t, 4> out, std::uint32_t value);
std::uint64_t load_be64(const void* in);
    value = htobe32(value);
    return be64toh(value);
void put_be32(std::span<std::byte> out, std::size_t at, std::uint32_t value) {
    for (std::size_t i = 0; i < 4; ++i) out[at + i] = static_cast<std::byte>(value >> (24 - 8 * i));
    wire[16] = static_cast<std::uint8_t>(endpoint.lid >> 8);
                        .lid = static_cast<std::uint16_t>(wire[16] << 8 | wire[17]),
                const std::uint64_t wire = htobe64(consumed);
        if (config_.op == Op::kWriteImm) wr.imm_data = htobe32(static_cast<std::uint32_t>(seq));
        write.imm_data = htonl(corrupt ? options.parts : part);
        const std::uint32_t part = ntohl(wc.imm_data);
               be64toh(ibv_get_device_guid(device)), limits.fw_ver, limits.phys_port_cnt);
EOF
cat >"$scratch/uses-the-codec.cpp" <<'EOF'
    store_be32(bytes, word);
    return load_be32(bytes);
    return header.kind == kind && header.a == sequence && load_be32(message.last(4)) == sequence;
    const std::uint32_t written = load_be32(done_);
    if (bytes.size() != 4 || load_be32(bytes) != expected)
        write.imm_data = to_be32(corrupt ? options.parts : part);
        // to_be32 (the codec's htonl) made it, so hosts of either byte order read the same number
        v4->sin_port = htons(port);
        return ntohl(reinterpret_cast<const sockaddr_in*>(&*address)->sin_addr.s_addr) >> 28 == 0xE;
    return static_cast<std::byte>(x >> 56);
    return std::uint64_t{queue} << 48 | seq;
    if (warmup > (std::uint64_t{1} << 24)) return fmt::format("--warmup {} exceeds 2^24", warmup);
        text += kDigits[b >> 4];
EOF
check "the patterns flag each of the $(wc -l <"$scratch/converts.cpp") conversions this tree once had" \
    [ "$(scan "$scratch/converts.cpp" | wc -l)" -eq "$(wc -l <"$scratch/converts.cpp")" ]
check "the patterns leave codec calls, comments, socket fields and other shifts alone" \
    [ -z "$(scan "$scratch/uses-the-codec.cpp")" ]

mapfile -t files < <(cd "$repo" && git ls-files -- common lessons bench gpu |
    grep -E '\.(cpp|hpp|h|cu|hip)$' | grep -vxE 'common/include/rdmalab/codec\.hpp|common/src/codec\.cpp')
check "C++ sources found outside the codec (${#files[@]})" [ "${#files[@]}" -gt 50 ]
(cd "$repo" && scan "${files[@]}") >"$scratch/found"
check "no byte-order conversion outside the codec" [ ! -s "$scratch/found" ]
sed 's/^/    /' "$scratch/found"
finish
