// The control channel: length-prefixed JSON over TCP; see control.hpp.
#include "rdmalab/bench/control.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <poll.h>

#include <array>
#include <cerrno>

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
    const std::uint32_t length = load_be32(length_bytes);
    if (length == 0 || length > kMaxControlMessage)
        fail(fmt::format("the peer sent a control message of {} bytes (limit {})", length,
                         kMaxControlMessage));
    std::string text(length, '\0');
    tcp_.receive_exact(std::as_writable_bytes(std::span(text)), timeout);
    Record message = Record::parse(text.begin(), text.end(), nullptr, false);
    if (message.is_discarded() || !message.is_object())
        fail("the peer sent a control message that is not a JSON object");
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
    pollfd waiting{tcp_.fd(), POLLIN, 0};
    return ::poll(&waiting, 1, 0) > 0;
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

template <typename T>
T field(const Record& message, const char* name) {
    auto found = message.find(name);
    if (found == message.end()) fail(fmt::format("the peer's message lacks '{}'", name));
    try {
        return found->get<T>();
    } catch (const Record::exception&) {
        fail(fmt::format("the peer's '{}' has the wrong type", name));
    }
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
