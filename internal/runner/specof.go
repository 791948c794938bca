package runner

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
)

// SpecOf is the command as a spec: every option in fs (the command's
// own flags) with its value (the ones given and the defaults), with the
// database URL redacted.
func SpecOf(fs *pflag.FlagSet, kind, wl, rawURL string) Spec {
	opts := map[string]any{}
	var set []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		v := f.Value.String()
		if f.Name == "db" {
			v = db.Redact(v)
		}
		if l, ok := f.Value.(*dbList); ok && len(l.URLs()) > 1 {
			// compare tpch's databases: a list, which Args repeats.
			list := []any{}
			for _, u := range l.URLs() {
				list = append(list, db.Redact(u))
			}
			opts[f.Name] = list
		} else if sv, ok := f.Value.(pflag.SliceValue); ok && f.Name != "db" {
			// A repeated flag (--threshold, -f, -D) is a JSON list, which
			// Args repeats: its String() ("[a,b]") would run as one value.
			list := []any{}
			for _, e := range sv.GetSlice() {
				list = append(list, e)
			}
			opts[f.Name] = list
		} else {
			opts[f.Name] = typedValue(f.Value.Type(), v)
		}
		if f.Changed {
			set = append(set, f.Name)
		}
	})
	if set == nil {
		set = []string{}
	}
	return Spec{Version: SpecVersion, Kind: kind, Workload: wl, DB: db.Redact(rawURL), Options: opts, Set: set}
}

// typedValue keeps numbers and booleans as JSON numbers and booleans.
func typedValue(typ, v string) any {
	switch {
	case typ == "bool":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint") || strings.HasPrefix(typ, "float"):
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
	}
	return v
}
