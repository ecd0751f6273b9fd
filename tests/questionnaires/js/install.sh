#!/usr/bin/env bash
# Installs what the questionnaire browser tests need; safe to run again (does nothing
# when everything is in place):
#   - the npm packages pinned in package-lock.json (survey-core, survey-js-ui, jsPsych,
#     playwright-core), into tests/questionnaires/js/node_modules;
#   - Debian's chromium, when no Chromium is installed (needs root or sudo).
# No browser is downloaded by npm: playwright-core drives the system Chromium.
# Usage: bash tests/questionnaires/js/install.sh
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: Node.js (18 or newer) and npm are needed; e.g. apt-get install nodejs npm" >&2
  exit 1
fi

stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi

if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "install.sh: install Chromium (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM=/path/to/chrome" >&2
    exit 1
  fi
fi
echo "questionnaire test tools ready: node $(node --version), $(${CHROMIUM:-chromium} --version 2>/dev/null | head -1)"
