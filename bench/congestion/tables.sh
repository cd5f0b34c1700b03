# Readers of the congestion experiments' tables, sourced by bench/dcqcn.sh and vm.congestion:
# - the dcqcn lesson's timelines (its --timeline): "# NAME<TAB>VALUE" lines, a line of column
#   names, then a row per 50 ms: time_s rate_mbit target_mbit alpha sent_mbit completion_ms cnps
#   (completion_ms "-" where no WRITE completed);
# - rdma-wire --flows' table: a line of column names (src dst qpn packets data_bytes sent_again
#   ect ce ...), a row per stream, then "# jain_fairness<TAB>INDEX<TAB>WHAT".

header_value() {  # header_value TIMELINE NAME: the value of its "# NAME<TAB>VALUE" line
    local tag value
    while IFS=$'\t' read -r tag value; do [ "$tag" = "# $2" ] && { echo "$value"; return 0; }; done <"$1"
    return 1
}
mean_completion_of() {  # mean_completion_of TIMELINE...: the mean of their rows' completion_ms
    awk -F '\t' '$1 ~ /^#/ || $1 == "time_s" || $6 == "-" { next } { sum += $6; n++ }
                 END { printf "%.1f", n ? sum / n : 0 }' "$@"
}
cnps_of() {  # cnps_of TIMELINE: the CNPs its sender had received by its last row
    awk -F '\t' '$1 ~ /^#/ || $1 == "time_s" { next } { cnps = $7 } END { printf "%d", cnps }' "$1"
}
rate_steps_of() {  # rate_steps_of TIMELINE: "DOWN UNPROMPTED": rows whose rate fell from the row
    # before, and of those, how many saw no new CNP since that row (a reaction point cuts its rate
    # only on a CNP)
    awk -F '\t' '$1 ~ /^#/ || $1 == "time_s" { next }
                 n++ && $2 < rate { down++; if ($7 == cnps) unprompted++ }
                 { rate = $2; cnps = $7 }
                 END { printf "%d %d", down, unprompted }' "$1"
}
jain_of() {  # jain_of FLOWS_TSV: the fairness index rdma-wire --flows printed
    local tag value
    while IFS=$'\t' read -r tag value _; do [ "$tag" = "# jain_fairness" ] && echo "$value"; done <"$1"
}
ce_share_of() {  # ce_share_of FLOWS_TSV: CE-marked packets / packets of all its streams, in percent
    awk -F '\t' '$1 ~ /^#/ || $1 == "src" { next } { packets += $4; ce += $8 }
                 END { printf "%.1f", packets ? 100 * ce / packets : 0 }' "$1"
}
goodput_of() {  # goodput_of FLOWS_TSV: the goodput of all its streams together, in Mbit/s
    awk -F '\t' '$1 ~ /^#/ || $1 == "src" { next } { sum += $14 }
                 END { printf "%.1f", sum }' "$1"
}
