// Fuzzes the rendezvous lesson's peer messages, compiled from the lesson itself (its main
// renamed): read_control (a client's control message, as the server reads it), then the buffer
// advertisement it carries decoded for the use its tag implies, as the server does; read_fin (the
// server's FIN, as the client reads it). Checks: only rdmalab::Error refuses; an accepted control
// message is exactly kControlBytes with a known tag, and its buffer is the 24 bytes after the tag;
// an accepted FIN is 8 bytes starting "FIN\0".
#include "fuzz.hpp"

int rendezvous_lesson_main(int argc, char** argv);
#define main rendezvous_lesson_main
#include "../../lessons/rendezvous/rendezvous.cpp"
#undef main

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = rdmalab::fuzz::bytes(data, size);
    ControlRequest request;
    if (rdmalab::fuzz::accepts([&] { request = read_control(wire); })) {
        FUZZ_CHECK(size == kControlBytes);
        FUZZ_CHECK(request.tag == kRendezvousTag || request.tag == kRingTag ||
                   request.tag == kDoneTag);
        FUZZ_CHECK(request.buffer.data() == wire.data() + 4 &&
                   request.buffer.size() == kRemoteBufferWireSize);
        FUZZ_CHECK(request.count == load_be32(wire.last(4)));
        if (request.tag != kDoneTag) {
            const BufferUse use =
                request.tag == kRendezvousTag ? BufferUse::kReadSource : BufferUse::kWriteTarget;
            rdmalab::fuzz::accepts([&] { decode_remote_buffer_or_throw(request.buffer, use); });
        }
    }
    std::uint32_t verified = 0;
    if (rdmalab::fuzz::accepts([&] { verified = read_fin(wire); })) {
        FUZZ_CHECK(size == kFinBytes && load_be32(wire.first(4)) == kFinTag);
        FUZZ_CHECK(verified == load_be32(wire.last(4)));
    }
    return 0;
}
