#!/usr/bin/env bash
# Writes the documents of benchmarks/fresh_qa (third-party Markdown docs, not in ../shared) from git mirrors
# of their repositories at the commits below (in the workplace: `fetch github:pgvector/pgvector`,
# `fetch github:encode/httpx`, `fetch github:psf/black`; or any clone of them).
#   usage: benchmarks/fresh_qa/build.sh PGVECTOR_GIT_DIR HTTPX_GIT_DIR BLACK_GIT_DIR OUT
#   OUT/httpx_pgvector: the documents of httpx_pgvector.jsonl; OUT/black: those of black.jsonl
set -euo pipefail
pg=$1 hx=$2 bk=$3 out=$4
PGVECTOR_COMMIT=e48241b4dcc045b18902914f668d03d1d399dfbe
HTTPX_COMMIT=ae1b9f66238f75ced3ced5e4485408435de10768
BLACK_COMMIT=8947c48ef2077c3a301b03c1e814dc2e3f78436e
mkdir -p "$out/httpx_pgvector" "$out/black"
git --git-dir="$pg" show "$PGVECTOR_COMMIT:README.md" > "$out/httpx_pgvector/pgvector_README.md"
for f in docs/http2.md docs/environment_variables.md docs/compatibility.md docs/async.md docs/exceptions.md \
         docs/advanced/timeouts.md docs/advanced/proxies.md docs/advanced/resource-limits.md; do
  git --git-dir="$hx" show "$HTTPX_COMMIT:$f" > "$out/httpx_pgvector/httpx_$(basename "$f")"
done
for f in docs/faq.md docs/getting_started.md docs/the_black_code_style/current_style.md \
         docs/usage_and_configuration/black_as_a_server.md docs/usage_and_configuration/black_docker_image.md \
         docs/guides/using_black_with_jupyter_notebooks.md docs/integrations/github_actions.md; do
  git --git-dir="$bk" show "$BLACK_COMMIT:$f" > "$out/black/black_$(basename "$f")"
done
if [ $# -ge 6 ]; then
  po=$5 px=$6
  POETRY_COMMIT=f46702336862f30050d5c641d5ed6f7568ded793
  PIPX_COMMIT=9bb766c055d47b44ea36c342b87ed569e7c442b1
  mkdir -p "$out/poetry_pipx"
  for f in docs/configuration.md docs/managing-environments.md docs/faq.md docs/libraries.md docs/pre-commit-hooks.md; do
    git --git-dir="$po" show "$POETRY_COMMIT:$f" > "$out/poetry_pipx/poetry_$(basename "$f")"
  done
  for f in docs/how-to/install-pipx.rst docs/reference/environment-variables.rst docs/reference/exit-codes.rst \
           docs/explanation/how-pipx-works.rst docs/how-to/pin-packages.rst; do
    git --git-dir="$px" show "$PIPX_COMMIT:$f" > "$out/poetry_pipx/pipx_$(basename "$f")"
  done
fi
if [ $# -ge 8 ]; then
  rq=$7 ck=$8
  REQUESTS_COMMIT=1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e
  CLICK_COMMIT=2c8cd3ac958a7eb316d67f2d316c27086c4c0369
  mkdir -p "$out/requests_click"
  for f in docs/user/quickstart.rst docs/community/faq.rst docs/user/install.rst docs/user/authentication.rst \
           docs/user/advanced.rst; do
    git --git-dir="$rq" show "$REQUESTS_COMMIT:$f" > "$out/requests_click/requests_$(basename "$f")"
  done
  for f in docs/exceptions.md docs/testing.md docs/shell-completion.md docs/prompts.md; do
    git --git-dir="$ck" show "$CLICK_COMMIT:$f" > "$out/requests_click/click_$(basename "$f")"
  done
fi
if [ $# -ge 9 ]; then
  hd=$9
  HTTPD_COMMIT=0cb680442ecaa6118cc610b5ecc6e824330bf61a
  mkdir -p "$out/httpd"
  for m in mod_deflate mod_expires mod_ratelimit mod_dir mod_reqtimeout; do
    git --git-dir="$hd" show "$HTTPD_COMMIT:docs/manual/mod/$m.html.en.utf8" > "$out/httpd/$m.html"
  done
fi
if [ $# -ge 10 ]; then
  gu=${10}
  GUNICORN_COMMIT=65ac1a3a4c0aa00960968c720d6e6bd2ac32f1b9
  mkdir -p "$out/gunicorn"
  for f in reference/settings.md design.md faq.md signals.md; do
    git --git-dir="$gu" show "$GUNICORN_COMMIT:docs/content/$f" > "$out/gunicorn/gunicorn_$(basename "$f")"
  done
fi
if [ $# -ge 11 ]; then
  uv=${11}
  UVICORN_COMMIT=e6c7ce791fc634b6eedee40e0d0207faa8a9aefd
  mkdir -p "$out/uvicorn"
  for f in settings.md server-behavior.md installation.md concepts/lifespan.md; do
    git --git-dir="$uv" show "$UVICORN_COMMIT:docs/$f" > "$out/uvicorn/uvicorn_$(basename "$f")"
  done
fi
ls "$out"/* | wc -l
