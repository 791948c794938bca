#!/bin/bash
# A shell for make that measures each recipe line's CPU, everything it
# starts included: servers that daemonize (pg_ctl) stay in the line's
# cgroup. For issue 24's suite time, as root on a host with cgroup v1's
# cpuacct controller:
#
#   make test SHELL=$PWD/scripts/cpu-by-line.sh    # then:
#   sort -rn test-artifacts/cpu-by-line.log | head
#
# Each line runs in a cpuacct cgroup of its own and appends "CPU s, wall s,
# exit code, the line" to $SLEDGE_CPU_LOG (test-artifacts/cpu-by-line.log).
# Servers that a line's children share with other lines (make unit's shared
# PostgreSQL and MariaDB) count with the line that started them. Without the
# controller, or not as root, lines run unmeasured.
log=${SLEDGE_CPU_LOG:-$PWD/test-artifacts/cpu-by-line.log}
root=/sys/fs/cgroup/cpuacct
cg=$root/sledge-line-$$
if ! mkdir -p "$cg" 2>/dev/null || ! echo $$ > "$cg/cgroup.procs" 2>/dev/null; then
	exec /bin/bash "$@"
fi
start=$(date +%s%N)
/bin/bash "$@"
rc=$?
end=$(date +%s%N)
ns=$(cat "$cg/cpuacct.usage")
mkdir -p "$(dirname "$log")"
line=${2//$'\n'/ }
L=${line:0:200} awk -v c="$ns" -v w=$((end - start)) -v rc=$rc \
	'BEGIN { printf "%8.1f %8.1f %3d  %s\n", c / 1e9, w / 1e9, rc, ENVIRON["L"] }' >> "$log"
echo $$ > "$root/cgroup.procs"
rmdir "$cg" 2>/dev/null
exit $rc
