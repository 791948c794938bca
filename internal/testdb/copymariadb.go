package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
)

// exportMu: one FLUSH TABLES … FOR EXPORT at a time in this process. Each
// writes, and UNLOCK TABLES removes, the .cfg files of the tables it
// exports, so two exports of one template would remove each other's.
var exportMu sync.Mutex

// copyMariaDB makes database name a copy of database template: its tables
// by InnoDB's transportable tablespaces (each table's .ibd and .cfg file
// copied while FLUSH TABLES … FOR EXPORT holds it still, then imported;
// INSERT … SELECT cost the server 2.7 s per 1-warehouse TPC-C copy), and
// its routines from SHOW CREATE, each with its own sql_mode. The files are
// copied in the server's data directory: a server this process started,
// not the run's shared one.
func (s *Server) copyMariaDB(ctx context.Context, template, name string) error {
	if s.Dir == "" {
		return errors.New("the server's data directory is unknown (the run's shared server): copies need a server of the package's own")
	}
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = s.User, s.Password, "unix", s.Socket
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return err
	}
	defer d.Close()
	// One session: FOR EXPORT holds until UNLOCK TABLES on it, and USE
	// stays in effect for the routines.
	conn, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	exec := func(q string) error {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			first, _, _ := strings.Cut(q, "\n")
			return fmt.Errorf("%s: %w", first, err)
		}
		return nil
	}
	list := func(q string) ([][2]string, error) {
		rows, err := conn.QueryContext(ctx, q, template)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][2]string
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				return nil, err
			}
			out = append(out, [2]string{a, b})
		}
		return out, rows.Err()
	}
	tables, err := list("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = ?")
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return fmt.Errorf("%s has no tables", template)
	}
	routines, err := list("SELECT routine_name, routine_type FROM information_schema.routines WHERE routine_schema = ?")
	if err != nil {
		return err
	}
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name} {
		if err := exec(q); err != nil {
			return err
		}
	}
	names := make([]string, len(tables))
	for i, tb := range tables {
		if tb[1] != "BASE TABLE" {
			return fmt.Errorf("%s is a %s, which a copy does not take", tb[0], tb[1])
		}
		names[i] = template + "." + tb[0]
		for _, q := range []string{"CREATE TABLE " + name + "." + tb[0] + " LIKE " + names[i], "ALTER TABLE " + name + "." + tb[0] + " DISCARD TABLESPACE"} {
			if err := exec(q); err != nil {
				return err
			}
		}
	}
	data := filepath.Join(s.Dir, "data")
	if err := func() error {
		exportMu.Lock()
		defer exportMu.Unlock()
		if err := exec("FLUSH TABLES " + strings.Join(names, ", ") + " FOR EXPORT"); err != nil {
			return err
		}
		defer exec("UNLOCK TABLES")
		for _, tb := range tables {
			for _, ext := range []string{".ibd", ".cfg"} {
				b, err := os.ReadFile(filepath.Join(data, template, tb[0]+ext))
				if err == nil {
					err = os.WriteFile(filepath.Join(data, name, tb[0]+ext), b, 0o660)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	}(); err != nil {
		return err
	}
	for _, tb := range tables {
		if err := exec("ALTER TABLE " + name + "." + tb[0] + " IMPORT TABLESPACE"); err != nil {
			return err
		}
		_ = os.Remove(filepath.Join(data, name, tb[0]+".cfg"))
	}
	// SHOW CREATE's columns: name, sql_mode, the text, then character sets
	// and collation.
	type routine struct{ mode, text string }
	var texts []routine
	for _, r := range routines {
		var vals [6]sql.NullString
		if err := conn.QueryRowContext(ctx, fmt.Sprintf("SHOW CREATE %s %s.%s", r[1], template, r[0])).
			Scan(&vals[0], &vals[1], &vals[2], &vals[3], &vals[4], &vals[5]); err != nil {
			return fmt.Errorf("SHOW CREATE %s %s (it needs the routine's privileges): %w", r[1], r[0], err)
		}
		texts = append(texts, routine{vals[1].String, vals[2].String})
	}
	if err := exec("USE " + name); err != nil {
		return err
	}
	for _, r := range texts {
		if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = ?", r.mode); err != nil {
			return err
		}
		if err := exec(r.text); err != nil {
			return err
		}
	}
	return nil
}
