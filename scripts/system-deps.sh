#!/bin/sh
# Installs the Debian packages the test suite drives (Chromium for the report's browser test).
# Skips quietly where they are present or where this user cannot install them.
set -e
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: chromium not installed and apt-get unavailable; the browser test will be skipped" >&2
  exit 0
fi
echo "installing chromium (Debian) for the report's browser test" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
