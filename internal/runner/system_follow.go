package runner

// followSystem hands the run's sampler seconds (ServerCost.Follow) to the
// job, which stores them and passes them to its outputs (the service's
// page, its /metrics), and to run --metrics' server, under the run's job.
func followSystem(sc *ServerCost, job *JobRun, ms MetricsServer) {
	if sc == nil {
		return
	}
	so, _ := ms.(interface{ System(SystemSecond) })
	if job == nil && so == nil {
		return
	}
	sc.Follow(func(s SystemSecond) {
		job.System(s) // a nil job (--no-job) records nothing
		if so != nil {
			so.System(s)
		}
	})
}
