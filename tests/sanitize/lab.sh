#!/usr/bin/env bash
# Inside one lab boot, for ./rdmalab test --sanitize: the lesson and rdma-bench tests built with
# ASan and UBSan, the whole fault matrix on those binaries, then lessons under valgrind's
# memcheck (the default build's memcheck.* tests: memcheck needs no instrumentation and cannot
# run an ASan binary): six in CI, every one with RDMALAB_MEMCHECK=all.
#   tests/sanitize/lab.sh SANITIZE_BUILD_DIR DEFAULT_BUILD_DIR RESULTS_DIR [PARTS]
# PARTS: which of lab-tests, fault-matrix, memcheck to run, comma-separated (default: all; CI's
# shards asan and faults each run some: ./rdmalab shards).
# Each part's outcome goes to RESULTS_DIR (ctest.log, faults.tsv, memcheck.log, valgrind/), the sanitizers'
# reports to the files ASAN_OPTIONS / UBSAN_OPTIONS name (./rdmalab counts them afterwards).
set -uo pipefail
san=${1:?usage: lab.sh SANITIZE_BUILD_DIR DEFAULT_BUILD_DIR RESULTS_DIR}
default=${2:?usage}
results=${3:?usage}
parts=${4:-all}
runs() { [ "$parts" = all ] || [[ ,$parts, == *,$1,* ]]; }  # runs PART: this boot runs PART
for part in ${parts//,/ }; do
    case $part in all|lab-tests|fault-matrix|memcheck) ;; *) echo "sanitize: no part '$part' (lab-tests, fault-matrix, memcheck)" >&2; exit 2 ;; esac
done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
# Both builds' bin/ through the lab's cached, read-only view of the repository (lab/guest-init.sh):
# nothing rebuilds them during this boot, and each of the pass's several hundred process starts
# then reads its binary from the guest's page cache, not over 9p (an ASan lesson's `--help`:
# 0.7-1.0 s from the cache, 1.1-1.6 s over the share, measured in the lab).
repo=$(cd "$here/../.." && pwd)
for build in "$san" "$default"; do
    view=/run/rdmalab-repo-view/${build#"$repo"/}/bin
    if [ -d "$view" ] && [ "${build#"$repo"/}" != "$build" ]; then
        mount --bind "$view" "$build/bin" || { echo "sanitize: binding $view over $build/bin failed" >&2; exit 1; }
    fi
done
# Tests that bound a wall-clock time scale it by this (ASan, under emulation, runs 2-3x slower).
export RDMALAB_TIME_SCALE=3
# rdma-bench records are read with the default build's rdma-bench (tests/checks.sh).
export RDMALAB_RECORD_READER=$default/bin/rdma-bench
rc=0
# took WHAT STEP: how long WHAT took, printed, and appended to RDMALAB_STEP_TIMES where it is set.
took() {
    echo "sanitize: $1 took $((SECONDS - start)) s"
    [ -z "${RDMALAB_STEP_TIMES:-}" ] || printf 'sanitize.%s\t%s\n' "$2" $((SECONDS - start)) >>"$RDMALAB_STEP_TIMES"
    start=$SECONDS
}
start=$SECONDS
# The lesson and bench tests: every lab test but those ./rdmalab says this pass leaves out
# (RDMALAB_UNSANITIZED_LAB_TESTS: the README's commands, the compact fault matrix, the GPU
# ladder's host-memory probe, rdma-mesh under mpirun; ./rdmalab says why). In CI they run only
# here: ./rdmalab test --ci leaves them to this pass.
unsanitized=${RDMALAB_UNSANITIZED_LAB_TESTS:?./rdmalab test --sanitize sets RDMALAB_UNSANITIZED_LAB_TESTS}
if runs lab-tests; then
    ctest --test-dir "$san" --output-on-failure --no-tests=error -L lab -E "$unsanitized" \
        --output-junit "$results/lab.junit.xml" 2>&1 | tee "$results/ctest.log" || rc=1
    took "lesson and bench tests" lab-tests
fi
# The whole fault matrix (CTest's faults.matrix) on the sanitized binaries.
if runs fault-matrix; then
    RDMALAB_FAULTS_TSV=$results/faults.tsv ctest --test-dir "$san" --output-on-failure --no-tests=error \
        -L faults-guest --output-junit "$results/faults.junit.xml" 2>&1 | tee "$results/faults.log" || rc=1
    took "the fault matrix" fault-matrix
fi
runs memcheck || exit $rc
# Lessons under memcheck: a CTest test each (label memcheck, tests/sanitize/memcheck.sh), two at
# a time (a lesson's server and client mostly take turns: one memcheck run leaves one of the
# guest's two CPUs idle). Their logs and summary.tsv go to results/valgrind.
# RDMALAB_MEMCHECK=all: every lesson (about 17 minutes: ./rdmalab test --sanitize --full,
# which --record needs). Otherwise, in CI, the six whose code the others share, so that what
# ASan cannot see — a read of uninitialised memory — is still checked on every common path:
# rdma_cm connection and private data (rdma-write), control words and receives (send-recv),
# several clients and atomics (atomics), the hand-made QP bring-up over TCP (qp-state-machine),
# UD datagrams (ud), and rdma-bench's engine. Each lesson's own code runs under ASan and UBSan
# above, in its lab test and in the fault matrix.
memcheck_regex='^memcheck\.(rdma-write|send-recv|atomics|qp-state-machine|ud|rdma-bench)$'
[ "${RDMALAB_MEMCHECK:-}" = all ] && memcheck_regex='^memcheck\.'
rm -rf "$results/valgrind"
RDMALAB_MEMCHECK_OUT=$results/valgrind ctest --test-dir "$default" --output-on-failure --no-tests=error \
    -L memcheck -R "$memcheck_regex" -j 2 --output-junit "$results/memcheck.junit.xml" 2>&1 |
    tee "$results/memcheck.log" || rc=1
took memcheck memcheck
exit $rc
