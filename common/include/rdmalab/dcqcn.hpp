// DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015) as a plain state machine: it is told when a CNP arrives, how many bytes were
// sent and what time it is, and answers with the rate to send at. A NIC runs this in hardware
// per QP; Soft-RoCE has none, so the dcqcn lesson runs it above verbs and paces its posts by it.
// It is a MODEL: the paper's algorithm with its parameters scaled to the lab's speeds (below).
// Time is in seconds (any origin), rates in bits per second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rdmalab {

// The paper's parameters for a 40 Gbit/s NIC, and this model's defaults for the lab. The lab is
// about 1,000 times slower (a 20 Mbit/s bottleneck, a 40 Mbit/s sender) and its round trip about
// 100 times longer (emulated guests: milliseconds, not microseconds), so rates are divided by
// 1,000 and times multiplied by 100; the byte counter keeps its share of the timer's period. The
// names are the paper's.
struct DcqcnParameters {
    double line_rate_bps = 40e6;    // R_C starts here and never exceeds it (paper: 40 Gbit/s)
    double min_rate_bps = 100e3;    // a floor, so one flow is never stopped outright
    double g = 1.0 / 256;           // α's gain (paper: 1/256)
    double alpha_timer_s = 5.5e-3;  // K: α decays after this long without a CNP (paper: 55 µs)
    double rate_timer_s = 5.5e-3;   // T: a rate-increase event this often (paper: 55 µs)
    double byte_counter_bytes = 1 << 20;  // B: and one per this many bytes sent (paper: 10 MB)
    int fast_recovery_steps = 5;          // F: events before additive increase (paper: 5)
    double additive_increase_bps = 40e3;  // R_AI (paper: 40 Mbit/s)
    double hyper_increase_bps = 400e3;    // R_HAI: ten times R_AI, this model's choice
    double cnp_interval_s = 5e-3;  // N: the notification point's least gap between CNPs of one
                                   // flow (paper: 50 µs)
};

// "name=value,name=value" over base: names rate, min, g, k, t, b, f, rai, rhai, n (rates in bit/s
// with an optional k/m/g suffix, times in seconds with an optional ms/us suffix, b in bytes).
// Throws Error naming the bad part.
DcqcnParameters parse_dcqcn_parameters(std::string_view text, DcqcnParameters base = {});
// One line naming every parameter's value, for a program's output.
std::string describe(const DcqcnParameters& parameters);

class ReactionPoint {
  public:
    enum class Stage { kFastRecovery, kAdditiveIncrease, kHyperIncrease };

    ReactionPoint(const DcqcnParameters& parameters, double now_s);

    // A CNP for this flow: remember the rate as the target, cut the rate by α/2, raise α, and
    // start counting increase events afresh.
    void on_cnp(double now_s);
    // Bytes just handed to the NIC: the byte counter's events.
    void on_bytes_sent(std::size_t bytes, double now_s);
    // Runs the timers (α's decay, the rate-increase timer) up to now_s.
    void advance(double now_s);

    double rate_bps() const { return rate_; }
    double target_bps() const { return target_; }
    double alpha() const { return alpha_; }
    std::uint64_t cnps() const { return cnps_; }
    Stage stage() const;

  private:
    void increase();  // one rate-increase event, timer's or byte counter's

    DcqcnParameters parameters_;
    double rate_;       // R_C
    double target_;     // R_T
    double alpha_ = 1;  // α starts at 1: the first CNP halves the rate
    double next_alpha_decay_s_;
    double next_rate_event_s_;
    double bytes_since_event_ = 0;
    int timer_events_ = 0;  // since the last CNP
    int byte_events_ = 0;
    std::uint64_t cnps_ = 0;
};

std::string_view stage_name(ReactionPoint::Stage stage);

}  // namespace rdmalab
