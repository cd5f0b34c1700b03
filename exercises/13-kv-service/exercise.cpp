// Exercise 13 — The capstone: a key-value service over RC. You write the server, from this empty
// file. The contract is the task (./rdmalab exercise task 13, or the site's page) and the
// messages' layout is kv.hpp; exercise.hpp's helpers (fail, check, checksum) are yours to use.
// Your program is started as:  ./program ADDRESS PORT  (the address to listen on, and the port)
// Build and judge: ./rdmalab exercise check 13
#include "exercise.hpp"
#include "kv.hpp"

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    std::printf("kv: would listen on %s port %s\n", args.address, args.port);
    exercise::fail("the server is not written yet");
}
