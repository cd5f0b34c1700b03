#!/usr/bin/env bash
# Writes the seed corpora of the lesson_* fuzz targets (tests/fuzz/corpus/lesson_*/): each
# lesson's messages as its own code lays them out (big-endian 32-bit words), valid ones and edge
# cases to refuse, written as bytes here (make_corpus.cpp does not include the lessons' headers).
#   tests/fuzz/lesson-seeds.sh   (from anywhere; rewrites the five folders)
set -euo pipefail
corpus=$(cd "$(dirname "$0")" && pwd)/corpus
words() {  # words FILE WORD... : the words as 4-byte big-endian integers
    local file=$1 word
    shift
    mkdir -p "$(dirname "$file")"
    : >"$file"
    for word in "$@"; do printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((word >> 24 & 255)) \
        $((word >> 16 & 255)) $((word >> 8 & 255)) $((word & 255)))" >>"$file"; done
}
rm -rf "$corpus"/lesson_srq "$corpus"/lesson_rendezvous "$corpus"/lesson_credit_ring \
    "$corpus"/lesson_selective_signaling "$corpus"/lesson_completion_events
# srq: go = number, clients, largest; a client's message = index, count, then its pattern.
words "$corpus/lesson_srq/go-client-2-of-3" 2 3 4096
words "$corpus/lesson_srq/go-client-0" 0 3 4096
words "$corpus/lesson_srq/message-0-of-20" 0 20 0x01020304 0x05060708
words "$corpus/lesson_srq/message-past-count" 20 20
# rendezvous: the offer = tag, a 24-byte buffer advertisement (private_data's seeds, which
# make_corpus writes with the real encoder); the server's FIN = tag, bytes verified.
# credit-ring: the ring request = tag, the credit word's advertisement, count.
message() {  # message FILE TAG ADVERTISEMENT [COUNT]
    words "$1.tag" "$2"
    : >"$1.count"
    [ $# -lt 4 ] || words "$1.count" "$4"
    cat "$1.tag" "$corpus/private_data/$3" "$1.count" >"$1"
    rm "$1.tag" "$1.count"
}
message "$corpus/lesson_rendezvous/offer" 0x524e4456 read-source
message "$corpus/lesson_rendezvous/offer-write-target" 0x524e4456 write-target
words "$corpus/lesson_rendezvous/fin" 0x46494e00 65536
message "$corpus/lesson_credit_ring/ring" 0x52494e47 write-target 64
message "$corpus/lesson_credit_ring/ring-zero" 0x52494e47 write-target 0
message "$corpus/lesson_credit_ring/wrong-tag" 0x524e4456 write-target 64
# selective-signaling: kind (1 plan, 2 done, 3 verified), writes, size, signal_every, sq_depth, last.
words "$corpus/lesson_selective_signaling/plan" 1 1000 4096 64 128 0
words "$corpus/lesson_selective_signaling/done" 2 1000 4096 64 128 999
words "$corpus/lesson_selective_signaling/verified" 3 1000 4096 64 128 0
# completion-events: kind, a, b, c, d (20 bytes), then the payload; a ping ends in its sequence.
words "$corpus/lesson_completion_events/start" 1 1000 64 0 0
words "$corpus/lesson_completion_events/ping-7" 2 7 0 0 0 0 7
words "$corpus/lesson_completion_events/short" 2 7
