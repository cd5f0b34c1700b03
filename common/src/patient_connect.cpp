// Connecting to a peer that may not be listening yet (see patient_connect.hpp).
#include "rdmalab/patient_connect.hpp"

#include "rdmalab/error.hpp"

#include <thread>

namespace rdmalab {

TcpExchange connect_with_patience(const std::string& address, std::uint16_t port,
                                  std::chrono::milliseconds timeout) {
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        try {
            return TcpExchange::connect_to(address, port, timeout);
        } catch (const Error&) {
            if (std::chrono::steady_clock::now() >= give_up) throw;  // it never started listening
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
}

}  // namespace rdmalab
