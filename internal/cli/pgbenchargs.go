package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/runner"
)

// pgbench's command line (PostgreSQL 15), read with getopt_long's rules:
// clustered short options (-nS), an argument attached or next (-c4, -c 4,
// --client=4, --client 4), long names abbreviated to any unique prefix,
// options and the positional dbname in any order, "--" ending the options.

// pgbOpt is one of pgbench's options: its long name, its short letter (0
// when it has none) and whether it takes an argument.
type pgbOpt struct {
	long  string
	short byte
	arg   bool
}

// pgbOptions are pgbench 15's long options (pgbench.c's long_options),
// in its order, plus sledge's own --db and --no-job.
var pgbOptions = []pgbOpt{
	{"builtin", 'b', true},
	{"client", 'c', true},
	{"connect", 'C', false},
	{"debug", 'd', false},
	{"define", 'D', true},
	{"file", 'f', true},
	{"fillfactor", 'F', true},
	{"host", 'h', true},
	{"initialize", 'i', false},
	{"init-steps", 'I', true},
	{"jobs", 'j', true},
	{"log", 'l', false},
	{"latency-limit", 'L', true},
	{"no-vacuum", 'n', false},
	{"port", 'p', true},
	{"progress", 'P', true},
	{"protocol", 'M', true},
	{"quiet", 'q', false},
	{"report-per-command", 'r', false},
	{"report-latencies", 'r', false},
	{"rate", 'R', true},
	{"scale", 's', true},
	{"select-only", 'S', false},
	{"skip-some-updates", 'N', false},
	{"time", 'T', true},
	{"transactions", 't', true},
	{"username", 'U', true},
	{"vacuum-all", 'v', false},
	{"unlogged-tables", 0, false},
	{"tablespace", 0, true},
	{"index-tablespace", 0, true},
	{"sampling-rate", 0, true},
	{"aggregate-interval", 0, true},
	{"progress-timestamp", 0, false},
	{"log-prefix", 0, true},
	{"foreign-keys", 0, false},
	{"random-seed", 0, true},
	{"show-script", 0, true},
	{"partitions", 0, true},
	{"partition-method", 0, true},
	{"failures-detailed", 0, false},
	{"max-tries", 0, true},
	{"verbose-errors", 0, false},
	// sledge's own.
	{"db", 0, true},
	{"no-job", 0, false},
}

// pgbSledgeOwn are sledge's options among pgbench's.
var pgbSledgeOwn = map[string]bool{"db": true, "no-job": true}

// pgbShorts is pgbench 15's getopt string: the short options it accepts
// anywhere (-V and -? only as the first argument, as pgbench reads them).
const pgbShorts = "b:c:CdD:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v"

// pgbArg is one option as given: its canonical name (the long name, or
// "report-per-command" for both of -r's), the spelling the user wrote
// ("-c", "--client") and its argument.
type pgbArg struct {
	name  string
	as    string
	value string
}

// pgbUsageError is an error on pgbench's command line or in its scripts:
// exit 1, printed as pgbench prints it (runPgbench's bad): the error line,
// its "detail:" line, more error lines, lines printed as they are (a
// script's line and the caret under the error), the hint to try --help,
// the list of builtin scripts.
type pgbUsageError struct {
	msg    string
	detail string   // pgbench's "detail:" line, when it gives one
	errs   []string // more "error:" lines
	raw    []string // lines printed as they are
	hint   bool
	list   bool
}

func (e *pgbUsageError) Error() string { return e.msg }

func pgbErrf(format string, a ...any) error {
	return &pgbUsageError{msg: fmt.Sprintf(format, a...)}
}

func pgbHintf(format string, a ...any) error {
	return &pgbUsageError{msg: fmt.Sprintf(format, a...), hint: true}
}

// pgbGetoptf is a complaint of getopt_long's, in glibc's words, followed
// by pgbench's hint. glibc prints it as "pgbench: MESSAGE"; sledge keeps
// "error: " before it, as every first line of its errors has
// (docs/contracts.md).
func pgbGetoptf(format string, a ...any) error {
	return &pgbUsageError{msg: fmt.Sprintf(format, a...), hint: true}
}

