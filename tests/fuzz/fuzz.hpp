// What the fuzz targets share: the input as bytes or text, FUZZ_CHECK (a broken contract aborts,
// so libFuzzer keeps the input and reports it), and the two ways a parser may refuse input.
#pragma once

#include "rdmalab/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <variant>

namespace rdmalab::fuzz {

inline std::span<const std::byte> bytes(const std::uint8_t* data, std::size_t size) {
    return std::as_bytes(std::span(data, size));
}
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void broken(const char* what, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: contract broken: %s\n", file, line, what);
    std::abort();
}

// Runs parse(). True if it accepted the input; false if it refused it with rdmalab::Error, which
// must say why. Any other exception escaping is a broken contract.
template <typename Parse>
bool accepts(Parse&& parse) {
    try {
        parse();
        return true;
    } catch (const Error& error) {
        if (std::string_view(error.what()).empty())
            broken("an Error without a message", __FILE__, __LINE__);
        return false;
    } catch (const std::exception& other) {
        std::fprintf(stderr, "contract broken: %s escaped: %s\n", typeid(other).name(),
                     other.what());
        std::abort();
    } catch (...) {
        broken("an exception that is not std::exception escaped", __FILE__, __LINE__);
    }
}

// A parser's answer: the value, or the reason it refused, which must not be empty.
template <typename T>
bool holds_value(const std::variant<T, std::string>& answer) {
    if (const auto* reason = std::get_if<std::string>(&answer)) {
        if (reason->empty()) broken("a refusal without a reason", __FILE__, __LINE__);
        return false;
    }
    return true;
}

}  // namespace rdmalab::fuzz

#define FUZZ_CHECK(condition) \
    ((condition) ? void(0) : ::rdmalab::fuzz::broken(#condition, __FILE__, __LINE__))
