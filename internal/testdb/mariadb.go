package testdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB test server settings: fast rather than durable, since the data
// directory is thrown away. innodb_flush_log_at_trx_commit=0 writes the log
// about once a second instead of at every commit; no binary log, no
// doublewrite buffer.
var mariadbSettings = []string{
	"--innodb-flush-log-at-trx-commit=0",
	"--innodb-buffer-pool-size=512M",
	"--innodb-log-file-size=256M",
	"--innodb-doublewrite=0",
	"--skip-log-bin",
	"--max-connections=200",
	"--local-infile=ON",
	// Users are matched by address: no DNS lookup per connection.
	"--skip-name-resolve",
}

// mariadbPassword is the root password of every private test server; it
// only guards a loopback server that lives as long as a test binary.
const mariadbPassword = "sledge-test"

// lookPath returns the first of names found in PATH or in /usr/sbin and
// /usr/local/sbin (server binaries live there, often outside a user's PATH).
func lookPath(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"} {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// StartMariaDB starts a private MariaDB (or MySQL-compatible mariadbd)
// server: a fresh data directory in a temporary directory, a free loopback
// port and a unix socket in that directory, and root with a password over
// both. It returns ErrUnavailable when the binaries are not installed.
func StartMariaDB(ctx context.Context) (*Server, error) { return startMariaDB(ctx, nil) }

// startMariaDB starts the server on loopback, or with ns inside that
// network namespace, listening on its address at MariaDB's usual port
// (netns.go), as another host's server would. Its unix socket is reached
// from outside the namespace as well: setting up root goes through it.
func startMariaDB(ctx context.Context, ns *Netns) (*Server, error) {
	server := lookPath("mariadbd", "mysqld")
	installDB := lookPath("mariadb-install-db", "mysql_install_db")
	if server == "" || installDB == "" {
		return nil, fmt.Errorf("mariadb: mariadbd or mariadb-install-db not found: %w", ErrUnavailable)
	}
	dir, err := os.MkdirTemp("", "sledge-mariadb-")
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	// mariadbd refuses to start as root unless told to run as root; as
	// anyone else --user is not allowed.
	var userArgs []string
	if os.Geteuid() == 0 {
		userArgs = []string{"--user=root"}
	} else if u, err := user.Current(); err == nil {
		userArgs = []string{"--user=" + u.Username}
	}
	data := filepath.Join(dir, "data")
	srv := &Server{Kind: "mariadb", Host: "127.0.0.1", Dir: dir, Socket: filepath.Join(dir, "mysqld.sock"), User: "root", Password: mariadbPassword}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}

	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}, userArgs...)
	if base := installBase(server); base != "" {
		args = append(args, "--basedir="+base)
	}
	if err := installMariaDB(ctx, installDB, data, args); err != nil {
		return fail(err)
	}

	// root's TCP account is for the address sledge connects from.
	client, port := "127.0.0.1", 3306
	if ns != nil {
		srv.Host, client = ns.Addr, ns.HostAddr
	} else if port, err = FreePort(); err != nil {
		return fail(err)
	}
	srv.Port = port
	logFile := filepath.Join(dir, "error.log")
	args = append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + srv.Socket,
		"--port=" + strconv.Itoa(port), "--bind-address=" + srv.Host,
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--log-error=" + logFile,
		"--tmpdir=" + dir}, userArgs...)
	args = append(args, mariadbSettings...)
	// launch starts mariadbd and waits until it answers (as root, with
	// the password once setupRoot has set it).
	var (
		mu     sync.Mutex
		cmd    *exec.Cmd
		exited chan error
	)
	launch := func(ctx context.Context, withPassword bool) error {
		argv := append([]string{server}, args...)
		if ns != nil {
			argv = ns.Wrap(argv...) // ip netns exec execs it: the same pid
		}
		c := exec.Command(argv[0], argv[1:]...)
		// Its own process group, so a Ctrl-C meant for the test does not
		// reach it before Stop shuts it down cleanly.
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			return fmt.Errorf("mariadb: start %s: %w", server, err)
		}
		// Closed after its one value, so that every later wait returns.
		ex := make(chan error, 1)
		go func() { ex <- c.Wait(); close(ex) }()
		mu.Lock()
		cmd, exited = c, ex
		mu.Unlock()
		return waitMariaDB(ctx, srv, ex, logFile, withPassword)
	}
	srv.stop = func() error {
		mu.Lock()
		c, ex := cmd, exited
		mu.Unlock()
		return stopMariaDB(c, ex, srv.Socket)
	}
	srv.restart = func(ctx context.Context, down time.Duration) error {
		if err := srv.stop(); err != nil {
			return err
		}
		select {
		case <-time.After(down):
		case <-ctx.Done():
			return ctx.Err()
		}
		return launch(ctx, true)
	}
	srv.pid = func() (int, error) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-exited:
			return 0, errors.New("mariadb: the server has exited")
		default:
		}
		return cmd.Process.Pid, nil
	}
	// The server runs in a process group of its own: should this process
	// end without Stop, the guard stops it (SIGTERM, SIGKILL after 30 s)
	// and removes its directory. srv.Stop disarms it.
	srv.guard = startGuard(killScript("$(cat "+shellQuote(filepath.Join(dir, "mysqld.pid"))+" 2>/dev/null)")+
		"rm -rf "+shellQuote(dir), nil)
	// FreePort's port can be taken by another process before the server
	// binds it (tests start servers side by side): then another port.
	for attempt := 1; ; attempt++ {
		err := launch(ctx, false)
		if err == nil {
			break
		}
		if ns != nil || attempt == 3 || !strings.Contains(err.Error(), "Address already in use") {
			srv.Stop()
			return nil, err
		}
		if port, err = FreePort(); err != nil {
			srv.Stop()
			return nil, err
		}
		srv.Port = port
		for i, a := range args {
			if strings.HasPrefix(a, "--port=") {
				args[i] = "--port=" + strconv.Itoa(port)
			}
		}
	}
	if err := setupRoot(ctx, srv, client); err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}

