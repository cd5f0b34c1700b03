# Lab test: the dcqcn lesson on one host. rxe loops a packet for its own address back inside the
# kernel, so no packet reaches the link and the notification point sees none: this checks the
# lesson's own work — the paced stream of WRITEs, the slot-by-slot verification, the timeline —
# and leaves the marks, CNPs and reaction to vm.congestion (three hosts and a marking queue).
source "$(dirname "$0")/lib.sh" "$@"
pair_expect paced dcqcn '^server: verified [0-9]+ WRITEs of 4096 bytes: every slot holds its last message' \
    '^client: [0-9]+ WRITEs of 4096 bytes in [0-9.]+ s: .* 0 CNPs arrived; the reaction point ended at R_C 40\.00 Mbit/s' \
    -- -D 1 --timeline "$scratch/paced.tsv"
check "paced: the notification point saw none of its packets on one host" \
    has_line "$scratch/paced/server.out" '^server: notification point: 0 packets of QP'
check "paced: the timeline names the model" has_line "$scratch/paced.tsv" '^# model.rate 40 Mbit/s'
rows=0
while IFS=$'\t' read -r time rate _; do
    [[ $time =~ ^[0-9]+\.[0-9]+$ ]] && [ "$rate" = 40.000 ] && rows=$((rows + 1))
done <"$scratch/paced.tsv"
check "paced: the timeline has a row every 50 ms at the line rate ($rows in a second)" [ "$rows" -ge 15 ]
# With no reaction the window alone limits the sender; fewer slots than the window is refused.
pair_expect unpaced dcqcn '^server: verified' '^client: [0-9]+ WRITEs .* 0 CNPs arrived$' \
    -- -D 0.5 --reaction none
pair_run "$scratch/small-ring" dcqcn --slots 4 --timeout 3 -- --window 8
check "small-ring: client exits 1" rc_is "$scratch/small-ring/client.rc" 1
check "small-ring: client says why" has_line "$scratch/small-ring/client.out" 'the server has 4 slots of 4096 bytes; a window of 8 needs as many'
show_on_failure "$scratch/small-ring"
finish
