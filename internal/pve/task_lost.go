package pve

import (
	"context"
	"errors"
	"io"
	"strconv"
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
// node (cephcreateosd on sdb, qmcreate of 100). When its answer is lost
// (OutcomeUnknown), PVE may have started the task anyway: StartTask looks
// for it in the node's task list (that type and id, started by this
// client's user, no earlier than the second the write was sent less
// lostTaskClockSkew) and returns its UPID as if the answer had come.
// Without such a task the write's error stands; it is not sent again.
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) StartTask(ctx context.Context, node, typ, id string, start func() (string, error)) (string, error) {
	since := time.Now().Truncate(time.Second).Add(-lostTaskClockSkew)
	upid, err := start()
	if !OutcomeUnknown(err) {
		return upid, err
	}
	found, ferr := c.FindTask(ctx, node, typ, id, c.AuthUser(), since)
	if ferr != nil || found == "" {
		c.log("the answer to a task-starting write was lost and no task of it was found", "type", typ, "id", id, "lookup_error", ferr)
		return "", err
	}
	c.log("the answer to a task-starting write was lost; following the task it started", "upid", found)
	return found, nil
}

// lostTaskClockSkew is how far the node's clock may be behind the
// client's when StartTask looks for the task of a lost answer: the
// UPID's start time is the node's clock. The nodes of a cluster keep
// their clocks synchronised (corosync needs it), so this is slack for a
// drifting clock, kept short: a task of the same type, id and user that
// started this much before the write would be taken for its task.
const lostTaskClockSkew = 2 * time.Second

// FindTask returns the UPID of the newest task of type typ and id on node
// that user started ("root@pam", or "root@pam!tokenid" for an API token,
// as in the UPID) at or after since, "" when there is none (running or
// done).
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) FindTask(ctx context.Context, node, typ, id, user string, since time.Time) (string, error) {
	tasks, err := c.TasksSince(ctx, node, typ, id, since)
	if err != nil {
		return "", err
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
