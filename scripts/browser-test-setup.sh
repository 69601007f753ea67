#!/usr/bin/env bash
# Install (if needed) Debian's Chromium and its ChromeDriver for the browser tests (tests/browser).
# Selenium is told to use /usr/bin/chromedriver, so nothing is downloaded at test time. Without
# root and without the packages, the browser tests skip and say why.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "browser-test-setup: chromium/chromium-driver are not installed and this is not root;" \
    "the browser tests will skip (as root: apt-get install chromium chromium-driver)" >&2
  exit 0
fi
echo "browser-test-setup: installing chromium and chromium-driver from Debian" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
