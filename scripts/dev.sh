#!/usr/bin/env bash
# Set up what Pinchtab needs on a Debian machine, then start the bridge or run the tests.
#   scripts/dev.sh start [pinchtab bridge options]   install what is missing, serve on 127.0.0.1:9867
#   scripts/dev.sh test  [pytest options]            install what is missing, run the whole suite
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

have_browser() {
  [ -n "${CHROME_BIN:-}" ] && return 0
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$b" >/dev/null 2>&1 && return 0
  done
  return 1
}

setup() {
  if ! have_browser; then
    echo "dev.sh: no Chrome or Chromium found; installing Debian's chromium" >&2
    apt_install chromium
  fi
  if [ ! -x .venv/bin/python ]; then
    if ! python3 -m venv .venv 2>/dev/null; then
      rm -rf .venv
      echo "dev.sh: installing python3-venv" >&2
      apt_install python3-venv
      python3 -m venv .venv
    fi
  fi
  # Reinstall only when the package metadata changed since the last install.
  if [ ! -f .venv/.installed ] || [ setup.cfg -nt .venv/.installed ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e '.[test]'
    touch .venv/.installed
  fi
}

cmd="${1:-start}"
shift || true
case "$cmd" in
  start) setup; exec .venv/bin/pinchtab bridge "$@" ;;
  test)
    setup
    # The deployment tests run a real nginx in front of Pinchtab.
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || apt_install nginx-light
    # The completion tests run the generated scripts in bash and zsh.
    command -v zsh >/dev/null 2>&1 || apt_install zsh
    # The page-SDK tests load the npm debug SDK, unchanged, from tests/js/node_modules; reinstall
    # only when the lockfile changed since the last install.
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    if [ ! tests/js/node_modules/.package-lock.json -nt tests/js/package-lock.json ]; then
      npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
    fi
    # The fleet tests lease browsers from real engines: Browserless (npm, with its own Node) and
    # chromedriver (Debian's, the same Chromium).
    command -v chromedriver >/dev/null 2>&1 || apt_install chromium-driver
    if [ ! tests/fleet/node_modules/.package-lock.json -nt tests/fleet/package-lock.json ]; then
      npm ci --prefix tests/fleet --no-audit --no-fund --loglevel=error
    fi
    # In parallel (pytest-xdist): PYTEST_WORKERS workers (default two, one per core of a small
    # machine; more only overloads it), each with its own browser, a test module on one worker
    # (tests/conftest.py hands out the longest first). `-n 0` or `-p no:xdist` after `test` runs
    # the tests in this process.
    parallel=(-n "${PYTEST_WORKERS:-2}" --dist loadfile)
    case " $* " in *" no:xdist "* | *" -pno:xdist "*) parallel=() ;; esac
    PATH="$PWD/.venv/bin:$PATH" exec .venv/bin/python -m pytest -q ${parallel[@]+"${parallel[@]}"} "$@" ;;
  *) echo "usage: scripts/dev.sh start|test [args]" >&2; exit 2 ;;
esac
