// The control channel: length-prefixed JSON over TCP; see control.hpp.
#include "rdmalab/bench/control.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>
#include <type_traits>

namespace rdmalab::bench {

void ControlChannel::send(const Record& message) {
    std::string text = message.dump();
    if (text.size() > kMaxControlMessage)
        fail(fmt::format("control message of {} bytes is too large", text.size()));
    std::array<std::byte, 4> length{};
    store_be32(length, static_cast<std::uint32_t>(text.size()));
    tcp_.send_all(length);
    tcp_.send_all(std::as_bytes(std::span(text)));
}

Record ControlChannel::receive(std::chrono::milliseconds timeout) {
    // One limit for the whole message: this receive's (a phase may take long), not the
    // exchange's own.
    std::array<std::byte, 4> length_bytes{};
    try {
        tcp_.receive_exact(length_bytes, timeout);
    } catch (const Error& e) {
        fail(fmt::format("control connection: {}", e.what()));
    }
    std::string text(decode_control_length(length_bytes), '\0');
    tcp_.receive_exact(std::as_writable_bytes(std::span(text)), timeout);
    return decode_control_message(text);
}

std::uint32_t decode_control_length(std::span<const std::byte> prefix) {
    const std::uint32_t length = load_be32(prefix);
    if (length == 0 || length > kMaxControlMessage)
        fail(fmt::format("the peer sent a control message of {} bytes (limit {})", length,
                         kMaxControlMessage));
    return length;
}

Record decode_control_message(std::string_view text) {
    Record message = parse_json(text, "the peer's control message");
    if (!message.is_object()) fail("the peer sent a control message that is not a JSON object");
    if (auto error = message.find("error"); error != message.end())
        fail(error->is_string() ? "peer: " + error->get<std::string>() : "peer reported an error");
    return message;
}

Record ControlChannel::expect(const std::string& type, std::chrono::milliseconds timeout) {
    Record message = receive(timeout);
    auto got = message.find("type");
    if (got == message.end() || !got->is_string() || got->get<std::string>() != type)
        fail(fmt::format("expected a '{}' message from the peer, got {}", type,
                         message.dump().substr(0, 80)));
    return message;
}

void ControlChannel::send_error(const std::string& why) noexcept {
    try {
        send(Record{{"error", why}});
    } catch (...) {
        // The peer may already be gone; the local error is reported by the caller anyway.
    }
}

bool ControlChannel::readable() const {
    return tcp_.readable();
}

std::string to_hex(std::span<const std::byte> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    text.reserve(bytes.size() * 2);
    for (std::byte byte : bytes) {
        const auto b = std::to_integer<unsigned>(byte);
        text += kDigits[b >> 4];
        text += kDigits[b & 15];
    }
    return text;
}

std::vector<std::byte> from_hex(const std::string& text) {
    auto digit = [&](char c) -> std::uint8_t {
        if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
        if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
        fail(fmt::format("the peer sent '{}', which is not lower-case hex", text.substr(0, 40)));
    };
    if (text.size() % 2 != 0) fail("the peer sent hex text of odd length");
    std::vector<std::byte> bytes(text.size() / 2);
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<std::byte>(digit(text[2 * i]) << 4 | digit(text[2 * i + 1]));
    return bytes;
}

namespace {

// Whether a JSON value is exactly a T: nlohmann's get<T>() would turn 1.5 into 1, -1 into
// 2^64 - 1 and 2^32 + 1 into 1 for an unsigned T (and a float too large for T is undefined
// behaviour), so a peer's out-of-range number would pass as another, valid one.
template <typename T>
bool holds(const Record& value) {
    if constexpr (std::is_same_v<T, bool>) {
        return value.is_boolean();
    } else if constexpr (std::is_unsigned_v<T>) {
        if (value.is_number_unsigned())
            return value.get<std::uint64_t>() <= std::numeric_limits<T>::max();
        return value.is_number_integer() && value.get<std::int64_t>() >= 0 &&
               static_cast<std::uint64_t>(value.get<std::int64_t>()) <=
                   std::numeric_limits<T>::max();
    } else if constexpr (std::is_same_v<T, double>) {
        return value.is_number();
    } else if constexpr (std::is_same_v<T, std::string>) {
        return value.is_string();
    } else if constexpr (std::is_same_v<T, Record>) {
        return true;
    } else {  // a std::vector
        return value.is_array() && std::ranges::all_of(value, [](const Record& item) {
                   return holds<typename T::value_type>(item);
               });
    }
}

}  // namespace

template <typename T>
T field(const Record& message, const char* name) {
    auto found = message.find(name);
    if (found == message.end()) fail(fmt::format("the peer's message lacks '{}'", name));
    if (!holds<T>(*found)) {
        if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
            fail(fmt::format("the peer's '{}' is not an integer in 0..{}", name,
                             std::numeric_limits<T>::max()));
        fail(fmt::format("the peer's '{}' has the wrong type", name));
    }
    return found->get<T>();
}

template std::uint64_t field<std::uint64_t>(const Record&, const char*);
template std::uint32_t field<std::uint32_t>(const Record&, const char*);
template double field<double>(const Record&, const char*);
template bool field<bool>(const Record&, const char*);
template std::string field<std::string>(const Record&, const char*);
template std::vector<std::uint64_t> field<std::vector<std::uint64_t>>(const Record&, const char*);
template std::vector<std::string> field<std::vector<std::string>>(const Record&, const char*);
template Record field<Record>(const Record&, const char*);

}  // namespace rdmalab::bench
