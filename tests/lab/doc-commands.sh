# Lab test: the README's and the chapters' command blocks that run inside the lab, as written
# (the harness and its markers: tests/doc-commands.sh).
bash "$(dirname "$0")/../doc-commands.sh" lab "$@"
