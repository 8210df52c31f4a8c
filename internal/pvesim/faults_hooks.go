package pvesim

import (
	"regexp"
	"time"
)

// FaultKind selects what an injected fault does.
type FaultKind int

const (
	// FaultLatency delays the request by Fault.Latency, then serves it.
	FaultLatency FaultKind = iota
	// FaultError answers Status/Message without executing the request.
	FaultError
	// FaultLockTimeout answers PVE's 500 lock timeout without executing.
	FaultLockTimeout
	// FaultTaskFailure makes the next task started by a matching request fail
	// with Message; the task's effect does not happen.
	FaultTaskFailure
	// FaultConnectionReset closes the connection without a response.
	FaultConnectionReset
)

// Fault is an injected failure for requests whose method and API path match.
type Fault struct {
	Method  string // "" matches any
	Path    string // regexp on the API path (without /api2/json)
	Kind    FaultKind
	Latency time.Duration
	Status  int
	Message string
	Rate    float64 // 0 or 1 = always; else probability
	Count   int     // 0 = unlimited, else fire N times

	re *regexp.Regexp
}

// InjectFault adds a fault. An invalid Path regexp matches nothing.
func (s *Sim) InjectFault(f Fault) {
	re, err := regexp.Compile(f.Path)
	if err != nil {
		re = regexp.MustCompile(`a\A`) // never matches
	}
	f.re = re
	s.mu.Lock()
	s.faults = append(s.faults, &f)
	s.mu.Unlock()
}

// ClearFaults removes all faults.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}
