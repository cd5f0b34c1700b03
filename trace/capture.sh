# Sourced by trace/guest.sh and trace/guest-ranks.sh: the capture each lab host makes around its
# part of a traced run, inside the guest, so that its timestamps and the program's --trace events
# come from the same CLOCK_REALTIME.
#   start_capture INTERFACE PCAP   starts dumpcap (capture_pid); returns 1 if it did not start
#   stop_capture                   lets the last ACKs and disconnect messages in, then stops it

# RoCE v2 only (UDP 4791: the data path and rdma_cm's own messages to QP 1); pcap format.
start_capture() {
    local interface=$1 pcap=$2
    dumpcap -q -i "$interface" -f 'udp port 4791' -P -w "$pcap" 2>"$pcap.err" &
    capture_pid=$!
    # dumpcap writes the file's header once it is capturing: no packet before that is missed.
    for _ in $(seq 100); do [ -s "$pcap" ] && break; sleep 0.05; done
    if [ ! -s "$pcap" ]; then
        echo "trace: host ${RDMALAB_HOST:-?}: dumpcap did not start: $(head -n 1 "$pcap.err")" >&2
        kill "$capture_pid" 2>/dev/null
        wait "$capture_pid" 2>/dev/null
        return 1
    fi
}

stop_capture() {
    sleep 0.5  # the last ACK and rdma_cm's disconnect messages
    kill -INT "$capture_pid" 2>/dev/null
    wait "$capture_pid" 2>/dev/null
}
