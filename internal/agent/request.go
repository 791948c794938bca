package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// MaxBody is the largest request body the agent reads.
const MaxBody = 64 << 10

// commLen is the longest name /proc/PID/comm holds (TASK_COMM_LEN 16,
// less the NUL).
const commLen = 15

// WatchRequest is the body of POST /v1/watches.
type WatchRequest struct {
	Target sysprobe.Target `json:"target"`
	Stacks bool            `json:"stacks"`
}

// WatchAnswer is the 201 answer to POST /v1/watches.
type WatchAnswer struct {
	ID      string             `json:"id"`
	Found   []sysprobe.Process `json:"found"`
	StateHz int                `json:"state_hz"`
	// Stacks says whether stacks can be recorded for this watch, and why
	// not (the run goes on without them).
	Stacks StacksInfo `json:"stacks"`
}

// parseWatchRequest reads a watch request strictly: one JSON object, no
// unknown fields, nothing after it, and exactly one of the target's port,
// pid and process, each in its range. Its error is one line for a 400.
func parseWatchRequest(body []byte) (WatchRequest, error) {
	var req WatchRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, errors.New(`empty body: want {"target":{"port":N}|{"pid":N}|{"process":"NAME"},"stacks":false}`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("bad JSON: %s", jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, errors.New("bad JSON: more than one value in the body")
	}
	return req, validTarget(req.Target)
}

// validTarget checks a target: exactly one of port, pid, process.
func validTarget(t sysprobe.Target) error {
	n := 0
	if t.Port != 0 {
		n++
		if t.Port < 1 || t.Port > 65535 {
			return fmt.Errorf("target port %d: want 1-65535", t.Port)
		}
	}
	if t.PID != 0 {
		n++
		if t.PID < 0 {
			return fmt.Errorf("target pid %d: want a pid above 0", t.PID)
		}
	}
	if t.Process != "" {
		n++
		if err := validComm(t.Process); err != nil {
			return err
		}
	}
	switch n {
	case 0:
		return errors.New(`no target: want exactly one of "port", "pid" and "process" in "target"`)
	case 1:
		return nil
	}
	return errors.New(`target: want exactly one of "port", "pid" and "process", not several`)
}

// validComm accepts a process name as /proc/PID/comm holds it: 1 to 15
// bytes of printable text with no '/'.
func validComm(s string) error {
	plain := utf8.ValidString(s) && !strings.ContainsRune(s, '/') && strings.TrimSpace(s) == s
	for _, r := range s {
		// U+FFFD: the JSON decoder's stand-in for bytes that were not UTF-8.
		plain = plain && unicode.IsPrint(r) && r != utf8.RuneError
	}
	if !plain {
		return errors.New("target process: want a plain process name such as postgres or mariadbd (no path)")
	}
	if len(s) > commLen {
		return fmt.Errorf("target process: %d bytes, but /proc/PID/comm holds at most %d: give the first %d", len(s), commLen, commLen)
	}
	return nil
}

// jsonError is a decoding error in one short line.
func jsonError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the body ends inside its JSON"
	}
	return clip(msg)
}

// clip keeps an error line short: it may quote the request.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
