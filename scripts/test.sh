#!/usr/bin/env bash
# Every gate, in the order that fails fastest: ruff, pyright strict, then pytest with branch
# coverage at 100% over src/, warnings as errors and a timeout on every test.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-uv}
export UV
run() { "$UV" run --no-sync "$@"; }
# The PostgreSQL tests run whenever a server answers on this machine (always in CI).
if [ -z "${ARTIFACTR_TEST_POSTGRES_URL:-}" ] && command -v pg_isready >/dev/null \
  && pg_isready -q -h 127.0.0.1 -p 5432; then
  export ARTIFACTR_TEST_POSTGRES_URL="postgresql+asyncpg://postgres@127.0.0.1:5432/test"
fi
run ruff format --check src tests scripts worker migrations docs
run ruff check src tests scripts worker migrations
run pyright
run python scripts/check_pins.py
run pytest -n 2 --dist worksteal --cov --cov-report=term-missing -p no:cacheprovider "$@"
