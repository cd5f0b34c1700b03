# The README's and the chapters' command blocks that boot the lab themselves (the tour, the
# wire), run from the host as written (the harness and its markers: tests/doc-commands.sh).
repo=$(cd "$(dirname "$0")/../.." && pwd)
bash "$repo/tests/doc-commands.sh" host "${1:-$repo/build/bin}"
