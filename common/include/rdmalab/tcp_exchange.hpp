// A TCP connection used only to swap a few bytes before RDMA starts — the out-of-band exchange
// that rdma_cm otherwise does for you (QPN, PSN, GID, address, rkey). Every wait has a limit.
#pragma once

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rdmalab {

class TcpExchange {
  public:
    // Server: listen on port (all addresses, or bind_address) and accept one peer within timeout.
    static TcpExchange accept_one(std::uint16_t port, const std::string& bind_address,
                                  std::chrono::milliseconds timeout);
    // Client: connect to address:port within timeout. A refused connection is tried again for
    // up to startup_grace (the server may still be starting; at most timeout), then reported.
    // Peers that start in any order, as a ring's ranks do, pass their whole timeout.
    static constexpr std::chrono::milliseconds kStartupGrace{3000};
    static TcpExchange connect_to(const std::string& address, std::uint16_t port,
                                  std::chrono::milliseconds timeout,
                                  std::chrono::milliseconds startup_grace = kStartupGrace);
    // One attempt, for a caller that explains a failure (rdma-doctor): the connection, or none
    // with `error` set to the errno it ended with (ETIMEDOUT: nothing answered within timeout;
    // ECONNREFUSED is tried again for startup_grace first, as connect_to does).
    static std::optional<TcpExchange> try_connect(const std::string& address, std::uint16_t port,
                                                  std::chrono::milliseconds timeout,
                                                  std::chrono::milliseconds startup_grace,
                                                  int& error);

    TcpExchange(TcpExchange&& other) noexcept;
    TcpExchange& operator=(TcpExchange&& other) noexcept;
    TcpExchange(const TcpExchange&) = delete;
    TcpExchange& operator=(const TcpExchange&) = delete;
    ~TcpExchange();

    // Sends every byte, or throws.
    void send_all(std::span<const std::byte> bytes);
    // Receives exactly bytes.size() bytes, or throws (peer closed, or no byte for the exchange's
    // timeout — or for `timeout`, where one is given for this receive).
    void receive_exact(std::span<std::byte> bytes);
    void receive_exact(std::span<std::byte> bytes, std::chrono::milliseconds timeout);

    // True once the peer has closed (or reset) the connection; never waits. For a side that is
    // busy with something else — UD sends, which succeed whether or not anyone still listens.
    bool peer_closed() const;
    // True when something waits to be received (bytes, or the end of the stream): a receive
    // would not wait. Never waits itself.
    bool readable() const;

    int fd() const { return fd_; }
    // This end's address and the peer's (getsockname, getpeername): the address the peer reached
    // us at names the port whose GID a RoCE v2 connection to it should use.
    sockaddr_storage local_address() const;
    sockaddr_storage peer_address() const;

  private:
    friend class TcpListener;
    TcpExchange(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
    int fd_ = -1;
    std::chrono::milliseconds timeout_;
};

// A listening socket kept open across many accepts, for a server that takes one client after
// another (accept_one listens afresh each time, and a client arriving between two is refused).
class TcpListener {
  public:
    TcpListener(std::uint16_t port, const std::string& bind_address);
    TcpListener(TcpListener&& other) noexcept;
    TcpListener(const TcpListener&) = delete;
    TcpListener& operator=(const TcpListener&) = delete;
    TcpListener& operator=(TcpListener&&) = delete;
    ~TcpListener();

    // The next client, within timeout (which is also the exchange's timeout), or throws.
    TcpExchange accept(std::chrono::milliseconds timeout);
    // The next client within wait, or none; the exchange then has `timeout`.
    std::optional<TcpExchange> try_accept(std::chrono::milliseconds wait,
                                          std::chrono::milliseconds timeout);

  private:
    int fd_ = -1;
};

// Small control words (big-endian) over the exchange, to keep both sides in step.
void send_word(TcpExchange& tcp, std::uint32_t word);
std::uint32_t receive_word(TcpExchange& tcp);
// Several words in one message (a plan, a report): receive_words<N> reads exactly N of them.
void send_words(TcpExchange& tcp, std::initializer_list<std::uint32_t> words);
void receive_words(TcpExchange& tcp, std::span<std::uint32_t> words);
template <std::size_t N>
std::array<std::uint32_t, N> receive_words(TcpExchange& tcp) {
    std::array<std::uint32_t, N> words{};
    receive_words(tcp, words);
    return words;
}
// Throws, naming what was expected, unless the peer's next word is `expected`.
void expect_word(TcpExchange& tcp, std::uint32_t expected, std::string_view what);

}  // namespace rdmalab
