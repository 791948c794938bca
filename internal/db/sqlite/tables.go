package sqlite

import (
	"context"
	"fmt"
)

// TableNames lists the database's tables (db.TableLister).
func (d *DB) TableNames(ctx context.Context) ([]string, error) {
	rows, err := d.pool.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("sqlite: list tables: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
