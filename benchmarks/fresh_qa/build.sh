#!/usr/bin/env bash
# Writes the documents of benchmarks/fresh_qa (third-party Markdown docs, not in ../shared) into DIR, from
# git mirrors of the two repositories at the commits below (`fetch github:pgvector/pgvector` and
# `fetch github:encode/httpx` in the workplace, or any clone of them).
#   usage: benchmarks/fresh_qa/build.sh PGVECTOR_GIT_DIR HTTPX_GIT_DIR DIR
set -euo pipefail
pg=$1 hx=$2 out=$3
PGVECTOR_COMMIT=e48241b4dcc045b18902914f668d03d1d399dfbe
HTTPX_COMMIT=ae1b9f66238f75ced3ced5e4485408435de10768
mkdir -p "$out"
git --git-dir="$pg" show "$PGVECTOR_COMMIT:README.md" > "$out/pgvector_README.md"
for f in docs/http2.md docs/environment_variables.md docs/compatibility.md docs/async.md docs/exceptions.md \
         docs/advanced/timeouts.md docs/advanced/proxies.md docs/advanced/resource-limits.md; do
  git --git-dir="$hx" show "$HTTPX_COMMIT:$f" > "$out/httpx_$(basename "$f")"
done
ls "$out" | wc -l
