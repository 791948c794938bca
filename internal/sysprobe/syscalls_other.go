//go:build !amd64

package sysprobe

// archSyscalls: arm64 and the other generic-table architectures have only
// ppoll, pselect6 and epoll_pwait, which are in the common table.
var archSyscalls = map[int]waitKind{}
