package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	cases := []struct {
		name, in string
		field    string // a FieldError's field, "" for none
		err      string // another error's text
		check    func(t *testing.T, s Spec)
	}{
		{name: "api body", in: `{"kind":"run","workload":"tpcc","db":"postgres://u@h/db","options":{"vus":4,"duration":"30s","threshold":["nopm>=1"]}}`,
			check: func(t *testing.T, s Spec) {
				if s.Version != SpecVersion || s.Kind != "run" || s.DB != "postgres://u@h/db" || s.Options["vus"] != json.Number("4") {
					t.Errorf("%+v", s)
				}
			}},
		{name: "stored before versions", in: `{"command":"build","workload":"tpcb","database":"sqlite:///x.db","options":{},"set":["scale"]}`,
			check: func(t *testing.T, s Spec) {
				if s.Kind != "build" || s.DB != "sqlite:///x.db" || s.Version != SpecVersion || !slices.Equal(s.Set, []string{"scale"}) {
					t.Errorf("%+v", s)
				}
			}},
		{name: "a seed keeps its digits", in: `{"kind":"run","options":{"seed":18446744073709551615}}`,
			check: func(t *testing.T, s Spec) {
				if s.Options["seed"] != json.Number("18446744073709551615") {
					t.Errorf("seed %v", s.Options["seed"])
				}
			}},
		{name: "repeated options of a spec before versions", in: `{"command":"run","options":{"threshold":"[nopm>=1,\"p95(neword)<5ms\"]","file":"[]","define":"[a=1]"},"set":["threshold"]}`,
			check: func(t *testing.T, s Spec) {
				if fmt.Sprint(s.Options["threshold"]) != "[nopm>=1 p95(neword)<5ms]" || fmt.Sprint(s.Options["file"]) != "[]" || fmt.Sprint(s.Options["define"]) != "[a=1]" {
					t.Errorf("%#v", s.Options)
				}
				if a, _ := s.Args(true); !slices.Equal(a, []string{"run", "--threshold=nopm>=1", "--threshold=p95(neword)<5ms"}) {
					t.Errorf("args %q", a)
				}
			}},
		{name: "a version 1 string is left alone", in: `{"version":1,"kind":"run","options":{"threshold":"[x]"}}`,
			check: func(t *testing.T, s Spec) {
				if s.Options["threshold"] != "[x]" {
					t.Errorf("%#v", s.Options)
				}
			}},
		{name: "unknown kind", in: `{"kind":"bench"}`, field: "kind"},
		{name: "no kind", in: `{}`, field: "kind"},
		{name: "option value null", in: `{"kind":"run","options":{"vus":null}}`, field: "options.vus"},
		{name: "option value object", in: `{"kind":"run","options":{"vus":{"a":1}}}`, field: "options.vus"},
		{name: "option name with a dash", in: `{"kind":"run","options":{"--vus":1}}`, field: "options"},
		{name: "workload like a flag", in: `{"kind":"run","workload":"-x"}`, field: "workload"},
		{name: "newer version", in: `{"version":2,"kind":"run"}`, err: "newer"},
		{name: "not JSON", in: `{"kind":`, err: "spec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(c.in))
			var fe *FieldError
			switch {
			case c.field != "":
				if !errors.As(err, &fe) || fe.Field != c.field {
					t.Fatalf("error %v, want one naming %s", err, c.field)
				}
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				c.check(t, s)
			}
		})
	}
}

// Args passes every option, or with only the ones given plus the
// resolved seed and mode; where the job is recorded and how it prints
// are never passed; lists repeat the flag.
func TestSpecArgs(t *testing.T) {
	s, err := ParseSpec([]byte(`{"kind":"run","workload":"tpcc","db":"sqlite:///x.db","set":["vus","threshold","json"],
		"options":{"vus":4,"rampup":"10s","seed":42,"mode":"prepared","json":true,"jobs-db":"/j","metrics":"127.0.0.1:1",
		"threshold":["nopm>=1","p95(neword)<50ms"],"rate":0.5,"keying-thinking":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Args(false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "tpcc", "--db", "sqlite:///x.db", "--keying-thinking=false", "--mode=prepared", "--rampup=10s",
		"--rate=0.5", "--seed=42", "--threshold=nopm>=1", "--threshold=p95(neword)<50ms", "--vus=4"}
	if !slices.Equal(all, want) {
		t.Errorf("all options:\n got %q\nwant %q", all, want)
	}
	only, _ := s.Args(true)
	want = []string{"run", "tpcc", "--db", "sqlite:///x.db", "--mode=prepared", "--seed=42",
		"--threshold=nopm>=1", "--threshold=p95(neword)<50ms", "--vus=4"}
	if !slices.Equal(only, want) {
		t.Errorf("given options:\n got %q\nwant %q", only, want)
	}
	b, _ := json.Marshal(s)
	back, err := ParseSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.Args(false); !slices.Equal(again, all) {
		t.Errorf("a stored spec read back runs otherwise: %q", again)
	}
	for _, k := range []string{`"version":1`, `"kind":"run"`, `"command":"run"`, `"db":"sqlite:///x.db"`, `"database":"sqlite:///x.db"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("stored spec lacks %s: %s", k, b)
		}
	}
}
