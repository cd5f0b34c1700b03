// Out-of-band TCP exchange: see tcp_exchange.hpp.
#include "rdmalab/tcp_exchange.hpp"

#include "rdmalab/codec.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace rdmalab {

namespace {

using std::chrono::milliseconds;

// Owns a socket until released; closes it on every other path.
struct Socket {
    int fd;
    explicit Socket(int family) : fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        check_errno(fd >= 0, "socket");
    }
    ~Socket() {
        if (fd >= 0) close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

// Waits until fd is ready for `events`, or throws after timeout.
void wait_ready(int fd, short events, milliseconds timeout, const char* what) {
    pollfd ready{.fd = fd, .events = events, .revents = 0};
    int rc;
    do rc = poll(&ready, 1, static_cast<int>(timeout.count()));
    while (rc < 0 && errno == EINTR);
    check_errno(rc >= 0, "poll");
    if (rc == 0) fail(fmt::format("{}: nothing within {:.1f} s", what, timeout.count() / 1000.0));
}

sockaddr_storage address_or_fail(const std::string& text, std::uint16_t port) {
    auto address = parse_ip_address(text, port);
    if (!address) fail(fmt::format("'{}' is not a numeric IP address", text));
    return *address;
}

// getsockname or getpeername (the same signature), checked under its own name.
sockaddr_storage socket_address(int fd, int (*call)(int, sockaddr*, socklen_t*), const char* name) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    check_errno(call(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0, name);
    return address;
}

}  // namespace

TcpExchange TcpExchange::accept_one(std::uint16_t port, const std::string& bind_address,
                                    milliseconds timeout) {
    TcpListener listener(port, bind_address);
    return listener.accept(timeout);
}

TcpListener::TcpListener(std::uint16_t port, const std::string& bind_address) {
    sockaddr_storage local = address_or_fail(bind_address.empty() ? "0.0.0.0" : bind_address, port);
    Socket listener(local.ss_family);
    int yes = 1;
    setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(listener.fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
        fail(fmt::format("bind(TCP port {}) failed: {}{}", port, std::strerror(errno),
                         errno == EADDRINUSE ? " (is another server running on this port?)" : ""));
    check_errno(listen(listener.fd, 8) == 0, "listen");
    fmt::print("server: listening on * port {} (TCP, for the out-of-band exchange)\n", port);
    std::fflush(stdout);
    fd_ = listener.release();
}

TcpListener::TcpListener(TcpListener&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

TcpListener::~TcpListener() {
    if (fd_ >= 0) close(fd_);
}

std::optional<TcpExchange> TcpListener::try_accept(milliseconds wait, milliseconds timeout) {
    pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
    int rc;
    do rc = poll(&ready, 1, static_cast<int>(wait.count()));
    while (rc < 0 && errno == EINTR);
    check_errno(rc >= 0, "poll");
    if (rc == 0) return std::nullopt;
    int peer = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    check_errno(peer >= 0, "accept");
    int yes = 1;
    setsockopt(peer, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    return TcpExchange(peer, timeout);
}

TcpExchange TcpListener::accept(milliseconds timeout) {
    auto peer = try_accept(timeout, timeout);
    if (!peer)
        fail(
            fmt::format("waiting for a client: nothing within {:.1f} s", timeout.count() / 1000.0));
    return std::move(*peer);
}

std::optional<TcpExchange> TcpExchange::try_connect(const std::string& address, std::uint16_t port,
                                                    milliseconds timeout,
                                                    milliseconds startup_grace, int& error) {
    sockaddr_storage remote = address_or_fail(address, port);
    const socklen_t length =
        remote.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    // A server started at the same moment may not listen yet (both sides of a lab command, or
    // of a job, start together): a refused connection is tried again for a short while.
    const auto give_up = std::chrono::steady_clock::now() + std::min(timeout, startup_grace);
    for (;;) {
        Socket connection(remote.ss_family);
        // Non-blocking connect, so the wait for an answer has a limit.
        int flags = fcntl(connection.fd, F_GETFL);
        fcntl(connection.fd, F_SETFL, flags | O_NONBLOCK);
        error = 0;
        if (connect(connection.fd, reinterpret_cast<sockaddr*>(&remote), length) != 0) {
            error = errno;
            if (error == EINPROGRESS) {
                pollfd ready{.fd = connection.fd, .events = POLLOUT, .revents = 0};
                int rc;
                do rc = poll(&ready, 1, static_cast<int>(timeout.count()));
                while (rc < 0 && errno == EINTR);
                check_errno(rc >= 0, "poll");
                socklen_t size = sizeof error;
                if (rc == 0)
                    error = ETIMEDOUT;
                else
                    getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &error, &size);
            }
        }
        if (error == ECONNREFUSED && std::chrono::steady_clock::now() < give_up) {
            std::this_thread::sleep_for(milliseconds(100));
            continue;
        }
        if (error != 0) return std::nullopt;
        fcntl(connection.fd, F_SETFL, flags);
        int yes = 1;
        setsockopt(connection.fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        return TcpExchange(connection.release(), timeout);
    }
}

TcpExchange TcpExchange::connect_to(const std::string& address, std::uint16_t port,
                                    milliseconds timeout, milliseconds startup_grace) {
    int error = 0;
    if (auto connection = try_connect(address, port, timeout, startup_grace, error))
        return std::move(*connection);
    if (error == ETIMEDOUT)
        fail(fmt::format("connecting to {} port {}: nothing within {:.1f} s", address, port,
                         timeout.count() / 1000.0));
    fail(fmt::format("connect to {} port {} failed: {}{}", address, port, std::strerror(error),
                     error == ECONNREFUSED ? " (is the server running?)" : ""));
}

sockaddr_storage TcpExchange::local_address() const {
    return socket_address(fd_, getsockname, "getsockname");
}

sockaddr_storage TcpExchange::peer_address() const {
    return socket_address(fd_, getpeername, "getpeername");
}

TcpExchange::TcpExchange(TcpExchange&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), timeout_(other.timeout_) {}

TcpExchange& TcpExchange::operator=(TcpExchange&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        timeout_ = other.timeout_;
    }
    return *this;
}

TcpExchange::~TcpExchange() {
    if (fd_ >= 0) close(fd_);
}

void TcpExchange::send_all(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
        wait_ready(fd_, POLLOUT, timeout_, "sending to the peer");
        ssize_t sent = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        check_errno(sent > 0, "send");
        bytes = bytes.subspan(static_cast<std::size_t>(sent));
    }
}

void TcpExchange::receive_exact(std::span<std::byte> bytes) {
    receive_exact(bytes, timeout_);
}

void TcpExchange::receive_exact(std::span<std::byte> bytes, milliseconds timeout) {
    const std::size_t wanted = bytes.size();
    while (!bytes.empty()) {
        wait_ready(fd_, POLLIN, timeout, "waiting for the peer");
        ssize_t got = recv(fd_, bytes.data(), bytes.size(), 0);
        if (got < 0 && errno == EINTR) continue;
        check_errno(got >= 0, "recv");
        if (got == 0)
            fail(fmt::format("the peer closed the connection after {} of {} bytes",
                             wanted - bytes.size(), wanted));
        bytes = bytes.subspan(static_cast<std::size_t>(got));
    }
}

bool TcpExchange::peer_closed() const {
    pollfd entry{.fd = fd_, .events = POLLIN | POLLRDHUP, .revents = 0};
    int ready = poll(&entry, 1, 0);
    if (ready < 0 && errno == EINTR) return false;
    check_errno(ready >= 0, "poll");
    if (ready == 0) return false;
    if (entry.revents & (POLLHUP | POLLRDHUP | POLLERR)) return true;
    // Readable: data the caller will read later, or the end of the stream. Peek to tell them apart.
    std::byte next{};
    ssize_t got = recv(fd_, &next, 1, MSG_PEEK | MSG_DONTWAIT);
    return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

bool TcpExchange::readable() const {
    pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
    return poll(&ready, 1, 0) > 0;
}

// ---- Control words

void send_word(TcpExchange& tcp, std::uint32_t word) {
    std::array<std::byte, 4> bytes{};
    store_be32(bytes, word);
    tcp.send_all(bytes);
}

std::uint32_t receive_word(TcpExchange& tcp) {
    std::array<std::byte, 4> bytes{};
    tcp.receive_exact(bytes);
    return load_be32(bytes);
}

void send_words(TcpExchange& tcp, std::initializer_list<std::uint32_t> words) {
    std::vector<std::byte> bytes;
    ByteWriter out(bytes, "the control words");
    for (std::uint32_t word : words) out.u32(word);
    tcp.send_all(bytes);
}

void receive_words(TcpExchange& tcp, std::span<std::uint32_t> words) {
    std::vector<std::byte> bytes(4 * words.size());
    tcp.receive_exact(bytes);
    ByteReader in(bytes, "the peer's control words");
    for (std::uint32_t& word : words) word = in.u32();
}

void expect_word(TcpExchange& tcp, std::uint32_t expected, std::string_view what) {
    std::uint32_t word = 0;
    try {
        word = receive_word(tcp);
    } catch (const Error& e) {
        fail(fmt::format("waiting for {}: {}", what, e.what()));
    }
    if (word != expected)
        fail(fmt::format("expected {} ({:#x}) from the peer, got {:#x}", what, expected, word));
}

}  // namespace rdmalab
