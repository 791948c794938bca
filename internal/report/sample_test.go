package report

import "time"

// sample is a report like a compare of two modes over two transports.
func sample() *Report {
	r := &Report{Title: "sledge compare: tpcc on postgres 15.14", Command: "sledge compare --db postgres://u:REDACTED@127.0.0.1/x --modes procedure,client",
		Generated: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Database: "postgres://u:REDACTED@127.0.0.1:5432/tpcc",
		DBVersion: "PostgreSQL 15.14", P90Type: "neword", Settings: map[string]string{"shared_buffers": "256MB", "synchronous_commit": "off"},
		Host: []Fact{{"CPU", "x86 <test> & co"}, {"CPUs", "8"}}, Run: []Fact{{"seed", "7"}}, JobID: 9}
	for mi, mode := range []string{"procedure", "client"} {
		for ti, tr := range []string{"tcp", "unix"} {
			for _, vus := range []int{1, 2, 4, 8} {
				nopm := float64(vus) * 1000 * float64(3-mi) * float64(1+ti) / 2
				c := Cell{Mode: mode, Transport: tr, VUs: vus, NOPM: &nopm, TPM: nopm * 2.2, TPMSource: "database", P90Ms: 1.5,
					Cost:  &Cost{RoundTrips: float64(3 + mi*30), BytesSent: float64(300 + mi*3000), BytesReceived: float64(500 + mi*2000), ClientCPUUs: float64(40 + mi*90)},
					JobID: int64(vus)}
				// Where the time went: the server's CPU measured except over
				// unix in client mode (as for a server it cannot see).
				var server *float64
				if !(mi == 1 && ti == 1) {
					v := float64(60 + mi*200)
					server = &v
				}
				c.Split = NewSplit(0.4+float64(mi), c.Cost.ClientCPUUs, server)
				// Issue 25: the server's threads and cost, measured but in
				// client mode over unix (no agent there).
				if server != nil {
					c.Threads = &Threads{CPU: 0.30 - 0.1*float64(mi), Runnable: 0.05, Network: 0.25 + 0.2*float64(mi), Lock: 0.10, IO: 0.05,
						Samples: 12000, Source: "agent db1:7078"}
					c.Threads.Idle = 1 - c.Threads.CPU - c.Threads.Runnable - c.Threads.Network - c.Threads.Lock - c.Threads.IO
					vol, invol, rq, in, out := float64(4+mi*40), float64(1+mi), float64(12+mi*30), float64(400+mi*3000), float64(600+mi*2000)
					c.Server = &ServerCost{CPUUs: server, VoluntarySwitches: &vol, InvoluntarySwitches: &invol, RunQueueDelayUs: &rq,
						PortBytesIn: &in, PortBytesOut: &out, Source: "agent db1:7078"}
					rqc := float64(3 + mi*10)
					c.Cost.ClientRunQueueDelayUs = &rqc
				} else {
					c.ThreadsWhy = "no agent"
				}
				if ti == 0 && vus == 1 {
					c.Stacks = &Stacks{Folded: sampleFolded, Hz: 99, Samples: 90, Source: "agent db1:7078"}
				}
				r.Cells = append(r.Cells, c)
			}
		}
	}
	ratio, rt, cpu, srv := 0.5, 30.0, 90.0, 200.0
	r.Pairs = []Pair{{From: "procedure", To: "client", Transport: "tcp", VUs: 1, Ratio: &ratio, RoundTripsDelta: &rt,
		ClientCPUUsDelta: &cpu, ServerCPUUsDelta: &srv}, {From: "procedure", To: "client", Transport: "unix", VUs: 1, Ratio: &ratio}}
	first := *r.Cells[0].NOPM
	for i := range r.Cells {
		x := *r.Cells[i].NOPM / first
		r.Cells[i].Ratio = &x
	}
	return r
}

// sampleFolded is folded stacks as perf gives them through the agent.
const sampleFolded = `postgres;__libc_start_main;main;PostmasterMain;ServerLoop;PostgresMain;exec_simple_query;PortalRun;ExecutorRun 40
postgres;__libc_start_main;main;PostmasterMain;ServerLoop;PostgresMain;pq_getbyte;secure_read;__libc_recv;tcp_recvmsg_[k] 25
postgres;PostgresMain;exec_execute_message;PortalRun;ExecutorRun;ExecScan 20
postgres;PostgresMain;LWLockAcquire;__x64_sys_futex_[k] 5
`
