#!/bin/sh
# The browser the browser tests drive, installed if missing: Debian's Chromium. The playwright package (a test
# extra in pyproject.toml) ships its own driver; never `playwright install`: no browser build is ever downloaded.
#   sh tests/dashboard/ensure_browser.sh
set -eu

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # Chromium recommends fonts-liberation, which the screenshots need for legible text.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
