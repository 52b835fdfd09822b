#!/usr/bin/env bash
# Every gate, in the order that fails fastest: ruff, pyright strict, the docs' strict build,
# then pytest with branch coverage at 100% over src/, warnings as errors and a timeout on every
# test. With no arguments
# (the full gate) the built wheel is also installed with each extra into a fresh virtual
# environment and imported (scripts/standalone.py), beside pytest.
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
run ruff format --check src tests scripts worker migrations examples docs
run ruff check src tests scripts worker migrations examples
run pyright
run pyright -p typings/driver/pyrightconfig.json  # LibreOffice's driver, under python3-uno
run python scripts/check_pins.py
run mkdocs build --quiet  # the guide, the reference and the ADRs, strictly (mkdocs.yml)
standalone=""
if [ $# -eq 0 ]; then
  standalone_log=$(mktemp)
  "$UV" run --no-sync python scripts/standalone.py >"$standalone_log" 2>&1 &
  standalone=$!
  trap 'kill "$standalone" 2>/dev/null || true; rm -f "$standalone_log"' EXIT
fi
run pytest -n 2 --dist worksteal --durations=10 --cov --cov-report=term-missing -p no:cacheprovider "$@"
if [ -n "$standalone" ]; then
  if ! wait "$standalone"; then
    cat "$standalone_log"
    echo "standalone: the built wheel did not install and import with each extra" >&2
    exit 1
  fi
  tail -n 1 "$standalone_log"
fi
