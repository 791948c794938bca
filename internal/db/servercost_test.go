package db

import "testing"

func TestIsLoopbackHost(t *testing.T) {
	for _, c := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true}, {"127.3.2.1", true}, {"::1", true}, {"[::1]", true}, {"localhost", true},
		{"LOCALHOST", true}, {"/var/run/postgresql", true}, {"/tmp/mysqld.sock", true}, {"", true},
		{"db.example.com", false}, {"10.0.0.5", false}, {"192.168.1.20", false}, {"2001:db8::1", false},
	} {
		t.Run(c.host, func(t *testing.T) {
			if got := IsLoopbackHost(c.host); got != c.want {
				t.Errorf("IsLoopbackHost(%q) = %v, want %v", c.host, got, c.want)
			}
		})
	}
}
