package pve

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// OutcomeUnknown reports whether a write that failed with err may have
// taken effect all the same: it was sent and the connection broke or timed
// out before PVE's answer came (not an answer, not a connection that was
// never made). Such a write is never sent again blindly: a second create
// could make a second object or fail with "already exists".
func OutcomeUnknown(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) && !isTimeout(err) {
		return false
	}
	var apiErr *APIError
	var tlsErr *TLSError
	if errors.As(err, &apiErr) || errors.As(err, &tlsErr) || isDialError(err) {
		return false
	}
	var ce *ConnectError
	if errors.As(err, &ce) {
		return !ce.Dial
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		isTimeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// StartTask runs start, a write that starts a task of type typ and id on
// node (cephcreateosd on sdb, qmcreate of 100; "qmstart|hastart" when
// PVE starts one or the other, as for a VM HA may manage). When its answer is lost
// (OutcomeUnknown), PVE may have started the task anyway: StartTask looks
// for it in the node's task list (that type and id, started by this
// client's user, no earlier than the second the write was sent less
// lostTaskClockSkew) and returns its UPID as if the answer had come.
//
// Without such a task, PVE did not act: its API forks the worker before
// it answers, so a write that reached it has a task. StartTask looks once
// more after lostTaskSettle (a write still in PVE's checks before the
// fork), then sends the write again, at most lostAnswerResends times. A
// lost answer that was a timeout is never sent again: PVE may still be
// working on it (waiting for a lock before it forks).
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) StartTask(ctx context.Context, node, typ, id string, start func() (string, error)) (string, error) {
	for sent := 1; ; sent++ {
		since := LostTaskSince(time.Now())
		upid, err := start()
		if !OutcomeUnknown(err) {
			return upid, err
		}
		found, ferr := c.findLostTask(ctx, node, typ, id, since)
		switch {
		case found != "":
			c.log("the answer to a task-starting write was lost; following the task it started", "upid", found)
			return found, nil
		case ferr != nil:
			c.log("the answer to a task-starting write was lost and its task could not be looked for", "type", typ, "id", id, "lookup_error", ferr)
			return "", err
		case !LostAnswer(err) || sent > lostAnswerResends:
			c.log("the answer to a task-starting write was lost and no task of it was found", "type", typ, "id", id)
			return "", err
		}
		c.log("a task-starting write had no effect (its answer was lost, no task of it exists); sending it again", "type", typ, "id", id, "error", err.Error())
	}
}

// LostTaskSince is the earliest start time the task of a write sent at
// sent may show in its UPID: the node's clock (whole seconds) may be
// lostTaskClockSkew behind the client's.
func LostTaskSince(sent time.Time) time.Time {
	return sent.Truncate(time.Second).Add(-lostTaskClockSkew)
}

// findLostTask looks for the task of a write whose answer was lost: now
// and, when there is none yet, once more after lostTaskSettle.
func (c *Client) findLostTask(ctx context.Context, node, typ, id string, since time.Time) (string, error) {
	found, err := c.FindTask(ctx, node, typ, id, c.AuthUser(), since)
	if err != nil || found != "" {
		return found, err
	}
	if err := sleepCtx(ctx, lostTaskSettle); err != nil {
		return "", err
	}
	return c.FindTask(ctx, node, typ, id, c.AuthUser(), since)
}

// WriteVerified sends a write that starts no task (a sync create, a
// staging step) and, when its answer is lost, asks applied whether PVE
// did it: yes counts as the answer; no sends it again (at most
// lostAnswerResends times, never after a timeout: PVE may still be at
// it). applied reads what the write would have changed; its own failure
// leaves the write's error standing.
func (c *Client) WriteVerified(ctx context.Context, what string, write func() error, applied func() (bool, error)) error {
	for sent := 1; ; sent++ {
		err := write()
		if !OutcomeUnknown(err) {
			return err
		}
		done, aerr := applied()
		switch {
		case aerr != nil:
			c.log("the answer to a write was lost and reading back what it did failed", "write", what, "read_error", aerr.Error())
			return err
		case done:
			c.log("the answer to a write was lost; reading back shows PVE did it", "write", what)
			return nil
		case !LostAnswer(err) || sent > lostAnswerResends:
			return err
		}
		c.log("a write had no effect (its answer was lost, reading back shows it undone); sending it again", "write", what, "error", err.Error())
	}
}

// LostAnswer reports whether err is a write's lost answer after which
// PVE has either done the write by now or never will: the connection
// broke after the request was sent, rather than timing out while PVE may
// still be at work. Reading back then tells whether to send it again.
func LostAnswer(err error) bool {
	return OutcomeUnknown(err) && !isTimeout(err) && !errors.Is(err, context.DeadlineExceeded)
}

// lostAnswerResends bounds how often one write whose answer is lost and
// whose effect is not there is sent again.
const lostAnswerResends = 3

// lostTaskSettle is how long StartTask waits before it looks a second
// time for the task of a lost answer: PVE's API checks the request
// (and may read the cluster's config) before it forks the worker.
var lostTaskSettle = 500 * time.Millisecond

// lostTaskClockSkew is how far the node's clock may be behind the
// client's when StartTask looks for the task of a lost answer: the
// UPID's start time is the node's clock. The nodes of a cluster keep
// their clocks synchronised (corosync needs it), so this is slack for a
// drifting clock, kept short: a task of the same type, id and user that
// started this much before the write would be taken for its task.
const lostTaskClockSkew = 2 * time.Second

// FindTask returns the UPID of the newest task of type typ ("qmstart", or
// "qmstart|hastart": one of these) and id on node
// that user started ("root@pam", or "root@pam!tokenid" for an API token,
// as in the UPID) at or after since, "" when there is none (running or
// done).
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) FindTask(ctx context.Context, node, typ, id, user string, since time.Time) (string, error) {
	var tasks []UPID
	for _, t := range strings.Split(typ, "|") {
		of, err := c.TasksSince(ctx, node, t, id, since)
		if err != nil {
			return "", err
		}
		tasks = append(tasks, of...)
	}
	var best UPID
	for _, u := range tasks {
		if u.User != user {
			continue // another user's (or token's) task of the same object
		}
		if best.Raw == "" || u.StartTime.After(best.StartTime) {
			best = u
		}
	}
	return best.Raw, nil
}

// TasksSince lists the tasks of type typ and id on node (running or done)
// that started at or after since.
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) TasksSince(ctx context.Context, node, typ, id string, since time.Time) ([]UPID, error) {
	var wire []struct {
		UPID flexString `json:"upid"`
	}
	p := Params{"source": "all", "typefilter": typ, "since": strconv.FormatInt(since.Unix(), 10)}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/tasks", p, &wire); err != nil {
		return nil, err
	}
	var out []UPID
	for _, w := range wire {
		u, err := ParseUPID(string(w.UPID))
		if err != nil || u.Type != typ || u.ID != id || u.StartTime.Before(since) {
			continue
		}
		out = append(out, u)
	}
	return out, nil
}

type idempotentKey struct{}

// Idempotent marks the writes sent with the returned context as having
// the same effect sent twice as once (they set values absolutely: an APT
// repository enabled, cluster options, a flag set): when the answer to one
// is lost, the client sends it again as it does a read. Never for a create,
// a relative change ("+1G") or a write carrying a digest.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func isIdempotent(ctx context.Context) bool {
	v, _ := ctx.Value(idempotentKey{}).(bool)
	return v
}
