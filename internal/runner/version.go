package runner

import "runtime/debug"

// Version is the module version the Go toolchain stamped into the binary
// (go install …@v1.2.3), else the VCS revision it was built from ("devel
// 1a2b3c4d5e6f", "+modified" with uncommitted changes), else "dev". Jobs
// record it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, _, modified := VCSInfo(bi)
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += "+modified"
	}
	return "devel " + rev
}

// VCSInfo reads the revision, its time and the modified flag that the Go
// toolchain stamps into binaries built inside a VCS checkout.
func VCSInfo(bi *debug.BuildInfo) (rev, at string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, at, modified
}