// parsePgbenchArgs splits args into options, in their order, and
// positional arguments, as getopt_long does with pgbench's options.
func parsePgbenchArgs(args []string) (opts []pgbArg, positional []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(positional, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			o, err := lookupLong(name, a)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case !o.arg && hasValue:
				return nil, nil, pgbGetoptf("option '--%s' doesn't allow an argument", o.long)
			case o.arg && !hasValue:
				if i+1 >= len(args) {
					return nil, nil, pgbGetoptf("option '--%s' requires an argument", o.long)
				}
				i++
				value = args[i]
			}
			opts = append(opts, pgbArg{name: canonical(o), as: "--" + o.long, value: value})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				k := strings.IndexByte(pgbShorts, c)
				if c == ':' || k < 0 {
					return nil, nil, pgbGetoptf("invalid option -- '%c'", c)
				}
				o := shortOpt(c)
				if !o.arg {
					opts = append(opts, pgbArg{name: canonical(o), as: "-" + string(c)})
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return nil, nil, pgbGetoptf("option requires an argument -- '%c'", c)
					}
					i++
					value = args[i]
				}
				opts = append(opts, pgbArg{name: canonical(o), as: "-" + string(c), value: value})
				break
			}
		default:
			positional = append(positional, a)
		}
	}
	return opts, positional, nil
}

// lookupLong finds a long option by its name or an unambiguous prefix,
// as getopt_long does (prefixes naming the same option are not
// ambiguous: --report is -r).
func lookupLong(name, as string) (pgbOpt, error) {
	var found []pgbOpt
	for _, o := range pgbOptions {
		if o.long == name {
			return o, nil
		}
		// sledge's own options are never abbreviated: pgbench's
		// abbreviations (--no for --no-vacuum) keep their meaning.
		if strings.HasPrefix(o.long, name) && !pgbSledgeOwn[o.long] {
			found = append(found, o)
		}
	}
	if len(found) == 0 {
		return pgbOpt{}, pgbGetoptf("unrecognized option '%s'", as)
	}
	for _, o := range found[1:] {
		if canonical(o) != canonical(found[0]) || o.arg != found[0].arg {
			var names []string
			for _, f := range found {
				names = append(names, "'--"+f.long+"'")
			}
			return pgbOpt{}, pgbGetoptf("option '%s' is ambiguous; possibilities: %s", as, strings.Join(names, " "))
		}
	}
	return found[0], nil
}

func shortOpt(c byte) pgbOpt {
	for _, o := range pgbOptions {
		if o.short == c {
			return o
		}
	}
	return pgbOpt{}
}

// canonical is an option's name: its first long name for its letter.
func canonical(o pgbOpt) string {
	if o.short != 0 {
		return shortOpt(o.short).long
	}
	return o.long
}

// pgbConfig is a pgbench command line, read and checked as pgbench 15
// checks it.
type pgbConfig struct {
	help, version bool
	list          bool   // -b list
	showScript    string // --show-script NAME: the builtin's full name

	init       bool
	initOpts   []pgbArg // initialization options, to pass to sledge build
	scale      int
	scaleSet   bool
	clients    int
	threads    int
	txns       int // -t; 0: not given
	duration   int // -T; 0: not given
	protocol   string
	progress   int
	rate       float64
	latency    float64
	perCommand bool
	connect    bool // -C: a new connection per transaction
	detailed   bool // --failures-detailed
	verbose    bool // --verbose-errors
	debug      bool // -d
	timestamp  bool // --progress-timestamp
	maxTries   int
	maxTrySet  bool
	seed       string
	defines    []string
	logOpts    []pgbArg    // -l, --log-prefix, --aggregate-interval, --sampling-rate: sledge run's own
	scripts    []pgbScript // -b, -f, -S, -N in their order

	host, port, user, dbname string
	db                       string // sledge's --db
	noJob                    bool
	noVacuum                 bool // -n: no vacuum before the run
	vacuumAll                bool // -v: vacuum pgbench_accounts too
}

// pgbScript is one script of the run: a builtin (-b, -S, -N) or a file.
type pgbScript struct {
	builtin bool
	spec    string // NAME[@W] or FILE[@W]
}

// pgbMaxScripts is pgbench's MAX_SCRIPTS.
const pgbMaxScripts = 128

// pgbInitSteps are pgbench 15's initialization step letters.
const pgbInitSteps = "dtgGvpf"

