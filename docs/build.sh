#!/usr/bin/env bash
# Builds the rdmalab tutorial site into docs/.vitepress/dist (offline, no CDN).
#   docs/build.sh          install the pinned npm packages if needed, copy the
#                          benchmark's SVG figures, pack the source (HEAD) into
#                          dist/download/, build the site
#   docs/build.sh --serve  the same, then serve the site on 127.0.0.1
#                          (--port N to choose the port; default: a free one)
# Works from any current directory.
set -euo pipefail

docs_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$docs_dir/.." && pwd)"

serve=false
port=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --serve) serve=true ;;
    --port) port="${2:?--port needs a number}"; shift ;;
    -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs/build.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "docs/build.sh: $tool is missing: install Debian's nodejs and npm (apt-get install nodejs npm)" >&2
    exit 1
  fi
done

cd "$docs_dir"

# Install exactly what package-lock.json pins (`npm ci`, nothing else), when
# node_modules is missing or older than the lockfile. npm writes
# node_modules/.package-lock.json last. package.json overrides rollup to the
# newest release whose 25 platform builds (optional dependencies) the npm
# registry this project is built against serves: with a newer rollup npm wrote a
# lockfile without the missing builds, and `npm ci` refused that lockfile.
# Regenerate it with `npm install --package-lock-only` after deleting it, then
# check `npm ci` accepts it; docs/tests/lockfile.test.mjs checks it stays whole.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "docs: installing the npm packages package-lock.json pins (npm ci)"
  npm_log="$(mktemp)"
  if ! npm ci --no-audit --no-fund --loglevel=error >"$npm_log" 2>&1; then
    cat "$npm_log" >&2; rm -f "$npm_log"
    echo "docs/build.sh: npm ci failed (see above: a lockfile out of step with package.json, or no npm registry)" >&2
    exit 1
  fi
  rm -f "$npm_log"
  touch node_modules/.package-lock.json
fi

# The benchmark's figures: every bench/results/**/*.svg, same relative path,
# under docs/public/figures/ (generated: rebuilt from scratch each time).
figures_dir="$docs_dir/public/figures"
rm -rf "$figures_dir"
results_dir="${DOCS_FIGURES_FROM:-$repo_root/bench/results}"  # override for tests only
figure_count=0
if [[ -d "$results_dir" ]]; then
  while IFS= read -r -d '' svg; do
    relative="${svg#"$results_dir"/}"
    mkdir -p "$figures_dir/$(dirname "$relative")"
    cp "$svg" "$figures_dir/$relative"
    figure_count=$((figure_count + 1))
  done < <(find "$results_dir" -type f -name '*.svg' -print0)
fi
echo "docs: $figure_count figure(s) copied from ${results_dir#"$repo_root"/} to docs/public/figures"

# The source the site is built from, for readers who reach the site but not the repository:
# packed first, so that the pages can show its name, size and SHA-256 (config.mts reads them
# from RDMALAB_SOURCE_*), and copied into the built site after the build, which empties dist/.
source_dir="$(mktemp -d "${TMPDIR:-/tmp}/rdmalab-source.XXXXXX")"
trap 'rm -rf "$source_dir"' EXIT
if ! "$docs_dir/pack-source.sh" "$source_dir"; then
  echo "docs/build.sh: packing the source with git archive failed (see above)" >&2
  exit 1
fi
unset RDMALAB_SOURCE_FILE RDMALAB_SOURCE_SHA256 RDMALAB_SOURCE_BYTES
tarball="$(find "$source_dir" -name 'rdmalab-*.tar.gz' -print -quit)"
if [[ -n "$tarball" ]]; then
  RDMALAB_SOURCE_FILE="$(basename "$tarball")"
  RDMALAB_SOURCE_SHA256="$(cut -d' ' -f1 "$tarball.sha256")"
  RDMALAB_SOURCE_BYTES="$(stat -c %s "$tarball")"
  export RDMALAB_SOURCE_FILE RDMALAB_SOURCE_SHA256 RDMALAB_SOURCE_BYTES
fi
# The clone command needs the repository's address (sources.mjs: CLONE_URL); without one the
# pages offer the download alone.
clone_url="$(node --input-type=module -e 'const { CLONE_URL } = await import(process.argv[1]); process.stdout.write(CLONE_URL);' "$docs_dir/.vitepress/sources.mjs")"
if [[ -z "$clone_url" ]]; then
  if [[ -n "$tarball" ]]; then offered="the download alone"; else offered="URL-OF-THIS-REPOSITORY in the clone command"; fi
  echo "docs: warning: no clone URL (set RDMALAB_CLONE_URL or RDMALAB_REPOSITORY_URL, or give the checkout a GitHub or GitLab origin): the pages offer $offered"
fi

if ! ./node_modules/.bin/vitepress build .; then
  echo "docs/build.sh: vitepress build failed (see above)" >&2
  exit 1
fi
[[ -f .vitepress/dist/index.html ]] || { echo "docs/build.sh: the build wrote no index.html" >&2; exit 1; }
if [[ -n "$tarball" ]]; then
  mkdir -p .vitepress/dist/download
  cp "$tarball" "$tarball.sha256" .vitepress/dist/download/
  rm -rf "$source_dir"  # --serve's exec below runs no EXIT trap
  echo "docs: the source download is .vitepress/dist/download/$RDMALAB_SOURCE_FILE"
fi
echo "docs: site built in $docs_dir/.vitepress/dist"

if $serve; then
  exec node "$docs_dir/tests/serve.mjs" "$docs_dir/.vitepress/dist" "$port"
fi
