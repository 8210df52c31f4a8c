package pve

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// UPID identifies a PVE task (worker process), e.g.
// "UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam:".
type UPID struct {
	Raw       string
	Node      string
	PID       uint64
	PStart    uint64
	StartTime time.Time
	Type      string
	ID        string // may be empty
	User      string // "user@realm" or "user@realm!tokenid"
}

func (u UPID) String() string { return u.Raw }

// The same shape PVE's own decoder (PVE::UPID) accepts; the trailing colon is
// part of the UPID.
var upidRe = regexp.MustCompile(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$`)

// ParseUPID decodes a UPID. The node in it tells where to poll the task.
func ParseUPID(s string) (UPID, error) {
	m := upidRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return UPID{}, fmt.Errorf("invalid PVE task id (UPID) %q: expected the form UPID:node:pid:pstart:starttime:type:id:user: with a trailing colon", s)
	}
	pid, _ := strconv.ParseUint(m[3], 16, 64)
	pstart, _ := strconv.ParseUint(m[4], 16, 64)
	st, _ := strconv.ParseInt(m[5], 16, 64)
	return UPID{
		Raw: m[0], Node: m[1], PID: pid, PStart: pstart, StartTime: time.Unix(st, 0).UTC(),
		Type: m[6], ID: m[7], User: m[8],
	}, nil
}

// TaskResult is a task that finished successfully, possibly with warnings.
type TaskResult struct {
	UPID       UPID
	ExitStatus string // "OK" or "WARNINGS: n"
	Warnings   int
	// Log is the task log of a task that ended with warnings; for one that
	// ended "OK" it is nil unless ReadTaskLog read it.
	Log []string
}

// WarningLines returns log lines that look like warnings, so callers can
// surface them as Terraform warnings.
func (r *TaskResult) WarningLines() []string {
	var out []string
	for _, l := range r.Log {
		if strings.HasPrefix(strings.ToLower(l), "warn") || strings.Contains(l, "WARN:") {
			out = append(out, l)
		}
	}
	return out
}

// TaskError is a task that finished with an error.
type TaskError struct {
	UPID       UPID
	ExitStatus string
	Log        []string
}

const taskErrorLogLines = 8

func (e *TaskError) Error() string {
	var b strings.Builder
	id := e.UPID.Type
	if e.UPID.ID != "" {
		id += " " + e.UPID.ID
	}
	fmt.Fprintf(&b, "task %s on node %s failed: %s", id, e.UPID.Node, e.ExitStatus)
	lines := e.Log
	if len(lines) > taskErrorLogLines {
		lines = lines[len(lines)-taskErrorLogLines:]
	}
	if len(lines) > 0 {
		b.WriteString("\nlast task log lines:")
		for _, l := range lines {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	}
	if e.UPID.Raw != "" {
		fmt.Fprintf(&b, "\n(task %s)", e.UPID.Raw)
	}
	return b.String()
}

// WaitTask polls the task until it stops and returns its result. A task that
// ends with "WARNINGS: n" is a success (with Warnings = n) carrying the task
// log; any other exit status other than "OK" is a *TaskError carrying the
// task log. The log of a task that ended "OK" is not read (one request per
// task saved); a caller that needs it asks with ReadTaskLog. If ctx ends
// first the error names the UPID, because the task keeps running on the node.
//
//pve:operation GET /nodes/{node}/tasks/{upid}/status
func (c *Client) WaitTask(ctx context.Context, upid string) (*TaskResult, error) {
	return c.waitTask(ctx, upid, time.Now())
}

// waitTask is WaitTask for a task whose wait began at start. The status is
// read when the pace (taskPace.next) says the task may have ended: at
// first after the shortest wait, or when tasks of its type (Config.TaskTimes)
// ended; what this one took is recorded for the next ones.
func (c *Client) waitTask(ctx context.Context, upid string, start time.Time) (*TaskResult, error) {
	u, err := ParseUPID(upid)
	if err != nil {
		return nil, err
	}
	for reads := 0; ; reads++ {
		// Read anew each time: a task of the same type that ran alongside
		// (the same reload on each node) may have just ended.
		expected := c.taskTimes.Expected(u.Type)
		wait := c.pace.next(expected, time.Since(start))
		if err := sleepCtx(ctx, wait); err != nil {
			return nil, fmt.Errorf("stopped waiting for PVE task %s (it may still be running on node %s): %w", u.Raw, u.Node, err)
		}
		sent := time.Since(start)
		stopped, exit, err := c.taskStatus(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("stopped waiting for PVE task %s (it may still be running on node %s): %w", u.Raw, u.Node, ctx.Err())
			}
			return nil, err
		}
		if stopped {
			res, err := c.finishTask(ctx, u, exit)
			if err == nil {
				// A failed task says nothing of its type's length: it
				// may have died at its first step.
				c.taskTimes.Record(u.Type, sent, reads == 0)
			}
			return res, err
		}
		c.log("waiting for PVE task", "upid", u.Raw, "elapsed", sent.String(), "expected", expected.String())
	}
}

// taskStatus reads whether the task stopped and its exit status.
func (c *Client) taskStatus(ctx context.Context, u UPID) (stopped bool, exit string, err error) {
	var st struct {
		Status     flexString `json:"status"`
		ExitStatus flexString `json:"exitstatus"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(u.Node)+"/tasks/"+PathEscape(u.Raw)+"/status", nil, &st); err != nil {
		return false, "", fmt.Errorf("reading status of PVE task %s: %w", u.Raw, err)
	}
	return strings.EqualFold(string(st.Status), "stopped"), strings.TrimSpace(string(st.ExitStatus)), nil
}

