#!/usr/bin/env bash
# Tests the tutorial site: builds it (docs/build.sh), runs the unit tests
# (node --test docs/tests/*.test.mjs), then the browser tests in Debian's
# headless Chromium (docs/tests/browser.mjs; chromium is installed if missing).
# Ends with "docs: N passed, M failed"; exits 0 only if nothing failed.
#   docs/test.sh                      everything
#   docs/test.sh --part build|unit|browser   one of the three (CTest's docs.build, docs.unit,
#                                     docs.browser; browser needs the site built)
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
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs/test.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

work_dir="$(mktemp -d "${TMPDIR:-/tmp}/rdmalab-docs-test.XXXXXX")"
trap 'rm -rf "$work_dir"' EXIT

passed=0
failed=0
finish() {
  echo "docs: $passed passed, $failed failed"
  if [[ $failed -eq 0 && $passed -gt 0 ]]; then exit 0; else exit 1; fi
}

runs() { [[ $part == all || $part == "$1" ]]; }

# 1. The build.
if ! runs build; then
  :
elif timeout 900 "$docs_dir/build.sh"; then
  echo "PASS the site builds"
  passed=$((passed + 1))
else
  echo "FAIL the site does not build (see above)"
  failed=$((failed + 1))
  finish
fi

# 2. Unit tests: spec output here, TAP to a file for the counts.
runs unit || runs browser || finish
if runs unit; then
tap_file="$work_dir/unit.tap"
unit_tests=("$docs_dir"/tests/*.test.mjs)
if timeout 300 node --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap_file" "${unit_tests[@]}"; then
  unit_status=0
else
  unit_status=$?
fi
unit_passed="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap_file" | tail -1)"
unit_failed="$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap_file" | tail -1)"
if [[ -z "$unit_passed" || -z "$unit_failed" ]]; then
  echo "FAIL unit tests: node --test gave no summary (exit status $unit_status)"
  failed=$((failed + 1))
else
  echo "unit tests: $unit_passed passed, $unit_failed failed"
  passed=$((passed + unit_passed))
  failed=$((failed + unit_failed))
  if [[ $unit_status -ne 0 && $unit_failed -eq 0 ]]; then
    echo "FAIL unit tests: node --test exited with status $unit_status"
    failed=$((failed + 1))
  fi
fi
fi
runs browser || finish

# 3. Browser tests in Debian's chromium (never a downloaded browser).
if [[ ! -f "$docs_dir/.vitepress/dist/index.html" ]]; then
  echo "FAIL browser tests: the site is not built (docs/build.sh, CTest's docs.build)"
  failed=$((failed + 1))
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
  failed=$((failed + 1))
  finish
fi

browser_log="$work_dir/browser.log"
if timeout 600 env CHROMIUM_PATH="$chromium_path" node "$docs_dir/tests/browser.mjs" "${browser_args[@]}" \
    2>&1 | tee "$browser_log"; then
  browser_status=0
else
  browser_status=$?
fi
summary="$(sed -n 's/^browser: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$browser_log" | tail -1)"
if [[ -z "$summary" ]]; then
  echo "FAIL browser tests: no summary line (exit status $browser_status; 124 means the 600 s limit)"
  failed=$((failed + 1))
else
  read -r browser_passed browser_failed <<<"$summary"
  passed=$((passed + browser_passed))
  failed=$((failed + browser_failed))
  if [[ $browser_status -ne 0 && $browser_failed -eq 0 ]]; then
    echo "FAIL browser tests: exited with status $browser_status"
    failed=$((failed + 1))
  fi
fi

finish