// installBase is the installation directory the server binary belongs to
// (/usr for /usr/sbin/mariadbd), which mariadb-install-db needs to find
// its SQL files when it is not the compiled-in default.
func installBase(server string) string {
	base := filepath.Dir(filepath.Dir(server))
	if _, err := os.Stat(filepath.Join(base, "share")); err != nil {
		return ""
	}
	return base
}

// socketDSN is root over the unix socket, with or without the password.
func socketDSN(srv *Server, withPassword bool) string {
	c := mysql.NewConfig()
	c.User = "root"
	if withPassword {
		c.Passwd = srv.Password
	}
	c.Net = "unix"
	c.Addr = srv.Socket
	c.Timeout = 2 * time.Second
	return c.FormatDSN()
}

// waitMariaDB waits up to 60 s for the socket to answer.
func waitMariaDB(ctx context.Context, srv *Server, exited <-chan error, logFile string, withPassword bool) error {
	db, err := sql.Open("mysql", socketDSN(srv, withPassword))
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("mariadb: server exited (%v): %s", werr, lastLines(log, 5))
		case <-ctx.Done():
			return fmt.Errorf("mariadb: waiting for the server: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("mariadb: server did not answer on %s within 60s: %v: %s", srv.Socket, err, lastLines(log, 5))
		}
	}
}

// setupRoot gives root a password, also for TCP connections from client
// (127.0.0.1, a separate account), and reads the version.
func setupRoot(ctx context.Context, srv *Server, client string) error {
	db, err := sql.Open("mysql", socketDSN(srv, false))
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	defer db.Close()
	pw := strings.ReplaceAll(srv.Password, "'", "''")
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'root'@'" + client + "' IDENTIFIED BY '" + pw + "'",
		"ALTER USER 'root'@'" + client + "' IDENTIFIED BY '" + pw + "'",
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'" + client + "' WITH GRANT OPTION",
		"ALTER USER 'root'@'localhost' IDENTIFIED BY '" + pw + "'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mariadb: set up root: %w", err)
		}
	}
	db.Close()
	db, err = sql.Open("mysql", socketDSN(srv, true))
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&srv.Version); err != nil {
		return fmt.Errorf("mariadb: version: %w", err)
	}
	return nil
}

// stopMariaDB asks the server to shut down (SIGTERM: a clean shutdown),
// waits up to 30 s, then kills it.
func stopMariaDB(cmd *exec.Cmd, exited <-chan error, socket string) error {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("mariadb: stop: %w", err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("mariadb: server on %s did not stop within 30s and was killed", socket)
}

// lastLines returns the last n non-empty lines of out on one line.
// installMariaDB runs mariadb-install-db into data, once more on a fresh
// directory if the first attempt fails: a CI run once lost a whole package's
// tests to one failed bootstrap whose cause its generic help text hid. The
// error names the bootstrap server's own [ERROR] lines and the free space.
func installMariaDB(ctx context.Context, installDB, data string, args []string) error {
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		if attempt > 1 {
			if rerr := os.RemoveAll(data); rerr != nil {
				return fmt.Errorf("mariadb: remove %s after a failed install: %w (install: %v)", data, rerr, err)
			}
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return fmt.Errorf("mariadb: %s: %w (install: %v)", filepath.Base(installDB), ctx.Err(), err)
			}
		}
		ictx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		out, runErr := exec.CommandContext(ictx, installDB, args...).CombinedOutput()
		cancel()
		if runErr == nil {
			return nil
		}
		err = fmt.Errorf("mariadb: %s (attempt %d of 2): %w: %s%s", filepath.Base(installDB), attempt, runErr, installErrors(out), freeSpace(filepath.Dir(data)))
	}
	return err
}

// installErrors is what mariadb-install-db's output says went wrong: the
// bootstrap server's [ERROR] lines, else the output's last lines.
func installErrors(out []byte) string {
	var errs []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "[ERROR]") || strings.Contains(line, "ERROR:") {
			errs = append(errs, strings.TrimSpace(line))
		}
	}
	if len(errs) == 0 {
		return lastLines(out, 5)
	}
	if len(errs) > 5 {
		errs = errs[:5]
	}
	return strings.Join(errs, " | ")
}

// freeSpace says how much room dir's file system has left, which a full
// disk makes the first thing to know.
func freeSpace(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return ""
	}
	return fmt.Sprintf(" (%s: %d MiB free)", dir, st.Bavail*uint64(st.Bsize)>>20)
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(string(bytes.TrimSpace(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
