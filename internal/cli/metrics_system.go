package cli

import "github.com/sledge-bench/sledge/internal/runner"

// System exports one second of the run's sampler (the server's, sledge's
// host's) under the run's job id: the function a run gives ServerCost.Follow
// calls it beside the job's.
func (m *metricsServer) System(s runner.SystemSecond) {
	if m == nil {
		return
	}
	m.exp.System(m.jobID, s)
}
