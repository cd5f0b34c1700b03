// The arithmetic of a recursive-doubling allreduce, apart from the verbs that move its bytes:
// whom a rank swaps its vector with at each step, and, when the rank count is not a power of
// two, which ranks fold their vector into a partner first and get the sum back last. The
// recursive-doubling lesson runs it.
//
// With p the largest power of two not above n: rank r >= p sends its vector to rank r - p (the
// fold) and waits for the sum (the result); ranks below p swap whole vectors with rank
// r XOR 2^k at step k = 0 .. log2(p) - 1, adding what arrives, so that after log2(p) steps each
// holds the sum of all n; those that took a fold send the sum back.
#pragma once

#include <vector>

namespace rdmalab {

enum class DoublingAction {
    kFoldOut,    // write our vector to the partner, which adds it to its own
    kFoldIn,     // add the partner's vector (it sits out the swaps)
    kSwap,       // write our vector to the partner and add the partner's
    kResultOut,  // write the sum to the partner that folded into us
    kResultIn,   // take the sum from the partner we folded into
};

// One step of one rank. `link` names the connection it uses, the same number on both of its
// ends: 0 for a fold and its result, 1 + k for the swaps of step k.
struct DoublingStep {
    DoublingAction action;
    int partner = 0;
    int link = 0;
};

// The largest power of two not above ranks (ranks >= 1).
int doubling_power(int ranks);

// Rank `rank`'s steps in an allreduce over `ranks` ranks, in the order it takes them. Every rank
// uses its links in increasing link order, which is what lets them connect without deadlock.
std::vector<DoublingStep> doubling_schedule(int rank, int ranks);

// How many links a rank can have: the fold's and one per swap step, 1 + log2(p).
int doubling_links(int ranks);

}  // namespace rdmalab
