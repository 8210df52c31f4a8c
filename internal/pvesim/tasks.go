package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// task is a PVE worker. Its effect runs when it completes, after
// Options.TaskDuration, so clients must poll like on real PVE.
type task struct {
	UPID       string   `json:"upid"`
	Node       string   `json:"node"`
	PID        uint32   `json:"pid"`
	PStart     uint32   `json:"pstart"`
	StartTime  int64    `json:"starttime"`
	Type       string   `json:"type"`
	ID         string   `json:"id"`
	User       string   `json:"user"`
	Status     string   `json:"status"` // running | stopped
	ExitStatus string   `json:"exitstatus,omitempty"`
	EndTime    int64    `json:"endtime,omitempty"`
	Log        []string `json:"log"`

	cancel chan struct{}
	// undo is what the worker cleans up when it dies before its work
	// (faults_task.go): nil when it leaves nothing.
	undo func()
	// failsLate tells the effect that the worker dies right after its
	// work (FaultTaskLateFailure), so it can run the error path its
	// program runs at that point (qmcreate: the config is unlinked).
	failsLate bool
	// lead is the time before the worker's effect runs, work the time
	// its effect spends holding the guest's lock (workLocked); span is
	// the task's entry in the timeline.
	lead, work time.Duration
	span       int
}

