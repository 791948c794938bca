package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// DefaultTimeout bounds each of the client's calls when ClientOptions
// says none.
const DefaultTimeout = 2 * time.Second

// StacksTimeout is the least a StopStacks call waits: perf script on a
// minute of 99 Hz stacks of a busy server takes seconds.
const StacksTimeout = 30 * time.Second

// maxAnswer bounds what the client reads of one answer (folded stacks are
// the largest).
const maxAnswer = 64 << 20

// ClientOptions are how a run reaches its agent.
type ClientOptions struct {
	// Token is sent as "Authorization: Bearer TOKEN" ("": none).
	Token string
	// CAFile is a PEM file of the CA that signed the agent's certificate;
	// setting it means TLS (as does an https:// address).
	CAFile string
	// Timeout bounds each call (DefaultTimeout when 0).
	Timeout time.Duration
}

// The kinds of the client's errors (errors.Is); their messages are one
// line that names the agent and never holds the token. An agent that found
// no server process gives sysprobe.ErrNotFound.
var (
	ErrUnreachable = errors.New("agent unreachable")
	ErrToken       = errors.New("the token was refused")
	ErrAPIVersion  = errors.New("the agent serves another API version")
)

// Error is an error from an agent or on the way to it.
type Error struct {
	Msg  string // the whole line
	Kind error  // ErrUnreachable, ErrToken, ErrAPIVersion, sysprobe.ErrNotFound or nil
	Code int    // the HTTP status, 0 when there was no answer
	Err  error  // the cause, if any
}

func (e *Error) Error() string        { return e.Msg }
func (e *Error) Unwrap() error        { return e.Err }
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }
func errorf(kind error, code int, cause error, format string, a ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, a...), Kind: kind, Code: code, Err: cause}
}

// Client is a connection to one agent.
type Client struct {
	base    string // scheme://host:port[/path], no trailing '/'
	addr    string // host:port, as errors and Source.Name say it
	token   string
	timeout time.Duration
	http    *http.Client
	info    Info
}

// Dial reaches the agent at addr (HOST:PORT, or a URL http://HOST:PORT or
// https://HOST:PORT; the port defaults to 7078) and reads its /v1/info. A
// wrong token, an unreachable agent and an agent that does not serve API
// v1 are distinct errors (errors.Is ErrToken, ErrUnreachable,
// ErrAPIVersion).
func Dial(ctx context.Context, addr string, o ClientOptions) (*Client, error) {
	base, hostport, useTLS, err := parseAddr(addr, o.CAFile != "")
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // an agent is reached directly
	if useTLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("agent CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("agent CA file %s: no PEM certificate in it", o.CAFile)
			}
			cfg.RootCAs = pool
		}
		tr.TLSClientConfig = cfg
	}
	c := &Client{base: base, addr: hostport, token: o.Token, timeout: o.Timeout, http: &http.Client{Transport: tr,
		// A redirect could carry the token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if err := c.call(ctx, "GET", "/v1/info", nil, http.StatusOK, &c.info); err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	if c.info.Agent != Name {
		tr.CloseIdleConnections()
		return nil, errorf(nil, http.StatusOK, nil, "agent %s: not a sledge agent (its /v1/info has no \"agent\":%q)", c.addr, Name)
	}
	return c, nil
}

// parseAddr reads HOST:PORT or a URL into the base URL and host:port.
func parseAddr(addr string, caFile bool) (base, hostport string, useTLS bool, err error) {
	bad := func(why string) error {
		return fmt.Errorf("agent address %q: %s: want HOST:PORT or a URL such as https://db1:%d", addr, why, DefaultPort)
	}
	scheme, rest, isURL := strings.Cut(addr, "://")
	path := ""
	if isURL {
		u, err := url.Parse(addr)
		if err != nil {
			return "", "", false, bad("not a URL")
		}
		if u.User != nil {
			return "", "", false, fmt.Errorf("agent address: a URL with a user or password: give the token with a token file instead")
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return "", "", false, bad("a query or fragment")
		}
		scheme, rest, path = strings.ToLower(u.Scheme), u.Host, strings.TrimSuffix(u.Path, "/")
		if scheme != "http" && scheme != "https" {
			return "", "", false, bad("scheme " + scheme)
		}
		if scheme == "http" && caFile {
			return "", "", false, bad("a CA file means TLS, but the URL says http://")
		}
	} else {
		scheme = "http"
		if caFile {
			scheme = "https"
		}
		rest = addr
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		if !strings.Contains(err.Error(), "missing port") {
			return "", "", false, bad("not HOST:PORT")
		}
		host, port = strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]"), strconv.Itoa(DefaultPort)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", false, bad("port " + port)
	}
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return "", "", false, bad("no host")
	}
	hostport = net.JoinHostPort(host, port)
	return scheme + "://" + hostport + path, hostport, scheme == "https", nil
}

