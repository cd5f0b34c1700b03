// What the exercise checker sees of a reader's program from inside it: every memory
// registration and deregistration, preloaded (LD_PRELOAD) in front of libibverbs. Each call is
// passed on unchanged; a line per call goes to the file $EXERCISE_OBSERVE names:
//   reg <TAB> LENGTH <TAB> ACCESS <TAB> HANDLE     ACCESS: the flags' names joined by |, or none
//   dereg <TAB> HANDLE <TAB> RESULT
// The judge reads them for the least-privilege rule (no flag the operation does not need) and
// for "every registration released before exit".
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

std::mutex log_mutex;
// libibverbs' ibv_reg_mr calls ibv_reg_mr_iova2 itself: one registration is logged once, by the
// outermost call.
thread_local int registering = 0;

void log_line(const std::string& line) {
    const char* path = std::getenv("EXERCISE_OBSERVE");
    if (path == nullptr) return;
    std::lock_guard lock(log_mutex);
    if (FILE* out = std::fopen(path, "a")) {
        std::fputs(line.c_str(), out);
        std::fclose(out);
    }
}

std::string access_names(unsigned access) {
    struct Flag {
        unsigned bit;
        const char* name;
    };
    static constexpr Flag kFlags[] = {{IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
                                      {IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
                                      {IBV_ACCESS_REMOTE_READ, "REMOTE_READ"},
                                      {IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
                                      {IBV_ACCESS_MW_BIND, "MW_BIND"},
                                      {IBV_ACCESS_ZERO_BASED, "ZERO_BASED"},
                                      {IBV_ACCESS_ON_DEMAND, "ON_DEMAND"},
                                      {IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING"}};
    std::string names;
    for (const auto& flag : kFlags) {
        if ((access & flag.bit) == 0) continue;
        if (!names.empty()) names += '|';
        names += flag.name;
        access &= ~flag.bit;
    }
    if (access != 0) names += (names.empty() ? "" : "|") + std::to_string(access);
    return names.empty() ? "none" : names;
}

void log_registration(std::size_t length, unsigned access, const ibv_mr* mr) {
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<const void*>(mr));
    log_line("reg\t" + std::to_string(length) + "\t" + access_names(access) + "\t" +
             (mr != nullptr ? handle : "failed") + "\n");
}

template <typename Function>
Function next(const char* name) {
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

}  // namespace

// verbs.h makes ibv_reg_mr a macro; the functions it calls are these two.
extern "C" {
#undef ibv_reg_mr
ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) {
    static auto real = next<ibv_mr* (*)(ibv_pd*, void*, std::size_t, int)>("ibv_reg_mr");
    ++registering;
    ibv_mr* mr = real(pd, addr, length, access);
    if (--registering == 0) log_registration(length, static_cast<unsigned>(access), mr);
    return mr;
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, std::size_t length, std::uint64_t iova,
                         unsigned access) {
    static auto real =
        next<ibv_mr* (*)(ibv_pd*, void*, std::size_t, std::uint64_t, unsigned)>("ibv_reg_mr_iova2");
    ++registering;
    ibv_mr* mr = real(pd, addr, length, iova, access);
    if (--registering == 0) log_registration(length, access, mr);
    return mr;
}

int ibv_dereg_mr(ibv_mr* mr) {
    static auto real = next<int (*)(ibv_mr*)>("ibv_dereg_mr");
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(mr));
    const int rc = real(mr);
    log_line(std::string("dereg\t") + handle + "\t" + std::to_string(rc) + "\n");
    return rc;
}
}
