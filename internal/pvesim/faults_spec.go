package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// FaultSpecHelp documents the fault spec (pvesim -faults, make sim FAULTS=,
// ParseFaultSpec, the control endpoint's PUT /faults).
const FaultSpecHelp = `A fault spec is rules separated by ";" or newlines ("#" starts a comment):

  SELECTOR=ACTION[:MODIFIER]...

Selectors:
  METHODS PATH    requests: METHODS is *, read (GET), write (POST,PUT,DELETE) or a
                  comma list (POST,PUT); PATH a glob on the API path without
                  /api2/json: * matches within one segment, ** any rest; a PATH of
                  * or ** alone matches every path.
  task TYPE[/ID]  tasks of that type (and ID), globs: task qmcreate, task cephcreateosd,
                  task qmcreate/100, task ceph*.
  ssh NODE        the node's sshd (* = every node).
Actions:
  requests: 5xx (500), a status 500-599, lock (PVE's lock timeout for the path: the
            request has no effect; only writes whose handler takes a lock pvesim
            knows: VM/CT config, storage.cfg, pools, network, ceph init), drop or
            drop-before (the connection closes, the
            request has no effect), drop-after (the request takes effect, the
            connection closes without the answer), delay (with a duration modifier)
  tasks:    fail (TASK ERROR, no effect), fail-late (the work is done, then the
            worker dies: a create leaves its object behind), kill (the worker is
            killed mid-work: no effect and no cleanup, so what it reserved
            first stays: a VM config locked 'create', a node added to
            corosync.conf but not joined), hang (the task never
            ends until stopped), lock (the lock timeout the worker meets, no effect:
            qm*, vz*, cephcreateosd and disk workers, Ceph monitors)
  ssh:      down (connections close at once)
Modifiers: N% (rate, default 100%), Nx (at most N times), a duration (delay: 2s).
Rates are drawn from the fault seed: the n-th request of a method and path (the
n-th task of a type and ID) meets the same faults for the same seed and spec.
Examples:
  read /nodes/*/ceph/**=5xx:20%; write **=lock:10%; task qmcreate=fail-late:1x
  POST /pools=drop-after:1x; task cephcreateosd=hang; ssh z2g4b=down`

// ParseFaultSpec reads a fault spec (FaultSpecHelp) into faults, in order;
// each fault's Rule is its rule's text.
func ParseFaultSpec(spec string) ([]Fault, error) {
	var out []Fault
	for _, line := range strings.Split(spec, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		for _, rule := range strings.Split(line, ";") {
			rule = strings.TrimSpace(rule)
			if rule == "" {
				continue
			}
			f, err := parseFaultRule(rule)
			if err != nil {
				return nil, fmt.Errorf("fault rule %q: %w", rule, err)
			}
			out = append(out, f)
		}
	}
	return out, nil
}

