#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium when it is missing (idempotent) and prints the
# executable path on stdout. The dashboard's browser tests (test/dashboard/) drive it with
# puppeteer-core; no browser is ever downloaded by npm. AGENTSCM_TEST_BROWSER, when set, names
# the executable to use instead.
set -euo pipefail

find_browser() {
  if [ -n "${AGENTSCM_TEST_BROWSER:-}" ] && [ -x "${AGENTSCM_TEST_BROWSER}" ]; then
    echo "${AGENTSCM_TEST_BROWSER}"
    return 0
  fi
  for candidate in chromium chromium-browser; do
    if path="$(command -v "$candidate" 2>/dev/null)"; then
      echo "$path"
      return 0
    fi
  done
  return 1
}

if find_browser; then exit 0; fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "start-browser: no chromium and no apt-get; install Chromium and set AGENTSCM_TEST_BROWSER" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo -n"; fi
echo "start-browser: installing chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends chromium >&2 || { $SUDO apt-get update >&2 && $SUDO apt-get install -y --no-install-recommends chromium >&2; }
find_browser
