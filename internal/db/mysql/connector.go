package mysql

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// connectTries bounds connectAgain's attempts.
const connectTries = 3

// connectAgain is go-sql-driver's connector, with a fresh attempt when a
// connection fails in the handshake with "malformed packet". The driver
// (v1.9 on) cuts a trailing NUL off an auth switch request's data, which
// mysql_native_password's seed carries; MariaDB's ed25519 seed is 32 random
// bytes without one, so when the last byte is 0, one connection in 256,
// the driver has 31 and gives up. The next connection gets a new seed.
type connectAgain struct{ sqldriver.Connector }

// newConnector is mysql.NewConnector for every go-sql-driver connection of
// this package.
func newConnector(cfg *mysql.Config) (sqldriver.Connector, error) {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql URL: %w", err)
	}
	return connectAgain{c}, nil
}

func (c connectAgain) Connect(ctx context.Context) (sqldriver.Conn, error) {
	for i := 1; ; i++ {
		conn, err := c.Connector.Connect(ctx)
		if err == nil || i == connectTries || !errors.Is(err, mysql.ErrMalformPkt) || ctx.Err() != nil {
			return conn, err
		}
	}
}