// Await waits for the task a write started: it passes a failed start
// through and otherwise waits with WaitTask:
//
//	upid, err := c.CreateCephMon(ctx, node, "")
//	_, err = c.Await(ctx, upid, err)
//
//pve:operation GET /nodes/{node}/tasks/{upid}/status
func (c *Client) Await(ctx context.Context, upid string, err error) (*TaskResult, error) {
	if err != nil {
		return nil, err
	}
	return c.WaitTask(ctx, upid)
}

func (c *Client) finishTask(ctx context.Context, u UPID, exit string) (*TaskResult, error) {
	if exit == "OK" {
		return &TaskResult{UPID: u, ExitStatus: exit}, nil
	}
	// The log is best effort: a failed log read must not hide the outcome.
	lines, _ := c.TaskLog(ctx, u, 0, taskLogLines)
	switch {
	case strings.HasPrefix(exit, "WARNINGS:"):
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(exit, "WARNINGS:")))
		if err == nil {
			return &TaskResult{UPID: u, ExitStatus: exit, Warnings: n, Log: lines}, nil
		}
	}
	if exit == "" {
		exit = "unknown exit status"
	}
	return nil, &TaskError{UPID: u, ExitStatus: exit, Log: lines}
}

// taskLogLines is how many lines of a task log are read.
const taskLogLines = 1000

// ReadTaskLog reads the log of a finished task into res.Log, unless it is
// there already (a task that warned): WaitTask does not read the log of a
// task that ended "OK". For callers that use a successful task's log (the
// closing line of a migration).
//
//pve:operation GET /nodes/{node}/tasks/{upid}/log
func (c *Client) ReadTaskLog(ctx context.Context, res *TaskResult) error {
	if res == nil || res.Log != nil {
		return nil
	}
	lines, err := c.TaskLog(ctx, res.UPID, 0, taskLogLines)
	if err != nil {
		return err
	}
	res.Log = lines
	return nil
}

// TaskLog reads lines [start, start+limit) of a task log.
//
//pve:operation GET /nodes/{node}/tasks/{upid}/log
func (c *Client) TaskLog(ctx context.Context, u UPID, start, limit int64) ([]string, error) {
	p := Params{}
	p.SetInt("start", start)
	p.SetInt("limit", limit)
	var items []struct {
		N flexInt    `json:"n"`
		T flexString `json:"t"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(u.Node)+"/tasks/"+PathEscape(u.Raw)+"/log", p, &items); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, string(it.T))
	}
	return out, nil
}
