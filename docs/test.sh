#!/usr/bin/env bash
# Tests the tutorial site: builds it (docs/build.sh), runs the unit tests
# (node --test docs/tests/*.test.mjs), then the browser tests in Debian's
# headless Chromium (docs/tests/browser.mjs; chromium is installed if missing).
# Ends with "docs: build passed, unit passed, browser passed" (the parts it ran; CTest counts the
# checks themselves: docs.unit.NAME, docs.browser.PART); exits 0 only if nothing failed.
#   docs/test.sh                      everything
#   docs/test.sh --part build|unit|browser   one of the three (CTest's docs.build and
#                                     docs.browser run it; browser needs the site built)
#   docs/test.sh --screenshots DIR    also write PNGs at 1280x800 and 390x844 into DIR:
#                                     home, explorer, every chapter, every diagram
#   ... --page /PATH                  also visit /PATH; with --screenshots, a PNG of it whole
# Works from any current directory.
set -euo pipefail

docs_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

browser_args=()
part=all
while [[ $# -gt 0 ]]; do
  case "$1" in
    --screenshots)
      [[ -n "${2:-}" ]] || { echo "docs/test.sh: --screenshots needs a directory" >&2; exit 2; }
      mkdir -p "$2"
      browser_args+=(--screenshots "$(cd "$2" && pwd)"); shift ;;
    --page)
      [[ -n "${2:-}" ]] || { echo "docs/test.sh: --page needs a path such as /queue-pairs" >&2; exit 2; }
      browser_args+=(--page "$2"); shift ;;
    --part)
      [[ "${2:-}" =~ ^(build|unit|browser)$ ]] || { echo "docs/test.sh: --part must be build, unit or browser" >&2; exit 2; }
      part=$2; shift ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs/test.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done


verdicts=()  # "build passed", "unit failed", ...
failed=0
verdict() {  # verdict PART EXIT_STATUS
  if [[ $2 -eq 0 ]]; then verdicts+=("$1 passed"); else verdicts+=("$1 failed"); failed=1; fi
}
finish() {
  local line
  line=$(printf '%s, ' "${verdicts[@]}")
  echo "docs: ${line%, }"
  if [[ $failed -eq 0 && ${#verdicts[@]} -gt 0 ]]; then exit 0; else exit 1; fi
}

runs() { [[ $part == all || $part == "$1" ]]; }

# 1. The build.
if ! runs build; then
  :
elif timeout 900 "$docs_dir/build.sh"; then
  echo "PASS the site builds"
  verdict build 0
else
  echo "FAIL the site does not build (see above)"
  verdict build 1
  finish
fi

# 2. Unit tests (CTest runs each file as its own test, docs.unit.NAME).
runs unit || runs browser || finish
if runs unit; then
  unit_status=0
  timeout 300 node --test --test-reporter=spec "$docs_dir"/tests/*.test.mjs || unit_status=$?
  verdict unit "$unit_status"
fi
runs browser || finish

# 3. Browser tests in Debian's chromium (never a downloaded browser).
if [[ ! -f "$docs_dir/.vitepress/dist/index.html" ]]; then
  echo "FAIL browser tests: the site is not built (docs/build.sh, CTest's docs.build)"
  verdict browser 1
  finish
fi
chromium_path=/usr/bin/chromium
if [[ ! -x "$chromium_path" ]]; then
  echo "docs: installing Debian's chromium for the browser tests"
  as_root=()
  if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then as_root=(sudo); fi
  install_chromium() {
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 \
      install -y -qq --no-install-recommends chromium
  }
  if ! install_chromium; then
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq || true
    install_chromium || true
  fi
fi
if [[ ! -x "$chromium_path" ]]; then
  echo "FAIL browser tests: $chromium_path is missing and could not be installed (apt-get install chromium)"
  verdict browser 1
  finish
fi

# Its checks go, part by part, to RDMALAB_CHECK_RECORDS where CTest's docs.browser sets it.
browser_status=0
timeout 600 env CHROMIUM_PATH="$chromium_path" node "$docs_dir/tests/browser.mjs" "${browser_args[@]}" ||
  browser_status=$?
[[ $browser_status -ne 124 ]] || echo "FAIL browser tests: stopped at their 600 s limit"
verdict browser "$browser_status"

finish