// pgbCheckWeight checks a script's NAME@W weight as pgbench's
// parseScriptWeight does: an integer in 0..INT_MAX.
func pgbCheckWeight(spec string) error {
	k := strings.LastIndexByte(spec, '@')
	if k < 0 {
		return nil
	}
	w := spec[k+1:]
	n, err := strconv.ParseInt(w, 10, 64)
	if err != nil {
		// strtol's ERANGE too: pgbench calls the weight invalid then.
		return pgbErrf("invalid weight specification: %s", spec[k:])
	}
	if n < 0 || n > math.MaxInt32 {
		return pgbErrf("weight specification out of range (0 .. %d): %d", math.MaxInt32, n)
	}
	return nil
}

// pgbCheckSteps checks -I's letters as pgbench's checkInitSteps does:
// any of dtgGvpf in any order, repeated or not, spaces ignored.
func pgbCheckSteps(steps string) error {
	if steps == "" {
		return pgbErrf("no initialization steps specified")
	}
	for i := 0; i < len(steps); i++ {
		if c := steps[i]; c != ' ' && strings.IndexByte(pgbInitSteps, c) < 0 {
			return &pgbUsageError{msg: fmt.Sprintf("unrecognized initialization step \"%c\"", c),
				detail: fmt.Sprintf("Allowed step characters are: \"%s\".", pgbInitSteps)}
		}
	}
	return nil
}

// pgbInitOnly are the options of initialization mode only (pgbench's
// initialization_option_set); `sledge build` has a flag of the same name
// for each.
var pgbInitOnly = map[string]bool{
	"init-steps":       true,
	"fillfactor":       true,
	"quiet":            true,
	"foreign-keys":     true,
	"unlogged-tables":  true,
	"tablespace":       true,
	"index-tablespace": true,
	"partitions":       true,
	"partition-method": true,
}

// pgbInt reads an integer option in lo..hi with pgbench's messages.
func pgbInt(a pgbArg, what string, lo, hi int64) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(a.value), 10, 64)
	if err != nil {
		return 0, pgbErrf("invalid value \"%s\" for option %s", a.value, what)
	}
	if n < lo || n > hi {
		return 0, pgbErrf("%s must be in range %d..%d", what, lo, hi)
	}
	return int(n), nil
}

func pgbFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// readPgbench reads pgbench's command line into a config, with pgbench's
// checks and messages (its option values, -t with -T, options of the
// other mode), and refuses what sledge cannot do yet.
func readPgbench(args []string) (*pgbConfig, error) {
	c := &pgbConfig{clients: 1, threads: 1, protocol: "simple", maxTries: 1}
	// pgbench reads --help, -?, --version and -V only as the first argument.
	if len(args) > 0 {
		switch args[0] {
		case "--help", "-?":
			c.help = true
			return c, nil
		case "--version", "-V":
			c.version = true
			return c, nil
		}
	}
	opts, positional, err := parsePgbenchArgs(args)
	if err != nil {
		return nil, err
	}
	benchmarking, initializing := false, false
	var files []*pgbench.Script // the -f scripts, parsed
	weights, nscripts := 0, 0   // pgbench adds up the scripts' weights
	addScript := func(spec string) error {
		nscripts++
		if nscripts > pgbMaxScripts {
			return pgbErrf("at most %d SQL scripts are allowed", pgbMaxScripts)
		}
		weights += pgbWeights([]pgbScript{{spec: spec}})[0]
		return nil
	}
	partitions, method := false, false // --partitions > 0, --partition-method
	const maxInt = math.MaxInt32
	for _, a := range opts {
		if pgbInitOnly[a.name] {
			initializing = true
		}
		switch a.name {
		case "initialize":
			c.init = true
		case "builtin":
			benchmarking = true
			if a.value == "list" {
				c.list = true
				return c, nil
			}
			// pgbench reads each script when it meets the option.
			if err := pgbCheckWeight(a.value); err != nil {
				return nil, err
			}
			name := a.value
			if k := strings.LastIndexByte(name, '@'); k >= 0 {
				name = name[:k]
			}
			if _, err := findBuiltin(name); err != nil {
				return nil, err
			}
			if err := addScript(a.value); err != nil {
				return nil, err
			}
			c.scripts = append(c.scripts, pgbScript{builtin: true, spec: a.value})
		case "client":
			benchmarking = true
			if c.clients, err = pgbInt(a, "-c/--clients", 1, maxInt); err != nil {
				return nil, err
			}
		case "debug":
			c.debug = true
		case "define":
			benchmarking = true
			if name, _, ok := strings.Cut(a.value, "="); !ok || name == "" {
				return nil, pgbErrf("invalid variable definition: \"%s\"", a.value)
			}
			c.defines = append(c.defines, a.value)
		case "file":
			benchmarking = true
			if err := pgbCheckWeight(a.value); err != nil {
				return nil, err
			}
			s, err := pgbReadScript(a.value)
			if err != nil {
				return nil, err
			}
			if s != nil {
				files = append(files, s)
			}
			if err := addScript(a.value); err != nil {
				return nil, err
			}
			c.scripts = append(c.scripts, pgbScript{spec: a.value})
		case "fillfactor":
			if _, err := pgbInt(a, "-F/--fillfactor", 10, 100); err != nil {
				return nil, err
			}
			c.initOpts = append(c.initOpts, a)
		case "host":
			c.host = a.value
		case "init-steps":
			if err := pgbCheckSteps(a.value); err != nil {
				return nil, err
			}
			c.initOpts = append(c.initOpts, a)
		case "quiet", "foreign-keys", "unlogged-tables", "tablespace", "index-tablespace":
			c.initOpts = append(c.initOpts, a)
		case "jobs":
			benchmarking = true
			if c.threads, err = pgbInt(a, "-j/--jobs", 1, maxInt); err != nil {
				return nil, err
			}
		case "latency-limit":
			benchmarking = true
			f, ok := pgbFloat(a.value)
			if !ok || f <= 0 {
				return nil, pgbErrf("invalid latency limit: \"%s\"", a.value)
			}
			c.latency = f
		case "no-vacuum":
			c.noVacuum = true
		case "port":
			c.port = a.value
		case "progress":
			benchmarking = true
			if c.progress, err = pgbInt(a, "-P/--progress", 1, maxInt); err != nil {
				return nil, err
			}
		case "protocol":
			benchmarking = true
			switch a.value {
			case "simple", "extended", "prepared":
				c.protocol = a.value
			default:
				return nil, pgbErrf("invalid query mode (-M): \"%s\"", a.value)
			}
		case "log", "log-prefix":
			benchmarking = true
			c.logOpts = append(c.logOpts, a)
		case "aggregate-interval":
			benchmarking = true
			if _, err := pgbInt(a, "--aggregate-interval", 1, maxInt); err != nil {
				return nil, err
			}
			c.logOpts = append(c.logOpts, a)
		case "sampling-rate":
			benchmarking = true
			if f, ok := pgbFloat(a.value); !ok || f <= 0 || f > 1 {
				return nil, pgbErrf("invalid sampling rate: \"%s\"", a.value)
			}
			c.logOpts = append(c.logOpts, a)
		case "connect":
			benchmarking = true
			c.connect = true
		case "failures-detailed":
			benchmarking = true
			c.detailed = true
		case "verbose-errors":
			benchmarking = true
			c.verbose = true
		case "progress-timestamp":
			benchmarking = true
			c.timestamp = true
		case "report-per-command":
			benchmarking = true
			c.perCommand = true
		case "rate":
			benchmarking = true
			f, ok := pgbFloat(a.value)
			if !ok || f <= 0 {
				return nil, pgbErrf("invalid rate limit: \"%s\"", a.value)
			}
			c.rate = f
		case "scale":
			if c.scale, err = pgbInt(a, "-s/--scale", 1, maxInt); err != nil {
				return nil, err
			}
			c.scaleSet = true
		case "select-only", "skip-some-updates":
			benchmarking = true
			spec := "select-only"
			if a.name == "skip-some-updates" {
				spec = "simple-update"
			}
			if err := addScript(spec); err != nil {
				return nil, err
			}
			c.scripts = append(c.scripts, pgbScript{builtin: true, spec: spec})
		case "time":
			benchmarking = true
			if c.duration, err = pgbInt(a, "-T/--time", 1, maxInt); err != nil {
				return nil, err
			}
		case "transactions":
			benchmarking = true
			if c.txns, err = pgbInt(a, "-t/--transactions", 1, maxInt); err != nil {
				return nil, err
			}
		case "username":
			c.user = a.value
		case "vacuum-all":
			benchmarking = true
			c.vacuumAll = true
		case "random-seed":
			benchmarking = true
			if _, err := runner.ParseRandomSeed(a.value); err != nil {
				return nil, &pgbUsageError{msg: fmt.Sprintf("unrecognized random seed option \"%s\"", a.value),
					detail: `Expecting an unsigned integer, "time" or "rand".`,
					errs:   []string{"error while setting random seed from --random-seed option"}}
			}
			c.seed = a.value
		case "show-script":
			c.showScript = a.value
			return c, nil
		case "partitions":
			n, err := pgbInt(a, "--partitions", 0, maxInt)
			if err != nil {
				return nil, err
			}
			partitions = n > 0
			c.initOpts = append(c.initOpts, a)
		case "partition-method":
			if a.value != "range" && a.value != "hash" {
				return nil, pgbErrf("invalid partition method, expecting \"range\" or \"hash\", got: \"%s\"", a.value)
			}
			method = true
			c.initOpts = append(c.initOpts, a)
		case "max-tries":
			benchmarking = true
			n, err := strconv.ParseInt(strings.TrimSpace(a.value), 10, 32)
			if err != nil || n < 0 {
				return nil, pgbErrf("invalid number of maximum tries: \"%s\"", a.value)
			}
			c.maxTries, c.maxTrySet = int(n), true
		case "db":
			c.db = a.value
		case "no-job":
			c.noJob = true
		}
	}
	// What pgbench checks of the scripts once the options are read.
	if c.protocol != "simple" {
		if err := pgbCheckArgs(files); err != nil {
			return nil, err
		}
	}
	if !c.init && nscripts > 0 && weights == 0 {
		return nil, pgbErrf("total script weight must not be zero")
	}
	switch len(positional) {
	case 0:
	case 1:
		c.dbname = positional[0]
	default:
		return nil, pgbHintf("too many command-line arguments (first is \"%s\")", positional[1])
	}
	if c.init {
		if benchmarking {
			return nil, pgbErrf("some of the specified options cannot be used in initialization (-i) mode")
		}
		if method && !partitions {
			return nil, pgbErrf("--partition-method requires greater than zero --partitions")
		}
		return c, nil
	}
	if initializing {
		return nil, pgbErrf("some of the specified options cannot be used in benchmarking mode")
	}
	if c.txns > 0 && c.duration > 0 {
		return nil, pgbErrf("specify either a number of transactions (-t) or a duration (-T), not both")
	}
	if c.txns == 0 && c.duration == 0 {
		c.txns = 10 // pgbench's default
	}
	if err := c.checkLogOptions(); err != nil {
		return nil, err
	}
	if c.timestamp && c.progress == 0 {
		return nil, pgbErrf("--progress-timestamp is allowed only under --progress")
	}
	if c.maxTries == 0 && c.latency == 0 && c.duration == 0 {
		return nil, pgbErrf("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)")
	}
	if len(c.scripts) == 0 {
		c.scripts = []pgbScript{{builtin: true, spec: "tpcb-like"}}
	}
	return c, nil
}