// Info is the agent's /v1/info, read by Dial.
func (c *Client) Info() Info { return c.info }

// Addr is the agent's HOST:PORT.
func (c *Client) Addr() string { return c.addr }

// Close drops the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// call makes one request within the client's timeout and decodes a
// want answer into out (when not nil); any other answer is an *Error.
func (c *Client) call(ctx context.Context, method, path string, body any, want int, out any) error {
	return c.callWithin(ctx, c.timeout, method, path, body, want, out)
}

// callWithin is call with its own timeout.
func (c *Client) callWithin(ctx context.Context, timeout time.Duration, method, path string, body any, want int, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("agent %s: %w", c.addr, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("agent %s: %w", c.addr, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, timeout, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return c.transportError(ctx, timeout, err)
	}
	if resp.StatusCode == want {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return errorf(nil, resp.StatusCode, err, "agent %s: %s %s: an answer that is not the JSON of API v%d: %v", c.addr, method, path, sysprobe.APIVersion, err)
		}
		return nil
	}
	return c.answerError(resp.StatusCode, raw)
}

// answerError turns an agent's error answer into one line.
func (c *Client) answerError(code int, raw []byte) error {
	var ae struct {
		Error string `json:"error"`
		APIs  []int  `json:"apis"`
	}
	isJSON := json.Unmarshal(raw, &ae) == nil && ae.Error != ""
	switch {
	case code == http.StatusUnauthorized && c.token == "":
		return errorf(ErrToken, code, nil, "agent %s: it wants a token and none was given (401)", c.addr)
	case code == http.StatusUnauthorized:
		return errorf(ErrToken, code, nil, "agent %s: the token was refused (401)", c.addr)
	case code == http.StatusNotFound && isJSON && len(ae.APIs) > 0 && !slices.Contains(ae.APIs, sysprobe.APIVersion):
		vs := make([]string, len(ae.APIs))
		for i, v := range ae.APIs {
			vs[i] = "v" + strconv.Itoa(v)
		}
		return errorf(ErrAPIVersion, code, nil, "agent %s serves API %s; this sledge speaks v%d", c.addr, strings.Join(vs, ", "), sysprobe.APIVersion)
	case code == http.StatusNotFound && isJSON && strings.HasPrefix(ae.Error, sysprobe.ErrNotFound.Error()):
		return errorf(sysprobe.ErrNotFound, code, nil, "agent %s: %s", c.addr, oneLine(ae.Error))
	case isJSON:
		return errorf(nil, code, nil, "agent %s: %s (%d)", c.addr, oneLine(ae.Error), code)
	}
	return errorf(nil, code, nil, "agent %s answered %d %s, not as a sledge agent does", c.addr, code, http.StatusText(code))
}

// transportError says why there was no answer, in one line.
func (c *Client) transportError(ctx context.Context, timeout time.Duration, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return errorf(ErrUnreachable, 0, err, "agent %s unreachable: no answer within %s", c.addr, timeout)
	}
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		hostErr x509.HostnameError
		recErr  tls.RecordHeaderError
		errno   syscall.Errno
	)
	switch {
	case errors.As(err, &dnsErr):
		return errorf(ErrUnreachable, 0, err, "agent %s unreachable: %s", c.addr, dnsErr.Err)
	case errors.As(err, &certErr), errors.As(err, &hostErr):
		return errorf(ErrUnreachable, 0, err, "agent %s: its TLS certificate is not trusted: %s", c.addr, oneLine(lastPart(err)))
	case errors.As(err, &recErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return errorf(ErrUnreachable, 0, err, "agent %s does not speak TLS (use HOST:PORT or http://)", c.addr)
	case errors.As(err, &errno):
		return errorf(ErrUnreachable, 0, err, "agent %s unreachable: %s", c.addr, errno.Error())
	case errors.Is(err, context.Canceled):
		return errorf(nil, 0, err, "agent %s: %v", c.addr, context.Canceled)
	}
	return errorf(ErrUnreachable, 0, err, "agent %s unreachable: %s", c.addr, oneLine(lastPart(err)))
}

