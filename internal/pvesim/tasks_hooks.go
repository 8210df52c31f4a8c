package pvesim

// PeakConcurrentTasks returns the most tasks of type typ (such as
// "srvreload") that ever ran at the same time on node.
func (s *Sim) PeakConcurrentTasks(node, typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak[node+"/"+typ]
}
