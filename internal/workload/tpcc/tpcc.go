// Package tpcc is the TPC-C-derived workload (HammerDB calls it TPROC-C),
// written once against named statements: initial population (docs/tpcc.md
// parts 1–5), the five transactions and their inputs (part 6), the mix and
// pacing (part 7), the consistency conditions (part 8) and the NOPM meter
// (part 9). Its output is not an audited TPC result: never call it tpmC.
package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

// dataVersion is stored in sledge_meta. Bump it whenever the generated data
// or the schema changes, so runs against an older build ask for a rebuild.
const dataVersion = 1

func init() {
	workload.Register(workload.Meta{
		Name:        "tpcc",
		Description: "TPC-C-derived OLTP (HammerDB TPROC-C): 9 tables, 5 transactions, NOPM and TPM; not an audited tpmC",
		Flags:       flags,
		Default:     true,
		Rampup:      10 * time.Second,
		Report:      workload.ReportTPCC,
		Throughput:  "NOPM",
	})
}

// flags binds the workload's options for cmd and returns its constructor.
func flags(cmd string, fs *pflag.FlagSet) func(seed uint64) (workload.Workload, error) {
	// Commands other than build start from 1 warehouse; Attach replaces it
	// with the scale the schema was built with.
	cfg := Config{Warehouses: 1}
	switch cmd {
	case "build":
		fs.IntVar(&cfg.Warehouses, "warehouses", 1, "number of warehouses, the scale factor (1..10000; about 100 MB each)")
	case "run":
		fs.BoolVar(&cfg.AllWarehouses, "all-warehouses", false,
			"spread each virtual user over a round-robin list of warehouses, picking one at random before every transaction (HammerDB \"Use All Warehouses\"); without it N VUs use home warehouses 1..N, as the run says")
	}
	return func(seed uint64) (workload.Workload, error) {
		c := cfg
		c.Seed = seed
		w := New(c)
		if err := w.Validate(); err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Config is what the user chose.
type Config struct {
	// Warehouses is the scale to build. For run and check, Attach replaces
	// it with the scale found in the schema.
	Warehouses int
	// AllWarehouses gives each terminal HammerDB's round-robin list of
	// warehouses instead of one home warehouse (docs/tpcc.md part 10).
	AllWarehouses bool
	// Seed drives everything random: the data of a build (with the load
	// time, the only non-seeded value) or the inputs of a run.
	Seed uint64
}

// Workload is TPC-C. Attach may change it; after that it is read-only and
// safe for concurrent use (Tables' Fill funcs and NewTerminal).
type Workload struct {
	cfg        Config
	warehouses int // cfg.Warehouses, or the built scale after Attach
	cLoad      int // C of NURand for C_LAST at load (§2.1.6)
	version    int // data version of the attached schema
	now        func() time.Time
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Meter    = (*Workload)(nil)
	_ workload.MeterTxn = (*Workload)(nil)
	_ workload.Scaler   = (*Workload)(nil)
)

// New makes the workload; call Validate before using it with user input.
func New(cfg Config) *Workload {
	return &Workload{
		cfg:        cfg,
		warehouses: cfg.Warehouses,
		cLoad:      cLoadFor(cfg.Seed),
		version:    dataVersion,
		now:        time.Now,
	}
}

// Name is also the sql/<name>/ folder of every database package.
func (w *Workload) Name() string { return "tpcc" }

// Validate checks the configuration; each error is one line naming the flag.
func (w *Workload) Validate() error {
	switch {
	case w.cfg.Warehouses < 1:
		return errors.New("--warehouses must be at least 1")
	case w.cfg.Warehouses > maxWarehouses:
		return fmt.Errorf("--warehouses must be at most %d", maxWarehouses)
	}
	return nil
}

// Warehouses is the scale: configured, or read from the schema by Attach.
func (w *Workload) Warehouses() int { return w.warehouses }

// Scale reports the scale factor for progress and results.
func (w *Workload) Scale() (unit string, n int) { return "warehouses", w.warehouses }

// Transaction kinds: indexes into Mix().
const (
	kindNewOrder = iota
	kindPayment
	kindDelivery
	kindStockLevel
	kindOrderStatus
	numKinds
)

// Mix is the transaction mix with HammerDB's names. Weights are the usual
// 45/43/4/4/4 (§5.2.3 minimums; a deck of 100 cards), keying times and mean
// think times are the spec's (§5.2.5.2, §5.2.5.4).
func (w *Workload) Mix() []workload.TxType {
	return []workload.TxType{
		kindNewOrder:    {Name: "neword", Key: "new_order", Weight: 45, Keying: 18 * time.Second, Think: 12 * time.Second},
		kindPayment:     {Name: "payment", Weight: 43, Keying: 3 * time.Second, Think: 12 * time.Second},
		kindDelivery:    {Name: "delivery", Weight: 4, Keying: 2 * time.Second, Think: 5 * time.Second},
		kindStockLevel:  {Name: "slev", Key: "stock_level", Weight: 4, Keying: 2 * time.Second, Think: 5 * time.Second},
		kindOrderStatus: {Name: "ostat", Key: "order_status", Weight: 4, Keying: 2 * time.Second, Think: 10 * time.Second},
	}
}

// checks are the consistency conditions of §3.3.2 (docs/tpcc.md part 8).
func checks() []workload.Check {
	return []workload.Check{
		{ID: "1", Desc: "W_YTD = sum(D_YTD) of the warehouse's districts"},
		{ID: "2", Desc: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district"},
		{ID: "3", Desc: "max(NO_O_ID) - min(NO_O_ID) + 1 = NEW-ORDER rows per district"},
		{ID: "4", Desc: "sum(O_OL_CNT) = ORDER-LINE rows per district"},
		{ID: "5", Desc: "O_CARRIER_ID is NULL exactly when a NEW-ORDER row exists for the order"},
		{ID: "6", Desc: "O_OL_CNT = ORDER-LINE rows of the order"},
		{ID: "7", Desc: "OL_DELIVERY_D is NULL exactly when the order's O_CARRIER_ID is NULL"},
		{ID: "8", Desc: "W_YTD = sum(H_AMOUNT) of the warehouse"},
		{ID: "9", Desc: "D_YTD = sum(H_AMOUNT) of the district"},
		{ID: "10", Desc: "C_BALANCE = sum(OL_AMOUNT) of delivered lines - sum(H_AMOUNT) per customer"},
		{ID: "11", Desc: "ORDER rows - NEW-ORDER rows = 2100 per district (initial population only)", Skip: skipCheck11},
		{ID: "12", Desc: "C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) of delivered lines per customer"},
	}
}

// Checks returns the 12 consistency conditions; statement "check.<ID>"
// counts the violations.
func (w *Workload) Checks() []workload.Check { return checks() }

// skipCheck11: condition 11 holds only until the first Delivery, which
// raises the difference for its districts (§3.3.2.11).
func skipCheck11(ctx context.Context, c workload.Conn) (string, error) {
	var n int64
	if err := c.QueryRow(ctx, stmtCheck11Applies).Scan(&n); err != nil {
		return "", fmt.Errorf("check 11: count delivered orders: %w", err)
	}
	if n > 0 {
		return "Deliveries have run since the build; condition 11 holds only for an initial population", nil
	}
	return "", nil
}

// Attach reads the scale, C_LOAD and data version the schema was built with
// from sledge_meta, which the build loads last: a missing row means the
// build never finished.
func (w *Workload) Attach(ctx context.Context, c workload.Conn) error {
	meta, err := readMeta(ctx, c)
	if err != nil {
		if errors.Is(err, workload.ErrNoSchema) {
			return fmt.Errorf("no TPC-C schema: run `sledge build` first: %w", err)
		}
		return fmt.Errorf("tpcc: read sledge_meta: %w", err)
	}
	if wl, ok := meta["workload"]; ok && wl != "tpcc" {
		return fmt.Errorf("the schema was built for workload %q, not tpcc: run `sledge build` for tpcc: %w", wl, workload.ErrNoSchema)
	}
	var vals [3]int
	for i, k := range [3]string{"version", "warehouses", "c_load"} {
		s, ok := meta[k]
		if !ok {
			return fmt.Errorf("no complete TPC-C schema (sledge_meta has no %q: the build did not finish): run `sledge build` again: %w", k, workload.ErrNoSchema)
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("tpcc: sledge_meta %s=%q is not a number: run `sledge build` again", k, s)
		}
		vals[i] = v
	}
	version, wh, cLoad := vals[0], vals[1], vals[2]
	switch {
	case version != dataVersion:
		return fmt.Errorf("the TPC-C schema was built with data version %d, this sledge uses version %d: run `sledge build` again", version, dataVersion)
	case wh < 1 || wh > maxWarehouses:
		return fmt.Errorf("tpcc: sledge_meta warehouses=%d is out of range: run `sledge build` again", wh)
	case cLoad < 0 || cLoad > cLastA:
		return fmt.Errorf("tpcc: sledge_meta c_load=%d is out of range: run `sledge build` again", cLoad)
	}
	w.warehouses, w.cLoad, w.version = wh, cLoad, version
	return nil
}

// readMeta returns sledge_meta as a map.
func readMeta(ctx context.Context, c workload.Conn) (map[string]string, error) {
	rows, err := c.Query(ctx, stmtMetaGet)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	meta := make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(meta) == 0 {
		return nil, fmt.Errorf("sledge_meta is empty: %w", workload.ErrNoSchema)
	}
	return meta, nil
}

// MeterName is HammerDB's business metric: new orders per minute.
func (w *Workload) MeterName() string { return "NOPM" }

// MeterKind is New-Order: each commit adds one to Σ d_next_o_id (the
// 1% rollback undoes its increment).
func (w *Workload) MeterKind() int { return kindNewOrder }

// Meter returns Σ d_next_o_id: the engine takes it at both ends of the
// measured interval; committed New-Orders are the difference (part 9).
func (w *Workload) Meter(ctx context.Context, c workload.Conn) (int64, error) {
	var n int64
	if err := c.QueryRow(ctx, stmtNOPM).Scan(&n); err != nil {
		return 0, fmt.Errorf("tpcc: nopm: %w", err)
	}
	return n, nil
}
