package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/promexp"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/service"
	"github.com/sledge-bench/sledge/internal/workload"
)

func newServe(env *Env) *cobra.Command {
	var listen, tokenFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the job API and the page that starts, follows and compares runs",
		Long: `Serve an HTTP API over the job store and a page that uses it: start builds,
runs, checks and compares, follow a run's transaction counter live, stop,
delete and compare jobs (docs/serve.md).

Every /api/ call needs "Authorization: Bearer TOKEN". With --token-file the
token is that file's content; without it, sledge keeps a random token in
serve.token next to the job store (mode 0600), printing it once, when it
creates it, with the page's URL. Listening beyond loopback needs
--token-file.

Jobs run in this process exactly as the command line runs them, and are
recorded in the same job store (--jobs-db): jobs of the command line show
in the service and the other way round. A database runs one job at a time
unless a job asks for "concurrent": true.

Ctrl-C or SIGTERM stops the service: its running jobs stop as on Ctrl-C
(recorded as interrupted, with what they measured) and it exits 0; more
copies change nothing, but a third stops the jobs without waiting for
their transactions in flight (exit 130 if saving them then takes over 5 s).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd, env, listen, tokenFile)
		},
	}
	// The service's own exit statuses (docs/serve.md), not the table of
	// the commands that measure: a signal ends it with 0.
	cmd.SetUsageTemplate((&cobra.Command{}).UsageTemplate() + serveExitHelp)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the API token (default: serve.token next to the job store, created when missing)")
	return cmd
}

// serveExitHelp ends `sledge serve --help`: the service's exit statuses.
const serveExitHelp = `
Exit status:
  0    stopped by Ctrl-C or SIGTERM, however many arrive (its running jobs are saved interrupted)
  1    it could not run: the address is taken, the job store cannot be opened
  2    bad input: a bad --listen, beyond loopback without --token-file, a missing or empty token file
  70   internal error in sledge (please report it)
  130  after a third Ctrl-C or SIGTERM, when its jobs' results could not be saved within 5 s
`

func runServe(cmd *cobra.Command, env *Env, listen, tokenFile string) error {
	ctx := cmd.Context()
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return usageErr("--listen %q: want host:port, such as 127.0.0.1:8080", listen)
	}
	if tokenFile == "" && !loopback(host) {
		return usageErr("--listen %s reaches beyond this machine: give --token-file FILE with a token of your own", listen)
	}
	store, err := jobsPath(cmd, env)
	if err != nil {
		return err
	}
	token, created, err := serveToken(tokenFile, store)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	defer ln.Close()
	cfg := service.Config{JobsDB: store, Token: token, Execute: Execute, Check: CheckSpec, Getenv: env.Getenv,
		Version: Version(), DefaultDB: func(wl string) string { return defaultDB(env, wl) }}
	// /metrics: the Prometheus exporter follows every job this service
	// runs (docs/metrics.md).
	exp := promexp.New()
	cfg.Metrics, cfg.Outputs = exp.Handler(), []runner.Output{exp}
	svc, err := service.New(ctx, cfg)
	if err != nil {
		return err
	}
	handler := svc.Handler()
	url := "http://" + ln.Addr().String() + "/"
	if created {
		fmt.Fprintf(env.Stderr, "sledge serve: new API token in %s; open %s#token=%s\n", tokenPath(tokenFile, store), url, token)
	}
	fmt.Fprintf(env.Stderr, "sledge serve: listening on %s (job store %s)\n", url, store)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		fmt.Fprintf(env.Stderr, "sledge serve: stopping: running jobs end interrupted\n")
	}
	// Jobs first, so that their event streams say done; then the server.
	cerr := svc.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", listen, err)
	}
	return cerr
}

// loopback reports whether a listen host is only reachable from this
// machine. "" and 0.0.0.0 listen everywhere.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func tokenPath(tokenFile, store string) string {
	if tokenFile != "" {
		return tokenFile
	}
	return filepath.Join(filepath.Dir(store), "serve.token")
}

// serveToken reads the token from --token-file, or from serve.token next
// to the job store, creating that with a random token (0600) when
// missing. created says the token is new: it is printed only then.
func serveToken(tokenFile, store string) (token string, created bool, err error) {
	path := tokenPath(tokenFile, store)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		token = strings.TrimSpace(string(b))
		if token == "" || strings.ContainsAny(token, " \t\r\n") {
			return "", false, usageErr("token file %s: want one token on one line", path)
		}
		return token, false, nil
	case tokenFile != "":
		return "", false, usageErr("--token-file: %v", runner.UnwrapPath(err))
	case !os.IsNotExist(err):
		return "", false, fmt.Errorf("read token %s: %w", path, err)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", false, fmt.Errorf("new token: %w", err)
	}
	token = hex.EncodeToString(raw)
	// O_EXCL: two first starts at once must not hand out two tokens.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if os.IsExist(err) {
			return serveToken(tokenFile, store)
		}
		return "", false, fmt.Errorf("store token %s: %w", path, err)
	}
	_, err = f.WriteString(token + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("store token %s: %w", path, err)
	}
	return token, true, nil
}

// defaultDB is the database a spec without db runs on, redacted: $SLEDGE_DB,
// else the embedded SQLite file of the workload (pgbench scripts use
// tpcb's), as resolve picks it.
func defaultDB(env *Env, wl string) string {
	if u := env.Getenv("SLEDGE_DB"); u != "" {
		return db.Redact(u)
	}
	p, err := runner.DefaultDBPath(env.Getenv, wl)
	if err != nil {
		return ""
	}
	return "sqlite://" + p
}

// serviceOwned are the options the service sets itself.
var serviceOwned = map[string]string{
	"db":         "give the database as the job's \"db\"",
	"json":       "the service always reads the JSON result",
	"jobs-db":    "the service records jobs in its own job store",
	"no-job":     "the service records every job",
	"cpuprofile": "not available through the service",
	"help":       "not an option of a job",
	// Transaction logs are files written where the process runs: an
	// API client must not choose paths on the service's host.
	"log":                "transaction log files are not available through the service",
	"log-prefix":         "transaction log files are not available through the service",
	"aggregate-interval": "transaction log files are not available through the service",
	"sampling-rate":      "transaction log files are not available through the service",
}

// CheckSpec refuses a spec the command would refuse on its options, as a
// *runner.FieldError naming the field: an unknown workload or option
// ("options.vuz"), a value its flag does not take, a malformed database
// URL. It parses the options with the command's own flags, then checks
// them together as the command does before it opens anything (a dry run:
// "vus": 0, a duration beside iterations, a bad threshold), with getenv
// the environment the job would see. Nothing is opened or run.
func CheckSpec(s runner.Spec, getenv func(string) string) error {
	if err := s.Check(); err != nil {
		return err
	}
	if s.Workload != "" {
		if _, err := workload.Lookup(s.Workload); err != nil {
			return &runner.FieldError{Field: "workload", Msg: err.Error()}
		}
	}
	if s.DB != "" {
		if _, err := db.ParseURL(s.DB); err != nil {
			return &runner.FieldError{Field: "db", Msg: db.Redact(err.Error())}
		}
	}
	names := make([]string, 0, len(s.Options))
	for n := range s.Options {
		names = append(names, n)
	}
	sort.Strings(names)
	none := func(string) string { return "" }
	for _, n := range names {
		if why, ok := serviceOwned[n]; ok {
			return &runner.FieldError{Field: "options." + n, Msg: why}
		}
		// A fresh command per option: each is parsed alone, so the error
		// names it.
		root := newRoot(context.Background(), &Env{Stdout: discard{}, Stderr: discard{}, Getenv: none})
		cmd, _, err := root.Find([]string{s.Kind})
		if err != nil || cmd == root {
			return &runner.FieldError{Field: "kind", Msg: fmt.Sprintf("%q is not a command", s.Kind)}
		}
		if cmd.LocalFlags().Lookup(n) == nil {
			return &runner.FieldError{Field: "options." + n, Msg: fmt.Sprintf("sledge %s has no --%s (see sledge %s --help)", s.Kind, n, s.Kind)}
		}
		args, err := runner.Spec{Kind: s.Kind, Options: map[string]any{n: s.Options[n]}}.Args(false)
		if err != nil {
			var fe *runner.FieldError
			if errors.As(err, &fe) {
				return fe
			}
			return &runner.FieldError{Field: "options." + n, Msg: err.Error()}
		}
		if err := cmd.ParseFlags(args[1:]); err != nil {
			return &runner.FieldError{Field: "options." + n, Msg: cleanFlagError(err)}
		}
	}
	// The options together, as the command checks them before it opens
	// anything; its message names the flag ("--vus must be at least 1").
	if res := runner.Execute(context.Background(), s, runner.Exec{DryRun: true, NoJob: true, Getenv: getenv}); res.Code != ExitOK {
		return &runner.FieldError{Field: "options", Msg: res.Err}
	}
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
