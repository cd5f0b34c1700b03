// One owning type per libfabric object, as verbs.hpp has for verbs, and the check every
// libfabric call's result goes through. Every object is a fid closed with fi_close; owners
// declared in creation order close in reverse: the endpoint before the CQ and address vector it
// is bound to, and so on. fi_getinfo's lists are freed with fi_freeinfo.
#pragma once

#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cstdio>
#include <memory>
#include <string_view>

namespace rdmalab {

// libfabric calls return 0 (or a count) on success and a negative fabric errno on failure.
inline void check_fi(ssize_t rc, std::string_view call) {
    if (rc < 0) fail(fmt::format("{} failed: {}", call, fi_strerror(static_cast<int>(-rc))));
}

template <typename T>
struct FidCloser {
    void operator()(T* object) const noexcept {
        if (int rc = fi_close(&object->fid))
            fmt::print(stderr, "efa-rdm: fi_close failed: {}\n", fi_strerror(-rc));
    }
};
template <typename T>
using Owned = std::unique_ptr<T, FidCloser<T>>;

struct InfoDeleter {
    void operator()(fi_info* info) const noexcept { fi_freeinfo(info); }
};
using Info = std::unique_ptr<fi_info, InfoDeleter>;

}  // namespace rdmalab
