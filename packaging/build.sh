#!/usr/bin/env bash
# Build the standalone one-folder app: dist/mbstudio/mbstudio (the window, and every sub-command).
#   bash packaging/build.sh
# A virtual environment of its own (build/app-venv, or $MBSTUDIO_APP_VENV) gets MB Studio itself (not an editable
# install, so the samples and icon are package data) with the window's and the app's extras, then PyInstaller
# runs packaging/mbstudio.spec. Nothing outside build/ and dist/ is touched.
set -euo pipefail
# the app is built from what is installed in its venv only: a PYTHONPATH naming a source tree would put that tree's
# mbstudio (without the samples and icon, which only an install maps into the package) in the app
unset PYTHONPATH
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${MBSTUDIO_APP_VENV:-$root/build/app-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# the venv's own pip, not upgraded: upgrading it in a venv made from another venv failed once in CI (pip read a
# dist-info with no version while replacing itself), and the bundled pip installs all of this
"$venv/bin/python" -m pip install --quiet "$root[gui,app]"
cd "$root/packaging"
"$venv/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$root/dist" --workpath "$root/build/pyinstaller" mbstudio.spec
cp "$root/resources/mbstudio.svg" "$root/packaging/mbstudio.desktop" "$root/dist/mbstudio/"
echo "built: $root/dist/mbstudio/mbstudio ($(du -sh "$root/dist/mbstudio" | cut -f1))"
