#!/usr/bin/env bash
# The Debian programs the test suite drives, checked before it starts (npm's pretest and
# pretest:postgres15 run this): `npm test` needs Chromium (browser tests) and Prometheus (a real
# server scrapes /metrics); `npm run test:postgres15` needs the PostgreSQL 15 server; CI's image
# check (deploy/image/smoke.sh) needs podman and debootstrap. Missing ones
# are installed when this runs as root with apt-get, as on a fresh Debian machine or container;
# otherwise it stops before the tests with the one command that installs them, so a missing program
# is named here instead of surfacing as a spawn error in the middle of the run.
#
# Usage: test/test-tools.sh chromium prometheus postgresql-15 podman debootstrap (any of them)
# Where each is looked for: CHROMIUM_PATH (/usr/bin/chromium), PROMETHEUS_PATH
# (/usr/bin/prometheus), PG_BIN (/usr/lib/postgresql/15/bin), as the tests themselves read them.
set -euo pipefail

chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
prometheus=${PROMETHEUS_PATH:-/usr/bin/prometheus}
postgres=${PG_BIN:-/usr/lib/postgresql/15/bin}/postgres

# Prints the program's path for a tool name, then the Debian packages that provide it.
tool_program() {
  case $1 in
    chromium) echo "$chromium chromium fonts-dejavu-core" ;;
    prometheus) echo "$prometheus prometheus" ;;
    postgresql-15) echo "$postgres postgresql-15" ;;
    podman) echo "/usr/bin/podman podman" ;;
    debootstrap) echo "/usr/sbin/debootstrap debootstrap" ;;
    *)
      echo "test-tools: unknown tool '$1' (known: chromium, prometheus, postgresql-15, podman, debootstrap)" >&2
      exit 2
      ;;
  esac
}

# The tools whose program is not there, and the packages that install them.
missing_tools=()
missing_programs=()
packages=()
find_missing() {
  missing_tools=()
  missing_programs=()
  packages=()
  local tool program provides
  for tool in "$@"; do
    read -r program provides <<<"$(tool_program "$tool")"
    if [ ! -x "$program" ]; then
      missing_tools+=("$tool")
      missing_programs+=("$program")
      read -r -a provided <<<"$provides"
      packages+=("${provided[@]}")
    fi
  done
}

for tool in "$@"; do tool_program "$tool" >/dev/null; done
find_missing "$@"
[ ${#missing_tools[@]} -eq 0 ] && exit 0

install="apt-get install -y --no-install-recommends ${packages[*]}"
echo "test-tools: the tests need ${missing_programs[*]}, which this machine lacks" >&2

if [ "$EUID" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-tools: installing them: apt-get update && $install" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get update -qq >&2 || ! apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2; then
    echo "test-tools: apt-get failed (above); install them, then run the tests again:" >&2
    echo "  apt-get update && $install" >&2
    exit 1
  fi
  find_missing "${missing_tools[@]}"
  if [ ${#missing_tools[@]} -eq 0 ]; then exit 0; fi
  echo "test-tools: still missing after the install: ${missing_programs[*]}" \
    "(does CHROMIUM_PATH, PROMETHEUS_PATH or PG_BIN point elsewhere?)" >&2
  exit 1
fi

sudo=''
if [ "$EUID" -ne 0 ]; then sudo='sudo '; fi
echo "test-tools: install them (Debian or Ubuntu), then run the tests again:" >&2
echo "  ${sudo}apt-get update && ${sudo}$install" >&2
exit 1
