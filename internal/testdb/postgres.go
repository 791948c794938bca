package testdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// postgresReady bounds how long StartPostgres waits for the server.
const postgresReady = 30 * time.Second

// postgresSettings are for fast tests, not durability: a crash loses the
// throwaway cluster anyway.
var postgresSettings = []string{
	"fsync=off",
	"synchronous_commit=off",
	"full_page_writes=off",
	"shared_buffers=256MB",
	"max_connections=100",
}

// StartPostgres starts a private PostgreSQL server (the newest installed
// under /usr/lib/postgresql) with its data directory in a new temporary
// directory, listening on 127.0.0.1 at a free port and on a unix socket in
// that directory. Its superuser logs in with a password (scram-sha-256 over
// TCP and the socket), so authentication failures can be tested. The
// caller's Stop shuts it down and removes the directory.
func StartPostgres(ctx context.Context) (*Server, error) {
	return StartPostgresWith(ctx)
}

// StartPostgresWith is StartPostgres with settings of the caller's
// ("max_connections=300") after the default ones, which they override:
// benchmarks need more connections than tests.
func StartPostgresWith(ctx context.Context, settings ...string) (*Server, error) {
	for _, o := range settings {
		if k, _, ok := strings.Cut(o, "="); !ok || k == "" || strings.ContainsAny(o, " \t\n'\"") {
			return nil, fmt.Errorf("postgres: setting %q: want name=value without spaces or quotes", o)
		}
	}
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sledge-pg-*")
	if err != nil {
		return nil, fmt.Errorf("postgres: temp dir: %w", err)
	}
	srv, err := startPostgres(ctx, bin, dir, append(slices.Clip(postgresSettings), settings...), nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return srv, nil
}

// postgresBin returns the bin directory of the newest installed version.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("postgres: no /usr/lib/postgresql/*/bin/initdb: %w", ErrUnavailable)
	}
	// Versions are numbers: 9.6 < 10 < 15.
	sort.Slice(found, func(i, j int) bool {
		return versionOf(found[i]) < versionOf(found[j])
	})
	return found[len(found)-1], nil
}

func versionOf(bin string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(bin)), 64)
	return v
}

// startPostgres starts the server on loopback, or with ns inside that
// network namespace, listening on its address at PostgreSQL's usual port
// (netns.go), as another host's server would.
func startPostgres(ctx context.Context, bin, dir string, settings []string, ns *Netns) (*Server, error) {
	// initdb and postgres refuse to run as root: run them as postgres, in
	// a directory that user owns.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("postgres: running as root needs the postgres user to run the server: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("postgres: chown %s: %w", dir, err)
		}
	}
	run := func(ctx context.Context, name string, args ...string) ([]byte, error) {
		argv := append([]string{filepath.Join(bin, name)}, args...)
		if ns != nil {
			// ip netns exec needs root; the server runs as postgres
			// inside the namespace.
			argv = ns.Wrap(append([]string{"runuser", "-u", "postgres", "--"}, argv...)...)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		if cred != nil && ns == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.Bytes(), err
	}

	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		return nil, fmt.Errorf("postgres: password: %w", err)
	}
	s := &Server{
		Kind: "postgres", Host: "127.0.0.1", Socket: dir, Dir: dir,
		User: "sledge", Password: hex.EncodeToString(pw),
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cred != nil {
		if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("postgres: chown %s: %w", pwfile, err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := run(ctx, "initdb", "-D", data, "-U", s.User, "--pwfile="+pwfile,
		"--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, fmt.Errorf("postgres: initdb: %w: %s", err, pgTail(out, 5))
	}
	_ = os.Remove(pwfile)

	listen, port := "127.0.0.1", 5432
	if ns != nil {
		// sledge connects from the host's end of the veth pair.
		listen, s.Host = ns.Addr, ns.Addr
		line := "host all all " + ns.HostAddr + "/32 scram-sha-256\n"
		if err := appendFile(filepath.Join(data, "pg_hba.conf"), line); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
	} else {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	var opts []string
	logFile := filepath.Join(dir, "postgres.log")
	wait := strconv.Itoa(int(postgresReady / time.Second))
	// FreePort's port can be taken by another process before the server
	// binds it (tests start servers side by side): then another port.
	for attempt := 1; ; attempt++ {
		s.Port = port
		opts = []string{"-c listen_addresses=" + listen, "-p " + strconv.Itoa(port),
			"-c unix_socket_directories=" + dir}
		// A later -c of the same name wins: the caller's settings override.
		for _, o := range settings {
			opts = append(opts, "-c "+o)
		}
		// pg_ctl -w returns once the server accepts connections, within -t.
		out, err := run(ctx, "pg_ctl", "-D", data, "-l", logFile, "-w", "-t", wait,
			"-o", strings.Join(opts, " "), "start")
		if err == nil {
			break
		}
		logTail, _ := os.ReadFile(logFile)
		if ns != nil || attempt == 3 || !strings.Contains(string(logTail), "Address already in use") {
			return nil, fmt.Errorf("postgres: start: %w: %s %s", err, pgTail(out, 3), pgTail(logTail, 5))
		}
		_ = os.Remove(logFile) // the next attempt's log on its own
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	// pg_ctl daemonized the server: should this process end without
	// Stop, the guard stops it (immediate: a throwaway) and removes it.
	s.guard = startGuard(fmt.Sprintf("%s -D %s -m immediate -w stop >/dev/null 2>&1\nrm -rf %s",
		shellQuote(filepath.Join(bin, "pg_ctl")), shellQuote(data), shellQuote(dir)), cred)
	s.stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), postgresReady)
		defer cancel()
		if out, err := run(ctx, "pg_ctl", "-D", data, "-m", "fast", "-w", "stop"); err != nil {
			return fmt.Errorf("postgres: stop: %w: %s", err, pgTail(out, 3))
		}
		return nil
	}
	// A fast shutdown, the server down for a while, and a start with the
	// same options: same data directory, port and socket.
	s.restart = func(ctx context.Context, down time.Duration) error {
		if err := s.stop(); err != nil {
			return err
		}
		select {
		case <-time.After(down):
		case <-ctx.Done():
			return ctx.Err()
		}
		if out, err := run(ctx, "pg_ctl", "-D", data, "-l", logFile, "-w", "-t", wait,
			"-o", strings.Join(opts, " "), "start"); err != nil {
			logTail, _ := os.ReadFile(logFile)
			return fmt.Errorf("postgres: restart: %w: %s %s", err, pgTail(out, 3), pgTail(logTail, 5))
		}
		return nil
	}
	s.pid = func() (int, error) { return pidFileFirst(filepath.Join(data, "postmaster.pid")) }
	out, err := run(ctx, "postgres", "--version")
	if err != nil {
		if s.stop() == nil {
			s.guard.disarm()
		}
		return nil, fmt.Errorf("postgres: version: %w", err)
	}
	// "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
	v := strings.TrimSpace(string(out))
	if i := strings.Index(v, ") "); i >= 0 {
		v = v[i+2:]
	}
	s.Version = v
	return s, nil
}

// appendFile appends text to an existing file.
func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pgTail is the end of a command's output, on one line, for an error.
func pgTail(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
