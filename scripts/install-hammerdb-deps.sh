#!/usr/bin/env bash
# Install what HammerDB's CLI and its MySQL TPROC-C driver need from
# Debian (make bench-hammerdb): Tcl 8.6, its Thread extension, SQLite's Tcl
# binding (HammerDB's job store) and mysqltcl (the MySQL/MariaDB client
# the driver loads). HammerDB itself comes from its source
# (HAMMERDB_SRC, internal/benchtool/vshammerdb). Needs root for apt-get;
# without root it only reports what is missing.
set -euo pipefail
need=()
command -v tclsh8.6 >/dev/null 2>&1 || need+=(tcl8.6)
for p in tcl-thread libsqlite3-tcl mysqltcl; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-hammerdb-deps: missing ${need[*]}; run as root to install them" >&2
  exit 0
fi
echo "install-hammerdb-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
