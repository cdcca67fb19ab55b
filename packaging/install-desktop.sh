#!/usr/bin/env bash
# Put the built app in the desktop's menus and open .mbs files with it, for this user (~/.local):
#   bash packaging/install-desktop.sh [APP_FOLDER]     (default: dist/mbstudio, as packaging/build.sh leaves it)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
app="$(cd "${1:-$root/dist/mbstudio}" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/mime/packages" "$data/icons/hicolor/scalable/apps" "$HOME/.local/bin"
ln -sf "$app/mbstudio" "$HOME/.local/bin/mbstudio"
sed "s|^Exec=mbstudio|Exec=$app/mbstudio|" "$root/packaging/mbstudio.desktop" > "$data/applications/mbstudio.desktop"
cp "$root/packaging/mbstudio-mime.xml" "$data/mime/packages/mbstudio.xml"
cp "$root/resources/mbstudio.svg" "$data/icons/hicolor/scalable/apps/mbstudio.svg"
# refresh the desktop's caches where their tools exist (absent on a server; the files are in place either way)
command -v update-mime-database >/dev/null && update-mime-database "$data/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
command -v xdg-mime >/dev/null && xdg-mime default mbstudio.desktop application/x-mbstudio || true
echo "installed: $data/applications/mbstudio.desktop, .mbs -> application/x-mbstudio"