// pgbURL is the database to run on: sledge's --db, else a postgres://
// URL from -h, -p, -U, the dbname and the environment, as libpq reads
// them (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE); the host may be
// a socket directory.
func (c *pgbConfig) pgbURL(getenv func(string) string) (string, error) {
	if c.db != "" {
		if c.host != "" || c.port != "" || c.user != "" || c.dbname != "" {
			return "", pgbErrf("give either --db URL or -h/-p/-U/dbname, not both")
		}
		return c.db, nil
	}
	pick := func(v, env string) string {
		if v != "" {
			return v
		}
		return getenv(env)
	}
	host, port, user := pick(c.host, "PGHOST"), pick(c.port, "PGPORT"), pick(c.user, "PGUSER")
	if user == "" {
		user = getenv("USER")
	}
	dbname := pick(c.dbname, "PGDATABASE")
	if dbname == "" {
		dbname = user // libpq's default, as pgbench's
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", pgbErrf("invalid port number: \"%s\"", port)
		}
	}
	var b strings.Builder
	b.WriteString("postgres://")
	if user != "" {
		b.WriteString(urlEscape(user))
		if pw := getenv("PGPASSWORD"); pw != "" {
			b.WriteString(":" + urlEscape(pw))
		}
		b.WriteString("@")
	}
	var query []string
	switch {
	case strings.HasPrefix(host, "/"):
		// A socket directory: in the query, where a path can go.
		query = append(query, "host="+urlEscape(host))
		if port != "" {
			query = append(query, "port="+port)
		}
	case host != "":
		b.WriteString(host)
		if port != "" {
			b.WriteString(":" + port)
		}
	default:
		// libpq's default: the default socket directory.
		if port != "" {
			query = append(query, "port="+port)
		}
	}
	b.WriteString("/" + urlEscape(dbname))
	if len(query) > 0 {
		b.WriteString("?" + strings.Join(query, "&"))
	}
	return b.String(), nil
}