// upidRE is PVE::UPID::decode's regex.
var upidRE = regexp.MustCompile(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$`)

// taskEffect performs a task's work at completion (under s.mu); it may log
// lines and returns the warning count or an error (TASK ERROR).
type taskEffect func(t *task) (warnings int, err error)

// startTaskLocked forks a worker like RESTEnvironment::fork_worker and
// returns its UPID. Caller holds s.mu.
func (s *Sim) startTaskLocked(c *call, typ, id string, effect taskEffect) string {
	ns := c.node()
	now := time.Now()
	pid := s.st.NextPID
	s.st.NextPID++
	// pstart is the process start in clock ticks since boot.
	pstart := uint32((now.Unix() - ns.BootTime) * 100)
	t := &task{
		Node: ns.Name, PID: pid, PStart: pstart, StartTime: now.Add(ns.ClockOffset).Unix(),
		Type: typ, ID: id, User: c.user, Status: "running", Log: []string{},
		cancel: make(chan struct{}),
	}
	t.UPID = fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", t.Node, t.PID, t.PStart, t.StartTime, typ, id, t.User)
	tf, _ := s.takeTaskFaultLocked(c.method, c.path, typ, id)
	c.markFault(tf)
	ns.Tasks = append(ns.Tasks, t)
	if len(ns.Tasks) > 1000 {
		ns.Tasks = ns.Tasks[len(ns.Tasks)-1000:]
	}
	s.saveLocked()
	key := t.Node + "/" + typ
	if s.running == nil {
		s.running, s.peak = map[string]int{}, map[string]int{}
	}
	s.running[key]++
	s.peak[key] = max(s.peak[key], s.running[key])

	s.timeTaskLocked(c, t)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.endSpan(t.span)
		timer := time.NewTimer(t.lead)
		defer timer.Stop()
		done := timer.C
		if tf != nil && tf.Kind == FaultTaskHang {
			done = nil // a worker that never ends: only a stop or Close ends it
		}
		select {
		case <-done:
		case <-t.cancel:
			s.mu.Lock()
			s.running[key]--
			s.mu.Unlock()
			return
		case <-s.closing:
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.running[key]--
		if t.Status != "running" {
			return
		}
		switch {
		case tf != nil && tf.Kind == FaultTaskKilled:
			// Killed: no cleanup runs, what it reserved stays.
			t.undo = nil
			t.finish(0, taskFaultMessage(tf, typ, id))
		case tf != nil && tf.Kind != FaultTaskLateFailure:
			t.runUndo()
			t.finish(0, taskFaultMessage(tf, typ, id))
		case tf != nil:
			// The work is done (the config written, the object made), then
			// the worker dies: what it made stays unless the effect's
			// error path removes it.
			// A work that failed by itself ends the task with its own
			// error: the worker died of it, not after it.
			t.failsLate = true
			_, err := effect(t)
			switch {
			case t.Status != "running":
				// Stopped while its work ran with s.mu released.
			case err != nil:
				t.finish(0, err.Error())
			default:
				t.finish(0, taskFaultMessage(tf, typ, id))
			}
		default:
			w, err := effect(t)
			switch {
			case t.Status != "running":
				// Stopped (DELETE) while its work ran with s.mu released:
				// the interrupt is its end.
			case err != nil:
				t.finish(0, err.Error())
			default:
				t.finish(w, "")
			}
		}
		s.saveLocked()
	}()
	return t.UPID
}

func (t *task) finish(warnings int, errMsg string) {
	t.Status = "stopped"
	t.EndTime = time.Now().Unix()
	switch {
	case errMsg != "":
		msg := strings.ReplaceAll(strings.TrimRight(errMsg, "\n"), "\n", " ")
		t.ExitStatus = msg
		t.Log = append(t.Log, "TASK ERROR: "+msg)
	case warnings > 0:
		t.ExitStatus = fmt.Sprintf("WARNINGS: %d", warnings)
		t.Log = append(t.Log, "TASK "+t.ExitStatus)
	default:
		t.ExitStatus = "OK"
		t.Log = append(t.Log, "TASK OK")
	}
}

// apiFields are the decoded UPID fields; a token user is split into
// user + tokenid as Tasks.pm's $convert_token_task does.
func (t *task) apiFields() map[string]any {
	m := map[string]any{
		"upid": t.UPID, "node": t.Node, "pid": t.PID, "pstart": t.PStart,
		"starttime": t.StartTime, "type": t.Type, "id": t.ID, "user": t.User,
	}
	if u, tok, ok := strings.Cut(t.User, "!"); ok {
		m["user"], m["tokenid"] = u, tok
	}
	return m
}

func (s *Sim) findTask(c *call) (*task, *apiError) {
	upid := c.params["upid"]
	if !upidRE.MatchString(upid) {
		return nil, paramErr1("upid", "unable to parse worker upid")
	}
	for _, t := range c.node().Tasks {
		if t.UPID == upid {
			return t, nil
		}
	}
	return nil, paramErr1("upid", "no such task")
}

func registerTasks(t *routeTable) {
	upidP := pStr().req().maxLen(256)
	t.add("GET", "/nodes/{node}/tasks", &method{params: schema{
		"node":         nodeParam(),
		"start":        pInt(i64(0), nil),
		"limit":        pInt(i64(0), nil),
		"source":       pEnum("archive", "active", "all"),
		"typefilter":   pStr(),
		"userfilter":   pStr(),
		"vmid":         vmidParam().opt(),
		"since":        pInt(nil, nil),
		"until":        pInt(nil, nil),
		"statusfilter": pFmt("pve-task-status-type-list"),
		"errors":       pBool(),
	}, handler: listTasks})
	t.add("GET", "/nodes/{node}/tasks/{upid}", &method{params: schema{"node": nodeParam(), "upid": upidP}, handler: func(c *call) (any, *apiError) {
		if _, err := c.s.findTask(c); err != nil {
			return nil, err
		}
		return subdirs("log", "status"), nil
	}})
	t.add("DELETE", "/nodes/{node}/tasks/{upid}", &method{params: schema{"node": nodeParam(), "upid": upidP}, handler: func(c *call) (any, *apiError) {
		tk, err := c.s.findTask(c)
		if err != nil {
			return nil, err
		}
		if tk.Status == "running" {
			close(tk.cancel)
			tk.runUndo()
			tk.finish(0, "received interrupt")
			c.s.saveLocked()
		}
		return nil, nil
	}})
	t.add("GET", "/nodes/{node}/tasks/{upid}/status", &method{params: schema{"node": nodeParam(), "upid": upidP}, handler: func(c *call) (any, *apiError) {
		tk, err := c.s.findTask(c)
		if err != nil {
			return nil, err
		}
		m := tk.apiFields()
		m["status"] = tk.Status
		if tk.Status == "stopped" {
			m["exitstatus"] = tk.ExitStatus
		}
		return m, nil
	}})
	t.add("GET", "/nodes/{node}/tasks/{upid}/log", &method{params: schema{
		"node": nodeParam(), "upid": upidP,
		"start": pInt(i64(0), nil), "limit": pInt(i64(0), nil), "download": pBool(),
	}, handler: func(c *call) (any, *apiError) {
		tk, err := c.s.findTask(c)
		if err != nil {
			return nil, err
		}
		start, limit := intParam(c.params, "start", 0), intParam(c.params, "limit", 50)
		lines := []map[string]any{}
		for i := start; i < len(tk.Log) && len(lines) < limit; i++ {
			lines = append(lines, map[string]any{"n": i + 1, "t": tk.Log[i]})
		}
		if len(tk.Log) == 0 && start == 0 && limit > 0 {
			// PVE shows a placeholder for a log without lines yet.
			lines = append(lines, map[string]any{"n": 1, "t": "no content"})
		}
		c.setExtra("total", max(len(tk.Log), len(lines)))
		return lines, nil
	}})
}

func intParam(p map[string]string, k string, def int) int {
	if v, ok := p[k]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func listTasks(c *call) (any, *apiError) {
	source := c.params["source"]
	if source == "" {
		source = "archive"
	}
	var sel []*task
	for _, t := range c.node().Tasks {
		running := t.Status == "running"
		if (source == "archive" && running) || (source == "active" && !running) {
			continue
		}
		if f := c.params["typefilter"]; f != "" && t.Type != f {
			continue
		}
		if f := c.params["userfilter"]; f != "" && !strings.Contains(t.User, f) {
			continue
		}
		if v := c.params["vmid"]; v != "" && t.ID != v {
			continue
		}
		if c.params["errors"] == "1" && (running || t.ExitStatus == "OK") {
			continue
		}
		if v := c.params["since"]; v != "" && t.StartTime < int64(intParam(c.params, "since", 0)) {
			continue
		}
		if v := c.params["until"]; v != "" && t.StartTime > int64(intParam(c.params, "until", 0)) {
			continue
		}
		if f := c.params["statusfilter"]; f != "" && !running {
			cls := "error"
			switch {
			case t.ExitStatus == "OK":
				cls = "ok"
			case strings.HasPrefix(t.ExitStatus, "WARNINGS"):
				cls = "warning"
			case t.ExitStatus == "unexpected status":
				cls = "unknown"
			}
			if !contains(splitList(f), cls) {
				continue
			}
		}
		sel = append(sel, t)
	}
	sort.SliceStable(sel, func(i, j int) bool { return sel[i].StartTime > sel[j].StartTime })
	start, limit := intParam(c.params, "start", 0), intParam(c.params, "limit", 50)
	out := []map[string]any{}
	for i := start; i < len(sel) && len(out) < limit; i++ {
		t := sel[i]
		m := t.apiFields()
		if t.Status == "running" {
			m["status"] = "RUNNING"
		} else {
			m["status"] = t.ExitStatus
			m["endtime"] = t.EndTime
		}
		out = append(out, m)
	}
	c.setExtra("total", len(sel))
	return out, nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
