package db

import "context"

// Bytes are a server's own count of bytes sent and received, over every
// session (its clients, sledge's control connection, anyone else).
type Bytes struct {
	Sent     int64
	Received int64
}

// ServerWire is implemented by databases that count the bytes they send
// and receive (MariaDB/MySQL Bytes_sent and Bytes_received). ok is false
// when this server does not tell.
type ServerWire interface {
	ServerBytes(ctx context.Context) (b Bytes, ok bool, err error)
}
