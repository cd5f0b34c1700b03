#!/usr/bin/env bash
# Packs the source a site is built from, for readers who reach the site but not the repository:
# HEAD of this checkout, as `git archive` writes it, into OUT_DIR/rdmalab-COMMIT.tar.gz (every
# path under rdmalab-COMMIT/, COMMIT the short hash) and its SHA-256 into
# OUT_DIR/rdmalab-COMMIT.tar.gz.sha256 (sha256sum's format). docs/build.sh runs it before the
# site's build and copies both into the built site's download/ after it.
#   docs/pack-source.sh OUT_DIR
# Prints what it packed, and a warning when the tree differs from HEAD (the tarball holds HEAD).
# Outside a git checkout (a tree unpacked from such a tarball) it packs nothing, says so in one
# line and exits 0: that site offers no download.
set -euo pipefail

out=${1:?usage: docs/pack-source.sh OUT_DIR}
# Physical paths: git reports its top level with symbolic links resolved.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

if ! command -v git >/dev/null 2>&1; then
  echo "docs: git is missing: no source download for the site (apt-get install git)"
  exit 0
fi
# The checkout must be this project's own, not a folder inside some other repository.
top="$(git -C "$repo_root" rev-parse --show-toplevel 2>/dev/null || true)"
if [[ "$top" != "$repo_root" ]]; then
  echo "docs: $repo_root is not a git checkout: no source download for the site"
  exit 0
fi
if ! commit="$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null)"; then
  echo "docs: the checkout has no commit yet: no source download for the site"
  exit 0
fi

name="rdmalab-$commit"
mkdir -p "$out"
git -C "$repo_root" archive --format=tar.gz --prefix="$name/" -o "$out/$name.tar.gz" HEAD
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
sha256="$(cut -d' ' -f1 "$out/$name.tar.gz.sha256")"
echo "docs: packed HEAD ($commit) into $name.tar.gz: $(stat -c %s "$out/$name.tar.gz") bytes, SHA-256 $sha256"
changed="$(git -C "$repo_root" status --porcelain | wc -l)"
if [[ "$changed" -gt 0 ]]; then
  echo "docs: warning: $changed path(s) differ from HEAD (uncommitted or untracked): $name.tar.gz holds HEAD ($commit) without them"
fi
