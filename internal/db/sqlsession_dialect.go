package db

// Dialect is the SQL the session speaks, as SQLDB.Dialect names it
// ("postgres", "mysql", "sqlite"): the name its database package gives
// it. A workload whose SQL text sessions are handed to it without the
// database (a mixed workload's analytic streams) renders its text for it.
func (s SQLOnly) Dialect() string { return s.DB }
