package pvesim

import (
	"regexp"
	"strings"
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
	// FaultConnectionReset closes the connection without a response and
	// without executing the request (dropped before the write).
	FaultConnectionReset
	// FaultDropAfter executes the request, then closes the connection
	// without its response (dropped after the write was applied).
	FaultDropAfter
	// FaultTaskLateFailure lets a matching task do its work, then fail with
	// Message (default "unexpected status", what PVE reports for a worker
	// that died without a status): the object a create made stays behind,
	// as when a create worker dies after writing the config.
	FaultTaskLateFailure
	// FaultTaskHang makes a matching task run until it is stopped
	// (DELETE /nodes/{node}/tasks/{upid}) or the simulator closes; its
	// effect never happens.
	FaultTaskHang
	// FaultTaskLockTimeout fails a matching task with the lock timeout its
	// worker would hit (cephcreateosd: the disk-manage lock; qm*: the VM's
	// config lock); the effect does not happen.
	FaultTaskLockTimeout
	// FaultSSHDown makes Node's sshd (all nodes' when "") close every
	// connection at once, as a stopped sshd behind a NAT would.
	FaultSSHDown
	// FaultTaskKilled kills a matching worker mid-work (a node crash, the
	// OOM killer): its effect does not happen and, unlike FaultTaskFailure,
	// nothing it did before its work is cleaned up (qmcreate: the config
	// reserved with `lock: create` stays; clusterjoin: the member has
	// added the node to corosync.conf, the node never switched).
	FaultTaskKilled
)

// faultKindNames are the spec's action names (faults_spec.go) and the
// request log's "fault" values.
var faultKindNames = map[FaultKind]string{
	FaultLatency:         "delay",
	FaultError:           "error",
	FaultLockTimeout:     "lock",
	FaultTaskFailure:     "task-fail",
	FaultConnectionReset: "drop-before",
	FaultDropAfter:       "drop-after",
	FaultTaskLateFailure: "task-fail-late",
	FaultTaskHang:        "task-hang",
	FaultTaskLockTimeout: "task-lock",
	FaultSSHDown:         "ssh-down",
	FaultTaskKilled:      "task-kill",
}

func (k FaultKind) String() string {
	if n, ok := faultKindNames[k]; ok {
		return n
	}
	return "unknown"
}

// isTask reports whether the kind acts on a task rather than a request.
func (k FaultKind) isTask() bool {
	switch k {
	case FaultTaskFailure, FaultTaskLateFailure, FaultTaskHang, FaultTaskLockTimeout, FaultTaskKilled:
		return true
	}
	return false
}

// Fault is an injected failure. Request faults match a request's method and
// API path; task faults the request that starts the task and the task's
// type and ID; FaultSSHDown a node.
type Fault struct {
	// Method is "" (any) or a method; several are separated by commas
	// ("POST,PUT,DELETE").
	Method string
	Path   string // regexp on the API path (without /api2/json); "" matches any
	// TaskType and TaskID are regexps (anchored) on the type and ID of the
	// task a task fault acts on ("qmcreate", "100"); "" matches any.
	TaskType, TaskID string
	// Node is the node of FaultSSHDown ("" = every node).
	Node    string
	Kind    FaultKind
	Latency time.Duration
	Status  int
	Message string
	Rate    float64 // 0 or 1 = always; else the probability, drawn from the fault seed
	Count   int     // 0 = unlimited, else fire N times
	// Rule is the spec text the fault came from (faults_spec.go); it is
	// recorded with every request the fault hit (Request.FaultRule).
	Rule string

	re, typeRE, idRE *regexp.Regexp
	id               int            // position in the list, for the seeded draws
	seen             map[string]int // per request key: how often the fault was asked
}

func compileOrNever(expr string) *regexp.Regexp {
	re, err := regexp.Compile(expr)
	if err != nil {
		return regexp.MustCompile(`a\A`) // never matches
	}
	return re
}

// prepare compiles the fault's patterns. An invalid regexp matches nothing.
func (f *Fault) prepare(id int) {
	f.re = compileOrNever(f.Path)
	f.typeRE, f.idRE = nil, nil
	if f.TaskType != "" {
		f.typeRE = compileOrNever("^(?:" + f.TaskType + ")$")
	}
	if f.TaskID != "" {
		f.idRE = compileOrNever("^(?:" + f.TaskID + ")$")
	}
	f.id, f.seen = id, map[string]int{}
	f.Method = strings.ToUpper(f.Method)
}

// InjectFault adds a fault. An invalid Path regexp matches nothing.
func (s *Sim) InjectFault(f Fault) {
	s.mu.Lock()
	f.prepare(s.faultSerial)
	s.faultSerial++
	s.faults = append(s.faults, &f)
	s.mu.Unlock()
	if f.Kind == FaultSSHDown {
		s.dropSSHDown()
	}
}

// ClearFaults removes all faults (those of Options.Faults and of the spec
// included). Tasks a FaultTaskHang holds keep running until stopped.
func (s *Sim) ClearFaults() {
	s.SetFaults(nil)
}

// SetFaults replaces all faults by fs, their seeded draws starting afresh:
// the same list and seed give the same faults to the same requests.
func (s *Sim) SetFaults(fs []Fault) {
	s.mu.Lock()
	s.faults, s.faultSerial = nil, 0
	ssh := false
	for _, f := range fs {
		f.prepare(s.faultSerial)
		s.faultSerial++
		s.faults = append(s.faults, &f)
		ssh = ssh || f.Kind == FaultSSHDown
	}
	s.mu.Unlock()
	if ssh {
		s.dropSSHDown()
	}
}

// SetFaultSpec replaces all faults by those of spec (faults_spec.go);
// a spec that does not parse changes nothing.
func (s *Sim) SetFaultSpec(spec string) error {
	fs, err := ParseFaultSpec(spec)
	if err != nil {
		return err
	}
	s.SetFaults(fs)
	return nil
}

// Faults returns the faults in force (counts as left).
func (s *Sim) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.faults))
	for _, f := range s.faults {
		cp := *f
		cp.seen = nil
		out = append(out, cp)
	}
	return out
}

// FaultSeed is the seed of the faults' draws (Options.FaultSeed).
func (s *Sim) FaultSeed() int64 { return s.opts.FaultSeed }
