// Package agente2e holds issue 25's end-to-end tests of `sledge agent`:
// the sledge binary as processes (run, jobs, serve, agent) against private
// PostgreSQL and MariaDB servers, inside a network namespace of the test's
// own where it can make one (internal/testdb/netns.go), reached over a
// veth pair as another host would be, and on loopback otherwise. It has no
// code of its own beyond its tests.
package agente2e