func parseFaultRule(rule string) (Fault, error) {
	sel, act, ok := strings.Cut(rule, "=")
	if !ok {
		return Fault{}, fmt.Errorf("no '=': want SELECTOR=ACTION, e.g. read /nodes/*/ceph/**=5xx:20%%")
	}
	words := strings.Fields(sel)
	if len(words) != 2 {
		return Fault{}, fmt.Errorf("selector %q: want METHODS PATH, task TYPE[/ID] or ssh NODE", strings.TrimSpace(sel))
	}
	parts := strings.Split(strings.TrimSpace(act), ":")
	f := Fault{Rule: rule}
	action := strings.ToLower(parts[0])
	switch strings.ToLower(words[0]) {
	case "task":
		typ, id, _ := strings.Cut(words[1], "/")
		f.TaskType = globRE(typ, false)
		if id != "" {
			f.TaskID = globRE(id, false)
		}
		switch action {
		case "fail":
			f.Kind = FaultTaskFailure
		case "fail-late":
			f.Kind = FaultTaskLateFailure
		case "hang":
			f.Kind = FaultTaskHang
		case "lock":
			f.Kind = FaultTaskLockTimeout
		case "kill":
			f.Kind = FaultTaskKilled
		default:
			return Fault{}, fmt.Errorf("task action %q: want fail, fail-late, kill, hang or lock", parts[0])
		}
	case "ssh":
		if action != "down" {
			return Fault{}, fmt.Errorf("ssh action %q: want down", parts[0])
		}
		f.Kind, f.Node = FaultSSHDown, words[1]
		if f.Node == "*" {
			f.Node = ""
		}
	default:
		m, err := faultMethods(words[0])
		if err != nil {
			return Fault{}, err
		}
		f.Method = m
		p := words[1]
		switch {
		case p == "*" || p == "**":
			f.Path = ""
		case strings.HasPrefix(p, "/"):
			f.Path = "^" + globRE(p, true) + "$"
		default:
			return Fault{}, fmt.Errorf("path %q: want an API path starting with / (without /api2/json), or *", p)
		}
		switch action {
		case "5xx":
			f.Kind, f.Status = FaultError, 500
		case "lock":
			f.Kind = FaultLockTimeout
		case "drop", "drop-before":
			f.Kind = FaultConnectionReset
		case "drop-after":
			f.Kind = FaultDropAfter
		case "delay":
			f.Kind = FaultLatency
		default:
			n, err := strconv.Atoi(action)
			if err != nil || n < 500 || n > 599 {
				return Fault{}, fmt.Errorf("action %q: want 5xx, a status 500-599, lock, drop, drop-before, drop-after or delay", parts[0])
			}
			f.Kind, f.Status = FaultError, n
		}
	}
	for _, m := range parts[1:] {
		m = strings.TrimSpace(m)
		switch {
		case strings.HasSuffix(m, "%"):
			r, err := strconv.ParseFloat(strings.TrimSuffix(m, "%"), 64)
			if err != nil || r <= 0 || r > 100 {
				return Fault{}, fmt.Errorf("rate %q: want a percentage above 0 and at most 100, e.g. 20%%", m)
			}
			f.Rate = r / 100
		case strings.HasSuffix(m, "x"):
			n, err := strconv.Atoi(strings.TrimSuffix(m, "x"))
			if err != nil || n < 1 {
				return Fault{}, fmt.Errorf("count %q: want a positive number of times, e.g. 1x", m)
			}
			f.Count = n
		default:
			d, err := time.ParseDuration(m)
			if err != nil || d <= 0 || f.Kind != FaultLatency {
				return Fault{}, fmt.Errorf("modifier %q: want a rate (20%%), a count (3x) or, for delay, a duration (2s)", m)
			}
			f.Latency = d
		}
	}
	if f.Kind == FaultLatency && f.Latency == 0 {
		return Fault{}, fmt.Errorf("delay needs a duration, e.g. delay:2s")
	}
	return f, nil
}

// faultMethods turns a METHODS word into Fault.Method.
func faultMethods(w string) (string, error) {
	switch strings.ToLower(w) {
	case "*":
		return "", nil
	case "read":
		return "GET", nil
	case "write":
		return "POST,PUT,DELETE", nil
	}
	ms := strings.Split(strings.ToUpper(w), ",")
	for _, m := range ms {
		switch m {
		case "GET", "POST", "PUT", "DELETE":
		default:
			return "", fmt.Errorf("method %q: want *, read, write or GET, POST, PUT, DELETE (comma-separated)", m)
		}
	}
	return strings.Join(ms, ","), nil
}

// globRE turns a glob into a regexp body: * within a path segment (any
// characters when !path), ** across segments.
func globRE(g string, path bool) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch {
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case g[i] == '*' && path:
			b.WriteString("[^/]*")
		case g[i] == '*':
			b.WriteString(".*")
		case g[i] == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	return b.String()
}

// FaultSpec renders the faults in force as a spec: each fault's Rule, or a
// description of a fault set from Go.
func (s *Sim) FaultSpec() string {
	var b strings.Builder
	for _, f := range s.Faults() {
		if f.Rule != "" {
			fmt.Fprintf(&b, "%s\n", f.Rule)
			continue
		}
		fmt.Fprintf(&b, "# set from Go: %s method=%q path=%q task=%q/%q node=%q rate=%g count=%d\n",
			f.Kind, f.Method, f.Path, f.TaskType, f.TaskID, f.Node, f.Rate, f.Count)
	}
	return b.String()
}
