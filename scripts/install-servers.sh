#!/usr/bin/env bash
# Install the database servers the tests start privately (PostgreSQL,
# MariaDB), and Chromium for the report's screenshot test, when missing.
# Nothing is started here: tests run their own throwaway servers
# (internal/testdb). Needs root for apt-get; without root it only reports
# what is missing.
set -euo pipefail
need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v pgbench >/dev/null 2>&1 || need+=(postgresql-contrib)
command -v mariadbd >/dev/null 2>&1 || command -v mysqld >/dev/null 2>&1 || need+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || command -v mysql >/dev/null 2>&1 || need+=(mariadb-client)
# Headless Chromium renders the compare report in its screenshot test.
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-servers: missing ${need[*]}; run as root to install them (tests that need them will skip outside CI)" >&2
  exit 0
fi
echo "install-servers: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# No init system here: tell the packages' scripts not to start services.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
