# Lab test: rdma-bench's --mem/--path where there is no GPU. Every record names each side's memory
# and registration path; the staging path's RDMA half (the pinned bounce buffer through rxe)
# moves verified data for every operation, atomics included, one side or both, with its copies
# once per phase or per message (counted where each side has the moment); the ladder's probes
# run against rxe and are printed once; --mem cuda/rocm without a GPU is one line and exit 1,
# before the peer is involved; bad values exit 2. (The GPU copies and kernels need a GPU.)
source "$(dirname "$0")/lib.sh" "$@"

# copies_are FILE SIDE "MODE:COUNT ...": SIDE's staging copies, record by record (none,
# per-phase or per-message: "per phase" in the record), and how many ran inside the measured
# phase's timed loop.
copies_are() {
    local modes counts got="" i
    record_values "$1" "memory/$2/staging_copies" && mapfile -t modes <"$scratch/record-values" &&
        record_values "$1" "memory/$2/copies_in_timed_loop" && mapfile -t counts <"$scratch/record-values" || return 1
    for i in "${!modes[@]}"; do got+="${got:+ }${modes[$i]// /-}:${counts[$i]}"; done
    [ "$got" = "$3" ] || { echo "    $2 copies: $got"; return 1; }
}

# side_path_is FILE SIDE PATH N: N records say SIDE's buffer was registered via PATH (a record's
# "memory" object holds "client" and "server", each with memory, path and where).
side_path_is() { records_match "$4" "$1" "memory/$2/path" "^$3\$"; }

part host
# ---- Host memory, registered as it is: both sides' path in every record.
bench_ok host 4 -- --op write,read,send,fetch-add -n 200 -s 4096
host=$scratch/host/r.json
check "host: 4 records say the client's buffer is host memory" records_match 4 "$host" config/memory '^host$'
check "host: … and the server's (in the configuration)" records_match 4 "$host" config/server_memory '^host$'
check "host: the client's path is in every record" side_path_is "$host" client host 4
check "host: the server's path is in every record" side_path_is "$host" server host 4
check "host: no staging note without staging" records_match 4 "$host" memory/note '^null$'
check "host: the data was verified (write, read, send)" records_match 3 "$host" result/verified '^true$'
check "host: the CSV has the path columns" has_line "$scratch/host/r.csv" 'memory\.client\.path,.*memory\.server\.path'
for side in client server; do
    check "host: $side prints the dma-buf probe against rxe once" count_is 1 "$scratch/host/$side.out" \
        "^$side: dma-buf: unsupported by provider rxe \\(ibv_reg_dmabuf_mr: EOPNOTSUPP"
    check "host: $side prints the peer-memory probe once" count_is 1 "$scratch/host/$side.out" "^$side: peer memory: absent"
    check "host: $side says where its buffer is" count_is 1 "$scratch/host/$side.out" \
        "^$side: buffer in host memory, registered via host$"
done

part staging
# ---- Staging on both sides: every operation through the bounce buffers, verified.
bench_ok staging 6 --path staging -- --path staging --op write,read,send,write-imm,fetch-add,cmp-swap -n 300 -s 8192
staging=$scratch/staging/r.json
check "staging: the client's path is staging in every record" side_path_is "$staging" client staging 6
check "staging: the server's too" side_path_is "$staging" server staging 6
check "staging: the records say both sides copy outside the timed loop" records_match 6 "$staging" memory/note \
    '^client staging: copies once per phase, outside the timed loop: the rates are the RDMA half .*; server staging: copies once per phase'
check "staging: data verified after the copy out of the bounce buffer (write, read, send, write-imm)" \
    records_match 4 "$staging" result/verified '^true$'
check "staging: fetch-add's counter, read back through the bounce buffer, equals the 300 adds" \
    record_has "$staging" result/atomic_counter '^300$'
check "staging: RC lost nothing" records_match 2 "$staging" result/receiver/lost '^0$'
check "staging: the server registered a pinned bounce buffer" has_line "$scratch/staging/server.out" \
    '^server: path: staging: [0-9]+ bytes of pinned host memory .* registered with ibv_reg_mr'
check "staging: the server says so once" count_is 1 "$scratch/staging/server.out" \
    '^server: buffer in host memory, registered via staging, staging copies per phase$'

