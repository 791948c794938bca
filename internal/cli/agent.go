package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/agent"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// agentOptions are sledge agent's flags.
type agentOptions struct {
	listen, tokenFile, tlsCert, tlsKey string
	allowStacks                        bool
}

func newAgent(env *Env) *cobra.Command {
	var o agentOptions
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Serve this host's and a database server's side of the cost to runs elsewhere",
		Long: `Run sledge agent on a database's host: it serves what sledge measures of a
server on its own machine (the host's CPU shares, the server's processes
and threads: CPU, context switches, run-queue delay, syscall bytes, where
its threads wait, the traffic on its port, and on-CPU stacks with
--allow-stacks) to runs elsewhere, which name it with --agent HOST:PORT
(docs/agent.md). It needs no database credentials and only reads /proc and
/sys; it sees another user's processes only as that user or root.

Beyond loopback, --token-file is required: every request must then carry
"Authorization: Bearer TOKEN". The token is read from the file only (never
from the environment) and is never printed or logged. With --tls-cert and
--tls-key it serves HTTPS.

HTTP API v1 (JSON; errors are {"error":"one line"}):
  GET    /v1/info                        the agent, its version and API versions
  POST   /v1/watches                     {"target":{"port":N}|{"pid":N}|{"process":"NAME"},"stacks":bool}
                                         201 {"id":…,"found":[…],"state_hz":N}; 404 no such server;
                                         429 at its maximum of 4 watches
  GET    /v1/watches/{id}/snapshot       everything now, cumulative since the watch began
  GET    /v1/watches/{id}/seconds?after=N  the per-second samples after seq N
  POST   /v1/watches/{id}/stacks/start   begin recording on-CPU stacks (perf, 99 Hz)
  POST   /v1/watches/{id}/stacks/stop    end it: the stacks, folded
  DELETE /v1/watches/{id}                end the watch
A watch no request touched for 30 s is closed. A path of another API
version (/v2/…) is answered 404 with the versions this agent serves.

It prints one line when it listens, then only errors. Ctrl-C or SIGTERM
stops it: it stops listening, closes its watches (and any perf they
started) and exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgent(cmd.Context(), env, o)
		},
	}
	// The agent's own exit statuses, not the table of the commands that
	// measure: a signal ends it with 0.
	cmd.SetUsageTemplate((&cobra.Command{}).UsageTemplate() + agentExitHelp)
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:"+strconv.Itoa(agent.DefaultPort), "address to listen on (HOST:PORT; port 0 picks a free one); beyond loopback needs --token-file")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the token every request must carry (one line)")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate: serve HTTPS (with --tls-key)")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.BoolVar(&o.allowStacks, "allow-stacks", false, "let runs record on-CPU stacks of the server with perf (when installed)")
	return cmd
}

// agentExitHelp ends `sledge agent --help`: the agent's exit statuses.
const agentExitHelp = `
Exit status:
  0    stopped by Ctrl-C or SIGTERM
  1    it could not run: the address is in use or cannot be listened on
  2    bad input: a bad --listen, beyond loopback without --token-file, an unreadable or empty
       token file, only one of --tls-cert and --tls-key, a certificate that cannot be loaded
  70   internal error in sledge (please report it)
  130  after a third Ctrl-C or SIGTERM, when closing its watches took over 5 s
`

func runAgent(ctx context.Context, env *Env, o agentOptions) error {
	host, port, err := net.SplitHostPort(o.listen)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return usageErr("--listen %q: want HOST:PORT, such as 127.0.0.1:%d", o.listen, agent.DefaultPort)
	}
	if o.tokenFile == "" && !loopback(host) {
		return usageErr("--listen %s reaches beyond this machine: give --token-file FILE with a token of your own", o.listen)
	}
	var token string
	if o.tokenFile != "" {
		if token, err = agent.ReadToken(o.tokenFile); err != nil {
			return usageErr("%v", err)
		}
	}
	var tlsCfg *tls.Config
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return usageErr("--tls-cert and --tls-key go together: give both, or neither")
	case o.tlsCert != "":
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return usageErr("--tls-cert %s, --tls-key %s: %v", o.tlsCert, o.tlsKey, err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listen on %s: the address is in use (another sledge agent?)", o.listen)
		}
		return fmt.Errorf("listen on %s: %v", o.listen, errors.Unwrap(err))
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	defer ln.Close()

	logf := func(format string, a ...any) {
		fmt.Fprintf(env.Stderr, "sledge agent: %s\n", oneLine(fmt.Sprintf(format, a...)))
	}
	srv := agent.New(agent.Config{Version: Version(), Token: token, AllowStacks: o.allowStacks, Logf: logf,
		// The agent's own CPU is not "other" on its host.
		Options: sysprobe.Options{Exclude: []int{os.Getpid()}}})
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 16 << 10, ErrorLog: log.New(oneLineWriter{env}, "sledge agent: ", 0),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	fmt.Fprintf(env.Stderr, "sledge agent %s listening on %s (%s)\n", Version(), ln.Addr(), agentTraits(srv, token != "", tlsCfg != nil))

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	// Stop listening first, so that no watch opens while they close.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	cerr := srv.Close()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", o.listen, err)
	}
	return cerr
}

// agentTraits is the start line's parenthesis: the API, TLS and token,
// and whether runs can have stacks.
func agentTraits(srv *agent.Server, token, useTLS bool) string {
	parts := []string{"API v" + strconv.Itoa(sysprobe.APIVersion)}
	if useTLS {
		parts = append(parts, "TLS")
	}
	if token {
		parts = append(parts, "token required")
	}
	switch st := srv.Stacks(); {
	case !st.Allowed:
		parts = append(parts, "stacks: not allowed")
	case !st.Perf:
		parts = append(parts, "stacks: allowed, but perf is not installed")
	default:
		parts = append(parts, "stacks: allowed")
	}
	return strings.Join(parts, "; ")
}

// oneLineWriter writes net/http's own error lines (a TLS handshake that
// failed) to stderr, one line each.
type oneLineWriter struct{ env *Env }

func (w oneLineWriter) Write(p []byte) (int, error) {
	fmt.Fprintln(w.env.Stderr, oneLine(string(p)))
	return len(p), nil
}
