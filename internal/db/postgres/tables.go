package postgres

import (
	"context"
	"fmt"
)

// TableNames lists the tables of the current schema (db.TableLister).
func (d *DB) TableNames(ctx context.Context) ([]string, error) {
	c, err := d.getAdmin(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	rows, err := c.Query(ctx, "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1")
	if err == nil {
		for rows.Next() {
			var n string
			if err = rows.Scan(&n); err != nil {
				break
			}
			out = append(out, n)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	d.putAdmin(c, err)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", classify(err))
	}
	return out, nil
}
