package sysprobe

import "golang.org/x/sys/unix"

// archSyscalls are the waits of system calls only this architecture has.
var archSyscalls = map[int]waitKind{
	unix.SYS_POLL:       kindPoll,
	unix.SYS_SELECT:     kindIdle, // an fd_set: not read, see the package comment
	unix.SYS_EPOLL_WAIT: kindEpoll,
}
