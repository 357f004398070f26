#!/usr/bin/env bash
# Installs the system tools the tests need when they are missing: promtool
# (Debian's `prometheus` package) checks the /metrics output. Cheap when
# everything is there. Needs root and apt (as in CI); otherwise it says what
# to install and the tests that need the tool fail with the same message.
set -euo pipefail

if command -v promtool >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "tools: promtool is missing; install Debian's 'prometheus' package (apt-get install prometheus)" >&2
  exit 0
fi
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >/dev/null
}
if ! install; then
  apt-get update -q >/dev/null
  install
fi
echo "tools: installed promtool ($(promtool --version 2>&1 | head -1))" >&2
