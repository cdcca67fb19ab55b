#!/usr/bin/env bash
# What each extra costs (the README's table): for each, a fresh virtual environment in a new temporary folder,
# the wall time of `pip install -e` (no pip cache, so every package is fetched) and the environment's size.
set -u
SRC="$(cd "$(dirname "$0")/.." && pwd)"
for extra in "" "[gui]" "[gui,test]"; do
  venv="$(mktemp -d)/venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1
  start=$(date +%s)
  "$venv/bin/python" -m pip install -q --no-cache-dir -e "$SRC$extra" > "$venv.log" 2>&1
  status=$?
  end=$(date +%s)
  echo "pip install -e '.$extra': exit $status, $((end - start)) s, $(du -sh "$venv" | cut -f1) ($venv)"
done
