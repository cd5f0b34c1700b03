// rdma-mesh's figure: one metric's N×N matrix as an SVG heatmap (row: the rank that measured,
// column: its peer), each cell coloured by how far it sits from the typical value and marked
// when the verdict flags it. Plain SVG, like rdma-bench's figures: no library, no fonts fetched.
#pragma once

#include "rdmalab/mesh/verdict.hpp"

#include <string>
#include <vector>

namespace rdmalab::mesh {

struct Heatmap {
    std::string title;                // "RDMA WRITE bandwidth (Gb/s), 64 KiB"
    std::string caption;              // where and when (one or two lines, '\n' between)
    std::vector<std::string> labels;  // per rank: "1 198.51.100.2"
    const Metric* metric = nullptr;
    double typical = 0;
    double threshold = 0;
    std::vector<std::pair<int, int>> failed;  // pairs drawn as failed (both cells)
    // The pairs the run set out to measure (empty: all): the others are drawn as not measured,
    // like the diagonal, not as failed.
    std::vector<std::pair<int, int>> planned;
};

std::string render_heatmap(const Heatmap& heatmap);

}  // namespace rdmalab::mesh
