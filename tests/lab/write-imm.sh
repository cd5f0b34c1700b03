# Lab test: write-imm places each part with RDMA WRITE WITH IMMEDIATE; the server finds every part
# through the immediate in its receive completion, verifies it, and refuses an immediate out of range.
source "$(dirname "$0")/lib.sh" "$@"
part immediates
pair_expect imm-default write-imm '^server: verified 4 parts, each found through its immediate' \
    '^client: wrote 4 parts of 4096 bytes with RDMA WRITE WITH IMMEDIATE' --
# The client writes the last part first: the first notification names part 3, with its length.
check "imm-default: first completion carries immediate 3 and byte_len 4096" \
    has_line "$scratch/imm-default/server.out" '^server: completion 0: immediate 3 \(offset 12288\), byte_len 4096, part verified'
check "imm-default: the reply is a SEND WITH IMMEDIATE (payload 4, immediate 0)" \
    has_line "$scratch/imm-default/client.out" '^client: the reply came as a SEND WITH IMMEDIATE: payload 4 \(in the receive buffer\), immediate 0'
check "imm-default: zero-length receives were posted" \
    has_line "$scratch/imm-default/server.out" '4 zero-length receives posted'
pair_expect imm-many write-imm '^server: verified 16 parts' '^client: wrote 16 parts of 65536 bytes' \
    -n 16 -s 64K -- -n 16 -s 64K
pair_expect imm-one-byte write-imm '^server: verified 1 parts' '^client: wrote 1 parts of 1 bytes' \
    -n 1 -s 1 -- -n 1 -s 1
check "imm-one-byte: byte_len 1 reported" \
    has_line "$scratch/imm-one-byte/server.out" 'immediate 0 \(offset 0\), byte_len 1, part verified'

part refusals
# An immediate the server did not expect: validated before use, refused.
pair_run "$scratch/bad-imm" write-imm --timeout 5 -- --bad-immediate --timeout 2
check "bad-imm: server exits 1" rc_is "$scratch/bad-imm/server.rc" 1
check "bad-imm: server refuses the immediate" \
    has_line "$scratch/bad-imm/server.out" "the client's immediate 4 is out of range: the buffer has 4 parts"
check "bad-imm: client exits 1" rc_is "$scratch/bad-imm/client.rc" 1
# More parts than the server's buffer holds: the client refuses before writing anything.
pair_run "$scratch/too-many" write-imm -n 2 --timeout 2 -- -n 4
check "too-many: client exits 1" rc_is "$scratch/too-many/client.rc" 1
check "too-many: client says why" \
    has_line "$scratch/too-many/client.out" "server's buffer holds 8192 bytes; cannot write 16384"
check "too-many: server gives up by itself" rc_is "$scratch/too-many/server.rc" 1
show_on_failure "$scratch/bad-imm"
show_on_failure "$scratch/too-many"

expect_failure imm-count-zero 2 'iters' "$bin/write-imm" server -n 0
expect_failure imm-count-large 2 'iters' "$bin/write-imm" client "$addr" -n 300
expect_failure imm-too-large 1 'do not fit one advertised buffer' "$bin/write-imm" client "$addr" -s 1G -n 8
finish
