package pvesim

import "time"

// Request is one served request, as recorded in the request log.
type Request struct {
	Time   time.Time         `json:"time"`
	Node   string            `json:"node"` // which node's listener served it
	Method string            `json:"method"`
	Path   string            `json:"path"` // API path without /api2/json
	Params map[string]string `json:"params"`
	Auth   string            `json:"auth"`   // token, ticket, none
	Status int               `json:"status"` // -1 when the connection was reset
	// Fault is the injected fault the request met (FaultKind.String:
	// "error", "lock", "drop-before", "drop-after", "delay", "task-fail",
	// "task-fail-late", "task-hang", "task-lock"); FaultRule the spec rule
	// it came from. Both empty for a request served as PVE would.
	Fault     string `json:"fault,omitempty"`
	FaultRule string `json:"fault_rule,omitempty"`
}

// Requests returns a copy of the in-memory request log.
func (s *Sim) Requests() []Request {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetRequests empties the in-memory request log.
func (s *Sim) ResetRequests() {
	s.reqMu.Lock()
	s.requests = nil
	s.reqMu.Unlock()
}

// CountRequests is how many logged requests had this method ("" = any)
// and API path.
func (s *Sim) CountRequests(method, path string) int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	n := 0
	for _, r := range s.requests {
		if (method == "" || r.Method == method) && r.Path == path {
			n++
		}
	}
	return n
}
