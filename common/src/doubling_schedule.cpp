// The recursive-doubling schedule (see doubling_schedule.hpp).
#include "rdmalab/doubling_schedule.hpp"

namespace rdmalab {

int doubling_power(int ranks) {
    int power = 1;
    while (power * 2 <= ranks) power *= 2;
    return power;
}

int doubling_links(int ranks) {
    int links = 1;
    for (int power = doubling_power(ranks); power > 1; power /= 2) ++links;
    return links;
}

std::vector<DoublingStep> doubling_schedule(int rank, int ranks) {
    const int power = doubling_power(ranks);
    if (rank >= power)
        return {{DoublingAction::kFoldOut, rank - power, 0},
                {DoublingAction::kResultIn, rank - power, 0}};
    std::vector<DoublingStep> steps;
    const bool folded_into = rank + power < ranks;
    if (folded_into) steps.push_back({DoublingAction::kFoldIn, rank + power, 0});
    int link = 1;
    for (int distance = 1; distance < power; distance *= 2)
        steps.push_back({DoublingAction::kSwap, rank ^ distance, link++});
    if (folded_into) steps.push_back({DoublingAction::kResultOut, rank + power, 0});
    return steps;
}

}  // namespace rdmalab