part staging-lat
# Staging on one side only, in both latency ping-pongs that GPU memory may use, and write's.
bench_ok staging-lat 3 -- --path staging --op write-imm,send,write -m lat -n 200 -s 64
lat=$scratch/staging-lat/r.json
check "staging-lat: the client's path is staging in all 3" side_path_is "$lat" client staging 3
check "staging-lat: the server's is host in all 3" side_path_is "$lat" server host 3
check "staging-lat: 3 latency records" records_match 3 "$lat" result/latency/median_us '^[0-9.e+-]+$'

part per-message
# Per-message staging: one copy per message inside the timed loop, where a side has the moment —
# the initiator before each message it sends or after each READ completes, the receiver after each
# receive, both ends of a send ping-pong — and once per phase where it has none (a write's or a
# READ's target). The records count the copies each side made in the measured phase.
bench_ok per-message 3 --path staging --staging-copies per-message -- --path staging --staging-copies per-message \
    --op write-imm,read,write -n 300 -s 4096
pm=$scratch/per-message/r.json
check "per-message: the client copied once per message in all three (write-imm, read, write)" \
    copies_are "$pm" client "per-message:300 per-message:300 per-message:300"
check "per-message: the server once per receive (write-imm), per phase as a READ's and a write's target" \
    copies_are "$pm" server "per-message:300 per-phase:0 per-phase:0"
check "per-message: the note says the rates include the copies" record_has "$pm" memory/note \
    '^client staging: 300 copies inside the timed loop, one per message: the rates include them; server staging: 300 copies'
check "per-message: data verified (write-imm, read, write)" records_match 3 "$pm" result/verified '^true$'
check "per-message: the server says when its copies run, each time that changes" count_is 2 "$scratch/per-message/server.out" \
    '^server: buffer in host memory, registered via staging, staging copies per (message|phase)$'
bench_ok per-message-lat 1 --path staging --staging-copies per-message -- --path staging --staging-copies per-message \
    --op send -m lat -n 200 -s 64
check "per-message-lat: each end copies its source out and the reply in, every round trip" \
    copies_are "$scratch/per-message-lat/r.json" client "per-message:400"
check "per-message-lat: the server too" copies_are "$scratch/per-message-lat/r.json" server "per-message:400"
expect_failure staging-copies-bad 2 "--staging-copies: 'always' is not per-phase or per-message" \
    "$bin/rdma-bench" client "$addr" --staging-copies always

part staging-ud
# UD receives (a GRH before the payload) into a staged buffer, counted and verified.
bench_ok staging-ud 1 --path staging -- --op send -c UD -s 1024 -n 300
check "staging-ud: the bytes after the GRH were verified" record_has "$scratch/staging-ud/r.json" result/verified '^true$'

part no-gpu
# ---- No GPU here: one line naming what is missing, exit 1, before any connection.
cuda_missing='^rdma-bench: --mem cuda: (no CUDA driver \(libcuda\.so\.1 not found\)|this build has no CUDA backend|cudaGetDeviceCount failed: cudaErrorNoDevice)'
expect_failure cuda-client 1 "$cuda_missing" "$bin/rdma-bench" client "$addr" --mem cuda --op write-imm
expect_failure cuda-server 1 "$cuda_missing" "$bin/rdma-bench" server --mem cuda:1 --accept-timeout 2
expect_failure rocm-client 1 '^rdma-bench: --mem rocm: (hipGetDeviceCount failed: hipErrorNoDevice|this build has no HIP backend)' \
    "$bin/rdma-bench" client "$addr" --mem rocm

part bad-values
# ---- Bad values: one line, exit 2.
expect_failure mem-unknown 2 "^rdma-bench: --mem: 'gpu' is not a memory kind \(host, cuda\[:N\], rocm\[:N\]\)" \
    "$bin/rdma-bench" client "$addr" --mem gpu
expect_failure path-unknown 2 "--path: 'bounce' is not a registration path" "$bin/rdma-bench" server --path bounce
expect_failure path-needs-gpu 2 "--path: 'peer' needs GPU memory" "$bin/rdma-bench" client "$addr" --path peer
finish
