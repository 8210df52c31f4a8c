package pvesim

import "time"

// SetNodeClockOffset sets node's clock off the host's by d (negative:
// behind), as a drifting clock is: the start times of its tasks (in their
// UPIDs) are then that far off the client's clock.
func (s *Sim) SetNodeClockOffset(node string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Nodes[node].ClockOffset = d
}

// PeakConcurrentTasks returns the most tasks of type typ (such as
// "srvreload") that ever ran at the same time on node.
func (s *Sim) PeakConcurrentTasks(node, typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak[node+"/"+typ]
}
