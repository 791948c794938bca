package cli

import (
	"errors"
	"testing"

	"github.com/sledge-bench/sledge/internal/runner"
)

// The options the service sets itself, or does not offer (files on its
// host: profiles, transaction logs), are refused naming the field.
func TestCheckSpecRefusesServiceOwned(t *testing.T) {
	for _, opt := range []string{"jobs-db", "cpuprofile", "log", "log-prefix", "aggregate-interval", "sampling-rate"} {
		s := runner.Spec{Version: runner.SpecVersion, Kind: "run", Workload: "tpcb", Options: map[string]any{opt: "x"}}
		var fe *runner.FieldError
		if err := CheckSpec(s, func(string) string { return "" }); !errors.As(err, &fe) || fe.Field != "options."+opt {
			t.Errorf("options.%s: %v", opt, err)
		}
	}
}
