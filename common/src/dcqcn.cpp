// DCQCN's reaction point: see dcqcn.hpp.
#include "rdmalab/dcqcn.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace rdmalab {

namespace {

// "12.5" followed by one of the suffixes (each with its factor), or none (factor 1).
double parse_number(std::string_view name, std::string_view text,
                    std::initializer_list<std::pair<std::string_view, double>> suffixes) {
    double factor = 1;
    for (const auto& [suffix, value] : suffixes) {
        if (text.size() > suffix.size() && text.ends_with(suffix)) {
            text.remove_suffix(suffix.size());
            factor = value;
            break;
        }
    }
    double number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(number) ||
        number <= 0)
        fail(fmt::format("DCQCN parameter {}: '{}' is not a positive number", name, text));
    return number * factor;
}

double parse_rate(std::string_view name, std::string_view text) {
    return parse_number(name, text, {{"k", 1e3}, {"m", 1e6}, {"g", 1e9}});
}

double parse_time(std::string_view name, std::string_view text) {
    return parse_number(name, text, {{"ms", 1e-3}, {"us", 1e-6}, {"s", 1}});
}

}  // namespace

DcqcnParameters parse_dcqcn_parameters(std::string_view text, DcqcnParameters base) {
    DcqcnParameters p = base;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        const auto equals = item.find('=');
        if (equals == std::string_view::npos)
            fail(fmt::format("DCQCN parameter '{}': expected name=value", item));
        const std::string_view name = item.substr(0, equals), value = item.substr(equals + 1);
        if (name == "rate")
            p.line_rate_bps = parse_rate(name, value);
        else if (name == "min")
            p.min_rate_bps = parse_rate(name, value);
        else if (name == "g")
            p.g = parse_number(name, value, {});
        else if (name == "k")
            p.alpha_timer_s = parse_time(name, value);
        else if (name == "t")
            p.rate_timer_s = parse_time(name, value);
        else if (name == "b")
            p.byte_counter_bytes = parse_number(name, value, {{"K", 1024}, {"M", 1 << 20}});
        else if (name == "f")
            p.fast_recovery_steps = static_cast<int>(parse_number(name, value, {}));
        else if (name == "rai")
            p.additive_increase_bps = parse_rate(name, value);
        else if (name == "rhai")
            p.hyper_increase_bps = parse_rate(name, value);
        else if (name == "n")
            p.cnp_interval_s = parse_time(name, value);
        else
            fail(fmt::format(
                "DCQCN parameter '{}': not one of rate, min, g, k, t, b, f, rai, rhai, n", name));
    }
    if (p.g >= 1) fail(fmt::format("DCQCN parameter g: {} is not below 1", p.g));
    if (p.min_rate_bps > p.line_rate_bps)
        fail(fmt::format("DCQCN parameters: min ({} bit/s) is above rate ({} bit/s)",
                         p.min_rate_bps, p.line_rate_bps));
    return p;
}

std::string describe(const DcqcnParameters& p) {
    return fmt::format(
        "rate {:g} Mbit/s, min {:g} Mbit/s, g 1/{:g}, K {:g} ms, T {:g} ms, B {:g} KiB, F {}, "
        "R_AI {:g} kbit/s, R_HAI {:g} kbit/s, N {:g} ms",
        p.line_rate_bps / 1e6, p.min_rate_bps / 1e6, 1 / p.g, p.alpha_timer_s * 1e3,
        p.rate_timer_s * 1e3, p.byte_counter_bytes / 1024, p.fast_recovery_steps,
        p.additive_increase_bps / 1e3, p.hyper_increase_bps / 1e3, p.cnp_interval_s * 1e3);
}

ReactionPoint::ReactionPoint(const DcqcnParameters& parameters, double now_s)
    : parameters_(parameters),
      rate_(parameters.line_rate_bps),
      target_(parameters.line_rate_bps),
      next_alpha_decay_s_(now_s + parameters.alpha_timer_s),
      next_rate_event_s_(now_s + parameters.rate_timer_s) {}

// #region on-cnp
void ReactionPoint::on_cnp(double now_s) {
    advance(now_s);
    ++cnps_;
    target_ = rate_;
    rate_ = std::max(parameters_.min_rate_bps, rate_ * (1 - alpha_ / 2));
    alpha_ = (1 - parameters_.g) * alpha_ + parameters_.g;
    // Everything counts from this CNP: α's decay, the increase timer, the byte counter.
    next_alpha_decay_s_ = now_s + parameters_.alpha_timer_s;
    next_rate_event_s_ = now_s + parameters_.rate_timer_s;
    bytes_since_event_ = 0;
    timer_events_ = 0;
    byte_events_ = 0;
}
// #endregion on-cnp

void ReactionPoint::on_bytes_sent(std::size_t bytes, double now_s) {
    advance(now_s);
    bytes_since_event_ += static_cast<double>(bytes);
    while (bytes_since_event_ >= parameters_.byte_counter_bytes) {
        bytes_since_event_ -= parameters_.byte_counter_bytes;
        ++byte_events_;
        increase();
    }
}

void ReactionPoint::advance(double now_s) {
    while (next_alpha_decay_s_ <= now_s) {
        alpha_ *= 1 - parameters_.g;
        next_alpha_decay_s_ += parameters_.alpha_timer_s;
    }
    while (next_rate_event_s_ <= now_s) {
        next_rate_event_s_ += parameters_.rate_timer_s;
        ++timer_events_;
        increase();
    }
}

ReactionPoint::Stage ReactionPoint::stage() const {
    const int f = parameters_.fast_recovery_steps;
    if (std::max(timer_events_, byte_events_) < f) return Stage::kFastRecovery;
    if (std::min(timer_events_, byte_events_) > f) return Stage::kHyperIncrease;
    return Stage::kAdditiveIncrease;
}

// #region increase
void ReactionPoint::increase() {
    // Fast recovery only halves the distance to the target; the other two stages raise the
    // target first, hyper increase by more each event it stays there.
    switch (stage()) {
        case Stage::kFastRecovery:
            break;
        case Stage::kAdditiveIncrease:
            target_ += parameters_.additive_increase_bps;
            break;
        case Stage::kHyperIncrease:
            target_ += (std::min(timer_events_, byte_events_) - parameters_.fast_recovery_steps) *
                       parameters_.hyper_increase_bps;
            break;
    }
    target_ = std::min(target_, parameters_.line_rate_bps);
    rate_ = std::min((target_ + rate_) / 2, parameters_.line_rate_bps);
}
// #endregion increase

std::string_view stage_name(ReactionPoint::Stage stage) {
    switch (stage) {
        case ReactionPoint::Stage::kFastRecovery:
            return "fast recovery";
        case ReactionPoint::Stage::kAdditiveIncrease:
            return "additive increase";
        case ReactionPoint::Stage::kHyperIncrease:
            return "hyper increase";
    }
    return "?";
}

}  // namespace rdmalab
