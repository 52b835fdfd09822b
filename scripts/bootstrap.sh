#!/usr/bin/env bash
# Bootstrap a fresh machine: find Python 3.12 (pyenv's), install uv if missing, sync the locked
# environment with every extra. Prints the path of uv to use on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  local candidate
  for candidate in "${UV_PYTHON:-}" "$(command -v python3.12 2>/dev/null || true)" \
    /root/.pyenv/versions/3.12*/bin/python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 \
    /usr/bin/python3.12 /usr/local/bin/python3.12; do
    # The interpreter's own path, not a shim's (pyenv's): uv would take a shim for another
    # interpreter than the one .venv was built on, and delete and rebuild .venv every time.
    if [ -n "$candidate" ] && [ -x "$candidate" ] &&
      "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12); print(sys.executable)' 2>/dev/null; then
      return 0
    fi
  done
  echo "no Python 3.12 found (install it with: pyenv install 3.12)" >&2
  return 1
}

# A built environment is reused: uv only checks it against the lock.
if [ -x .venv/bin/python ] && .venv/bin/python -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
  PYTHON=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
else
  PYTHON=$(find_python)
fi
export UV_PYTHON="$PYTHON"
UV=$(command -v uv 2>/dev/null || true)
if [ -z "$UV" ] || ! "$UV" --version >/dev/null 2>&1; then
  UV="$HOME/.local/bin/uv"
  if [ ! -x "$UV" ]; then
    "$PYTHON" -m pip install --quiet --user --disable-pip-version-check 'uv==0.13.9' >&2
  fi
fi
"$UV" sync --locked --all-extras --python "$PYTHON" >&2
# artifactr is artifactr-ai's regular package; setuptools' editable finder maps artifactr.files
# onto src/ at run time, but static tools (pyright) can't follow a finder. Linking the source
# into artifactr's own directory gives Python and pyright one tree: the same files either way.
SITE=$(.venv/bin/python -c 'import artifactr, os; print(os.path.dirname(artifactr.__file__))')
ln -sfn "$PWD/src/artifactr/files" "$SITE/files"
echo "$UV"
