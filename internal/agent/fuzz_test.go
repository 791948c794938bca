package agent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzWatchRequest feeds arbitrary bodies to POST /v1/watches on an agent
// over real sysprobe: it never panics, answers 2xx or 4xx only (a bad
// body is never the agent's fault), with {"error":"one line"} on a 4xx,
// and a body it accepts is a valid target. Seeds: testdata/fuzz.
func FuzzWatchRequest(f *testing.F) {
	for _, s := range []string{`{"target":{"port":5432}}`, `{"target":{"pid":1},"stacks":true}`,
		`{"target":{"process":"postgres"}}`, `{}`, `{"target":{"port":5432,"pid":1}}`} {
		f.Add([]byte(s))
	}
	s := New(Config{Version: "fuzz"})
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseWatchRequest(body)
		if err == nil && validTarget(req.Target) != nil {
			t.Fatalf("accepted %q with an invalid target %+v", body, req.Target)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/watches", strings.NewReader(string(body))))
		switch code := rec.Code; {
		case code == http.StatusCreated:
			var a WatchAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.ID == "" {
				t.Fatalf("201 %q: %v", rec.Body, err)
			}
			del := httptest.NewRecorder()
			s.ServeHTTP(del, httptest.NewRequest("DELETE", "/v1/watches/"+a.ID, nil))
		case code >= 400 && code < 500:
			if !isErrorLine(rec.Body.Bytes()) {
				t.Fatalf("%d with %q, want {\"error\":\"one line\"}", code, rec.Body)
			}
			if (code == http.StatusBadRequest) != (err != nil) {
				t.Fatalf("%q: %d, but parsing says %v", body, code, err)
			}
		default:
			t.Fatalf("%q: %d %s", body, code, rec.Body)
		}
	})
}
