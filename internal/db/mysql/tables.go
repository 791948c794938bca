package mysql

import (
	"context"
	"fmt"
)

// TableNames lists the tables of the URL's database (db.TableLister).
func (d *DB) TableNames(ctx context.Context) ([]string, error) {
	rows, err := d.pool.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1")
	if err != nil {
		return nil, fmt.Errorf("mysql: list tables: %w", d.connErr(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("mysql: list tables: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