// lastPart is the innermost words of a wrapped error: "connection reset
// by peer" rather than Get "http://…": read tcp …: connection reset by peer.
func lastPart(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && !strings.Contains(s[i:], "x509") {
		return s[i+2:]
	}
	if i := strings.Index(s, "x509: "); i >= 0 {
		return s[i+6:]
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// Watch asks the agent to watch the server named by t (and to be ready to
// record its stacks when stacks is set). The agent finding nothing is an
// error that errors.Is sysprobe.ErrNotFound, with the agent's line. The
// Source is a *Watch (StateHz, Stacks: whether it can have stacks, and why
// not).
func (c *Client) Watch(ctx context.Context, t sysprobe.Target, stacks bool) (sysprobe.Source, error) {
	var a WatchAnswer
	if err := c.call(ctx, "POST", "/v1/watches", WatchRequest{Target: t, Stacks: stacks}, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	if a.ID == "" || strings.ContainsAny(a.ID, "/?#%") {
		return nil, fmt.Errorf("agent %s: a watch without a usable id %q", c.addr, a.ID)
	}
	return &Watch{c: c, id: a.ID, answer: a}, nil
}

// Watch is a watch on an agent: a sysprobe.Source whose every method is
// one HTTP call within the client's timeout. Client.Watch returns one.
type Watch struct {
	c      *Client
	id     string
	answer WatchAnswer
	once   sync.Once
	cerr   error
}

var _ sysprobe.Source = (*Watch)(nil)

func (w *Watch) Name() string              { return "agent " + w.c.addr }
func (w *Watch) Version() string           { return w.c.info.Version }
func (w *Watch) Found() []sysprobe.Process { return w.answer.Found }
func (w *Watch) path(p string) string      { return "/v1/watches/" + w.id + p }

// ID is the agent's id of the watch.
func (w *Watch) ID() string { return w.id }

// StateHz is the rate of the agent's thread-state sampler.
func (w *Watch) StateHz() int { return w.answer.StateHz }

// Stacks says whether the watch can record stacks, and why not.
func (w *Watch) Stacks() StacksInfo { return w.answer.Stacks }

func (w *Watch) Snapshot(ctx context.Context) (sysprobe.Snapshot, error) {
	var s sysprobe.Snapshot
	err := w.c.call(ctx, "GET", w.path("/snapshot"), nil, http.StatusOK, &s)
	return s, err
}

func (w *Watch) Seconds(ctx context.Context, after int64) ([]sysprobe.Second, error) {
	var s []sysprobe.Second
	err := w.c.call(ctx, "GET", w.path("/seconds?after="+strconv.FormatInt(after, 10)), nil, http.StatusOK, &s)
	return s, err
}

func (w *Watch) StartStacks(ctx context.Context) error {
	return w.c.call(ctx, "POST", w.path("/stacks/start"), nil, http.StatusNoContent, nil)
}

// StopStacks waits longer than the other calls (StacksTimeout at least):
// the agent stops perf and folds what it recorded (perf script) first.
func (w *Watch) StopStacks(ctx context.Context) (sysprobe.Folded, error) {
	var f sysprobe.Folded
	err := w.c.callWithin(ctx, max(w.c.timeout, StacksTimeout), "POST", w.path("/stacks/stop"), nil, http.StatusOK, &f)
	return f, err
}

// Close ends the watch on the agent (once; later calls return the first
// result). An agent that already closed it is not an error.
func (w *Watch) Close() error {
	w.once.Do(func() {
		err := w.c.call(context.Background(), "DELETE", w.path(""), nil, http.StatusNoContent, nil)
		var e *Error
		if errors.As(err, &e) && e.Code == http.StatusNotFound {
			err = nil
		}
		w.cerr = err
	})
	return w.cerr
}
