#!/usr/bin/env bash
# Fails when a tracked file is an executable binary (a build output: ELF,
# Mach-O, PE, or any file with NUL bytes and an executable bit) or larger
# than 2 MB. A committed binary stays in every clone's history; data files
# that must be larger are listed by name in LARGE below, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=$((2 * 1024 * 1024))
# path<TAB>why: tracked files allowed over the limit (none today).
LARGE=""

bad=0
while IFS= read -r -d '' entry; do
	mode=${entry%% *}
	path=${entry#*$'\t'}
	[[ -f $path ]] || continue # deleted in the work tree, not yet committed
	size=$(stat -c %s -- "$path")
	if ((size > LIMIT)) && ! grep -qxF -- "$path" <<<"$(cut -f1 <<<"$LARGE")"; then
		echo "tracked file over 2 MB: $path ($size bytes); remove it, or list it in scripts/check-tracked.sh with why" >&2
		bad=1
	fi
	magic=$(head -c 4 -- "$path" | od -An -tx1 | tr -d ' \n')
	case $magic in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | 4d5a*)
		echo "tracked executable binary: $path; remove it with git rm --cached and ignore it" >&2
		bad=1
		continue
		;;
	esac
	if [[ $mode == 100755 ]] && head -c 8192 -- "$path" | grep -qP '\x00'; then
		echo "tracked binary with an executable bit: $path; remove it with git rm --cached and ignore it" >&2
		bad=1
	fi
done < <(git ls-files -s -z | sed -z 's/^\([0-7]*\) [0-9a-f]* [0-9]*\t/\1 \t/')

if ((bad)); then
	exit 1
fi
echo "tracked files: no executable binary, none over 2 MB"
