package db

import (
	"strings"
	"testing"
)

func TestRepeatedExpand(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		style Placeholder
		nargs int
		want  string
	}{
		{"dollar IN list", "SELECT i FROM item WHERE i IN ({{$1}})", Dollar, 3,
			"SELECT i FROM item WHERE i IN ($1, $2, $3)"},
		{"dollar fixed before and after", "SELECT CASE $1::int WHEN 1 THEN a END FROM t WHERE (x, y) IN ({{($2, $3)}}) AND z = $4", Dollar, 6,
			"SELECT CASE $1::int WHEN 1 THEN a END FROM t WHERE (x, y) IN (($2, $3), ($4, $5)) AND z = $6"},
		{"sqlite numbered", "INSERT INTO t VALUES {{(?1, ?2, NULL)}}", QuestionNumbered, 4,
			"INSERT INTO t VALUES (?1, ?2, NULL), (?3, ?4, NULL)"},
		{"mysql separator", "UPDATE t JOIN ({{/ UNION ALL /SELECT ? AS a, ? AS b}}) v ON t.a = v.a SET t.b = v.b WHERE t.c = ?", Question, 5,
			"UPDATE t JOIN (SELECT ? AS a, ? AS b UNION ALL SELECT ? AS a, ? AS b) v ON t.a = v.a SET t.b = v.b WHERE t.c = ?"},
		{"one repeat", "DELETE FROM t WHERE (a, b) IN ({{(?, ?)}})", Question, 2,
			"DELETE FROM t WHERE (a, b) IN ((?, ?))"},
		{"two groups", "SELECT {{$1}} FROM t WHERE a IN ({{$2}})", Dollar, 4,
			"SELECT $1, $2 FROM t WHERE a IN ($3, $4)"},
		{"quotes and comments are text", "SELECT '{{?}}', \"$1\" -- {{\nFROM t WHERE a IN ({{?1}})", QuestionNumbered, 2,
			"SELECT '{{?}}', \"$1\" -- {{\nFROM t WHERE a IN (?1, ?2)"},
		{"dollar quote is text", "SELECT $q${{$1}}$q$, a FROM t WHERE a IN ({{$1}})", Dollar, 2,
			"SELECT $q${{$1}}$q$, a FROM t WHERE a IN ($1, $2)"},
		{"beyond the built ones", "SELECT a FROM t WHERE a IN ({{$1}})", Dollar, 20,
			"SELECT a FROM t WHERE a IN (" + dollarList(20) + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRepeated("s", tt.text, tt.style)
			if err != nil || r == nil {
				t.Fatalf("parse: %v %v", r, err)
			}
			e, err := r.For(tt.nargs)
			if err != nil {
				t.Fatal(err)
			}
			if e.Text != tt.want {
				t.Errorf("got  %q\nwant %q", e.Text, tt.want)
			}
			k := (tt.nargs - r.Fixed()) / r.PerRepeat()
			if want := "s#" + itoa(k); e.Name != want {
				t.Errorf("name %q, want %q", e.Name, want)
			}
			// Built once: the same text for the same count.
			again, _ := r.For(tt.nargs)
			if again != e {
				t.Errorf("second call differs: %+v", again)
			}
		})
	}
}

func dollarList(n int) string {
	var parts []string
	for i := 1; i <= n; i++ {
		parts = append(parts, "$"+itoa(i))
	}
	return strings.Join(parts, ", ")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestRepeatedNoGroup(t *testing.T) {
	r, err := ParseRepeated("s", "SELECT a FROM t WHERE a = $1", Dollar)
	if r != nil || err != nil {
		t.Fatalf("%v %v, want nil nil", r, err)
	}
	// Without groups, placeholders may come in any order, or twice.
	r, err = ParseRepeated("s", "UPDATE t SET a = ?2 WHERE b = ?1 OR c = ?1", QuestionNumbered)
	if r != nil || err != nil {
		t.Fatalf("%v %v, want nil nil", r, err)
	}
	m, err := FindRepeated(map[string]string{"a": "SELECT 1", "b": "SELECT ?"}, Question)
	if m != nil || err != nil {
		t.Fatalf("%v %v, want nil nil", m, err)
	}
}

func TestRepeatedErrors(t *testing.T) {
	tests := []struct {
		text  string
		style Placeholder
		want  string
	}{
		{"SELECT a FROM t WHERE a IN ({{$1)", Dollar, "{{ without }}"},
		{"SELECT a FROM t WHERE a IN ($1}})", Dollar, "}} without {{"},
		{"SELECT {{a {{$1}} }}", Dollar, "a group inside a group"},
		{"SELECT a FROM t WHERE a IN ({{1}})", Dollar, "hold no placeholder"},
		{"SELECT a FROM t WHERE a IN ({{$2}})", Dollar, "placeholder 2 where 1 was due"},
		{"SELECT a FROM t WHERE b = ?2 AND a IN ({{?1}})", QuestionNumbered, "placeholder 2 where 1 was due"},
		{"UPDATE t JOIN ({{/ UNION ALL SELECT ?}}) v", Question, "unterminated {{/separator/"},
		{"SELECT '{{?}}", Question, "unterminated ' quote"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := ParseRepeated("s", tt.text, tt.style)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "statement s") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRepeatedArgumentCount(t *testing.T) {
	r, err := ParseRepeated("delivery.deletes", "DELETE FROM t WHERE w = $1 AND (d, o) IN ({{($2, $3)}})", Dollar)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 2, 4} {
		if _, err := r.For(n); err == nil || !strings.Contains(err.Error(), "delivery.deletes takes 1 arguments and 2 for each repeat") {
			t.Errorf("%d arguments: err = %v", n, err)
		}
	}
	if e, err := r.For(21); err != nil || e.Name != "delivery.deletes#10" {
		t.Errorf("21 arguments: %v %v", e.Name, err)
	}
}

// The lookup on the hot path builds nothing.
func TestRepeatedForAllocates(t *testing.T) {
	r, err := ParseRepeated("s", "INSERT INTO t VALUES {{(?, ?, ?)}}", Question)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = r.For(45) }); n != 0 {
		t.Errorf("%v allocations per lookup", n)
	}
}

func TestRepeatedCache(t *testing.T) {
	var c RepeatedCache
	text := map[string]string{"a": "SELECT 1", "b": "SELECT x FROM t WHERE x IN ({{?}})"}
	m1, err := c.Get("mysql", "w", text, Question)
	if err != nil || len(m1) != 1 || m1["b"] == nil {
		t.Fatalf("%v %v", m1, err)
	}
	m2, _ := c.Get("mysql", "w", text, Question)
	if m2["b"] != m1["b"] {
		t.Error("parsed twice")
	}
	if _, err := c.Get("mysql", "bad", map[string]string{"x": "SELECT {{?"}, Question); err == nil || !strings.HasPrefix(err.Error(), "mysql: statement x") {
		t.Errorf("err = %v", err)
	}
}
