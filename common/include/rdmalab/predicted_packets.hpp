// The packets an RC operation must put on the wire, as a prediction to hold a capture against:
// one record per packet, named as tshark's dissector names it (the on-the-wire lesson computes
// them from the path MTU and the PSNs), the 24-bit PSN arithmetic, and the printing of a list of
// them, one line a packet.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab {

// One packet as a capture shows it: tshark's opcode name, its PSN, its payload, its headers.
struct PredictedPacket {
    bool from_client = true;
    std::string opcode;
    std::uint32_t psn = 0;
    std::uint32_t payload = 0;
    std::string headers;
};

// The PSN n packets after psn: PSNs are 24 bits and wrap.
std::uint32_t next_psn(std::uint32_t psn, std::uint32_t n = 1);

// Names packet i of a message of n packets: "Only" alone, else First, Middle…, Last.
std::string message_part(std::uint32_t i, std::uint32_t n);

// One line a packet, each "WHO:   client → server OPCODE  QP … PSN … B  HEADERS" and a newline;
// a run of three or more alike Middle packets takes one line ("× 14", its PSNs as a range).
// A client's packet goes to server_qpn, the server's to client_qpn.
std::string format_predicted_packets(std::string_view who,
                                     const std::vector<PredictedPacket>& packets,
                                     std::uint32_t server_qpn, std::uint32_t client_qpn);

}  // namespace rdmalab
