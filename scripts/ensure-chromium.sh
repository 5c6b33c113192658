#!/usr/bin/env bash
# The /docs browser test drives Debian's Chromium (playwright-core cannot download browsers here).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
