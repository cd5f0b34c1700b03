// The predicted packets of an RC operation (see predicted_packets.hpp).
#include "rdmalab/predicted_packets.hpp"

#include <fmt/core.h>

namespace rdmalab {

std::uint32_t next_psn(std::uint32_t psn, std::uint32_t n) {
    return (psn + n) & 0xffffff;
}

std::string message_part(std::uint32_t i, std::uint32_t n) {
    if (n == 1) return "Only";
    return i == 0 ? "First" : (i + 1 == n ? "Last" : "Middle");
}

std::string format_predicted_packets(std::string_view who,
                                     const std::vector<PredictedPacket>& packets,
                                     std::uint32_t server_qpn, std::uint32_t client_qpn) {
    std::string text;
    for (std::size_t i = 0; i < packets.size();) {
        const PredictedPacket& p = packets[i];
        std::size_t run = 1;
        while (i + run < packets.size() && packets[i + run].opcode == p.opcode &&
               packets[i + run].from_client == p.from_client &&
               packets[i + run].payload == p.payload && packets[i + run].headers.empty() &&
               p.headers.empty())
            ++run;
        if (run < 3) run = 1;
        const std::string psns =
            run == 1
                ? fmt::format("{}", p.psn)
                : fmt::format("{}–{}", p.psn, next_psn(p.psn, static_cast<std::uint32_t>(run - 1)));
        text += fmt::format("{}:   {} {:<34} QP {:#08x} PSN {:>8} {:>5} B  {}\n", who,
                            p.from_client ? "client → server" : "server → client",
                            run == 1 ? p.opcode : fmt::format("{} × {}", p.opcode, run),
                            p.from_client ? server_qpn : client_qpn, psns, p.payload,
                            run == 1 ? p.headers : std::string("each"));
        i += run;
    }
    return text;
}

}  // namespace rdmalab
