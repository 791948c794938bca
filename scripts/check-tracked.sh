#!/usr/bin/env bash
# Fails when a tracked file is an executable binary (a build output: ELF,
# Mach-O, PE, or any file with NUL bytes and an executable bit) or larger
# than 2 MB. A committed binary stays in every clone's history; data files
# that must be larger are listed by name in LARGE below, with the reason.
# One perl process reads every file (perl-base is in every Debian): a
# shell loop's head, od, stat and grep per file took 6 s of CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

# path<TAB>why: tracked files allowed over the limit (none today).
LARGE=""

git ls-files -s -z | LARGE=$LARGE perl -0 -ne '
	BEGIN {
		$limit = 2 * 1024 * 1024;
		%large = map { (split /\t/)[0] => 1 } grep { length } split /\n/, $ENV{LARGE};
	}
	chomp;
	my ($mode, $path) = /^([0-7]+) [0-9a-f]+ [0-9]+\t(.*)$/s or next;
	next unless -f $path; # deleted in the work tree, not yet committed
	my $size = -s _;
	if ($size > $limit && !$large{$path}) {
		print STDERR "tracked file over 2 MB: $path ($size bytes); remove it, or list it in scripts/check-tracked.sh with why\n";
		$bad = 1;
	}
	open(my $f, "<:raw", $path) or die "read $path: $!\n";
	read($f, my $head, 8192);
	close $f;
	if ($head =~ /^(\x7fELF|\xcf\xfa\xed\xfe|\xce\xfa\xed\xfe|\xfe\xed\xfa\xcf|\xfe\xed\xfa\xce|MZ)/) {
		print STDERR "tracked executable binary: $path; remove it with git rm --cached and ignore it\n";
		$bad = 1;
	} elsif ($mode eq "100755" && $head =~ /\x00/) {
		print STDERR "tracked binary with an executable bit: $path; remove it with git rm --cached and ignore it\n";
		$bad = 1;
	}
	END {
		exit 1 if $bad;
		print "tracked files: no executable binary, none over 2 MB\n";
	}
'
