package pvesim

// setTaskUndoLocked gives the task upid of node ns what its worker cleans
// up when it dies before its work: an injected task failure, lock timeout
// or a stop (DELETE /nodes/{node}/tasks/{upid}). Caller holds s.mu.
func (s *Sim) setTaskUndoLocked(ns *nodeState, upid string, undo func()) {
	for i := len(ns.Tasks) - 1; i >= 0; i-- {
		if ns.Tasks[i].UPID == upid {
			ns.Tasks[i].undo = undo
			return
		}
	}
}

// runUndo runs the task's cleanup once. Caller holds s.mu.
func (t *task) runUndo() {
	if t.undo != nil {
		u := t.undo
		t.undo = nil
		u()
	}
}
