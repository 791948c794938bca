package sysprobe

// Add adds b's counters to iv, as if the two intervals were one: counters
// summed, gauges (processes, threads, connections, memory, runnable) b's.
// A run sums the seconds an agent answered for; jobs show sums seconds into
// rows.
func (iv *Interval) Add(b Interval) {
	iv.Seconds += b.Seconds
	iv.Host.add(b.Host)
	if b.Server != nil {
		if iv.Server == nil {
			iv.Server = &Server{}
		}
		iv.Server.add(b.Server)
	}
	for _, m := range b.Missing {
		seen := false
		for _, x := range iv.Missing {
			seen = seen || x == m
		}
		if !seen {
			iv.Missing = append(iv.Missing, m)
		}
	}
}

func (c CPUTimes) plus(o CPUTimes) CPUTimes {
	return CPUTimes{c.User + o.User, c.Nice + o.Nice, c.System + o.System, c.Idle + o.Idle,
		c.IOWait + o.IOWait, c.IRQ + o.IRQ, c.SoftIRQ + o.SoftIRQ, c.Steal + o.Steal}
}

func (h *Host) add(b Host) {
	h.CPUs = b.CPUs
	h.CPU = h.CPU.plus(b.CPU)
	for i, c := range b.PerCPU {
		if i >= len(h.PerCPU) {
			h.PerCPU = append(h.PerCPU, CPUTimes{})
		}
		h.PerCPU[i] = h.PerCPU[i].plus(c)
	}
	h.ContextSwitch += b.ContextSwitch
	h.Interrupts += b.Interrupts
	h.ProcsRunning, h.ProcsBlocked = b.ProcsRunning, b.ProcsBlocked
	h.MemTotal, h.MemAvailable = b.MemTotal, b.MemAvailable
	h.OtherCPU += b.OtherCPU
	if len(b.Net) > 0 && h.Net == nil {
		h.Net = map[string]NetCounters{}
	}
	for k, v := range b.Net {
		n := h.Net[k]
		n.RxBytes += v.RxBytes
		n.TxBytes += v.TxBytes
		n.RxPackets += v.RxPackets
		n.TxPackets += v.TxPackets
		h.Net[k] = n
	}
	if len(b.Disk) > 0 && h.Disk == nil {
		h.Disk = map[string]DiskCounters{}
	}
	for k, v := range b.Disk {
		d := h.Disk[k]
		d.Reads += v.Reads
		d.Writes += v.Writes
		d.ReadBytes += v.ReadBytes
		d.WrittenBytes += v.WrittenBytes
		d.IOTimeMs += v.IOTimeMs
		h.Disk[k] = d
	}
}

func (s *Server) add(d *Server) {
	s.Processes, s.Threads, s.StateHz = d.Processes, d.Threads, d.StateHz
	s.UserNs += d.UserNs
	s.SysNs += d.SysNs
	s.Voluntary += d.Voluntary
	s.Involuntary += d.Involuntary
	s.RunDelayNs += d.RunDelayNs
	s.ReadBytes += d.ReadBytes
	s.WriteBytes += d.WriteBytes
	s.ReadCalls += d.ReadCalls
	s.WriteCalls += d.WriteCalls
	st := &s.States
	st.CPU += d.States.CPU
	st.Runnable += d.States.Runnable
	st.Network += d.States.Network
	st.Lock += d.States.Lock
	st.IO += d.States.IO
	st.Idle += d.States.Idle
	if d.Port != nil {
		if s.Port == nil {
			s.Port = &Port{Port: d.Port.Port, Ports: d.Port.Ports}
		}
		s.Port.BytesIn += d.Port.BytesIn
		s.Port.BytesOut += d.Port.BytesOut
		s.Port.ClosedLost += d.Port.ClosedLost
		s.Port.Connections = d.Port.Connections
	}
}
