//go:build !linux

package db

import "net"

// LoopConn is BlockingConn outside Linux: there is no event loop there.
func LoopConn(nc net.Conn) (net.Conn, error) { return BlockingConn(nc) }