// urlEscape escapes a URL's user, password, database or query value.
func urlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// pgbSpell names an option as pgbench's messages do: -F/--fillfactor, or
// --foreign-keys for one without a letter.
func pgbSpell(name string) string {
	for _, o := range pgbOptions {
		if o.long == name {
			if o.short != 0 {
				return "-" + string(o.short) + "/--" + o.long
			}
			return "--" + o.long
		}
	}
	return name
}

// pgbReadScript reads and parses a -f FILE[@W] as pgbench does when it
// meets the option, with pgbench's messages: could not open or read the
// file, or the script's first error (pgbench.ScriptError's lines). The
// run reads the file again; standard input ("-") is left to it, as it
// can be read once only.
func pgbReadScript(spec string) (*pgbench.Script, error) {
	path := spec
	if k := strings.LastIndexByte(path, '@'); k >= 0 {
		path = path[:k]
	}
	if path == "-" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pgbErrf("could not open file \"%s\": %s", path, pgbStrerror(err))
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, pgbErrf("could not read file \"%s\": %s", path, pgbStrerror(err))
	}
	s, err := pgbench.Parse(path, string(data))
	var se *pgbench.ScriptError
	if errors.As(err, &se) {
		lines := se.PgbenchLines()
		return nil, &pgbUsageError{msg: lines[0], raw: lines[1:]}
	}
	if err != nil {
		return nil, pgbErrf("%s", err)
	}
	return s, nil
}

// pgbStrerror is the C library's text for a file error (%m), as pgbench
// prints it: "No such file or directory".
func pgbStrerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := errno.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// pgbCheckArgs refuses a SQL command that references more variables than
// pgbench's MAX_ARGS leaves for parameters (255), as pgbench does with
// -M extended or prepared once the options are read.
func pgbCheckArgs(files []*pgbench.Script) error {
	const maxParams = 255
	for _, s := range files {
		for _, c := range s.Commands {
			if c.Kind != pgbench.CmdSQL || c.SQL == nil {
				continue
			}
			n := 0
			for _, q := range c.SQL.Queries {
				n += len(q.Vars)
			}
			if n > maxParams {
				return pgbErrf("statement has too many arguments (maximum is %d): %s", maxParams, c.SQL.Raw)
			}
		}
	}
	return nil
}

// checkLogOptions checks -l's companions as pgbench does, in its order.
func (c *pgbConfig) checkLogOptions() error {
	log, prefix, sampling, agg := false, false, false, 0
	for _, a := range c.logOpts {
		switch a.name {
		case "log":
			log = true
		case "log-prefix":
			prefix = true
		case "sampling-rate":
			sampling = true // readPgbench checked it is above 0
		case "aggregate-interval":
			agg, _ = strconv.Atoi(strings.TrimSpace(a.value))
		}
	}
	switch {
	case sampling && !log:
		return pgbErrf("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")
	case sampling && agg > 0:
		return pgbErrf("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")
	case agg > 0 && !log:
		return pgbErrf("log aggregation is allowed only when actually logging transactions")
	case prefix && !log:
		return pgbErrf("log file prefix (--log-prefix) is allowed only when logging transactions (-l)")
	case c.duration > 0 && agg > c.duration:
		return pgbErrf("number of seconds for aggregation (%d) must not be higher than test duration (%d)", agg, c.duration)
	case c.duration > 0 && agg > 0 && c.duration%agg != 0:
		return pgbErrf("duration (%d) must be a multiple of aggregation interval (%d)", c.duration, agg)
	}
	return nil
}
