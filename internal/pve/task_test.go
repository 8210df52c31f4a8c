package pve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testUPID = "UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:srvreload:networking:root@pam!terraform:"

func TestParseUPID(t *testing.T) {
	u, err := ParseUPID(testUPID)
	if err != nil {
		t.Fatal(err)
	}
	want := UPID{Raw: testUPID, Node: "pve1", PID: 0x3A2F1, PStart: 0x1B4C5D6, StartTime: time.Unix(0x67A1B2C3, 0).UTC(),
		Type: "srvreload", ID: "networking", User: "root@pam!terraform"}
	if u != want {
		t.Fatalf("ParseUPID = %+v\nwant %+v", u, want)
	}
	for _, good := range []string{
		"UPID:pve-node-1:00001234:123456789:67A1B2C3:qmstart:100:root@pam:", // 9-digit pstart
		"UPID:n:00001234:12345678:67a1b2c3:clusterjoin::root@pam:",          // empty id
	} {
		if _, err := ParseUPID(good); err != nil {
			t.Errorf("ParseUPID(%q): %v", good, err)
		}
	}
	for _, bad := range []string{
		"",
		"UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam",   // no trailing colon
		"UPID:pve1:3A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam:",     // short pid
		"UPID:pve1:0003A2F1:01B4C5D6:67A1B2C:qmstart:100:root@pam:",   // short starttime
		"UPID:-pve:0003A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam:",  // bad node
		"UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3::100:root@pam:",         // empty type
		"UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:qmstart:1/0:root@pam:",  // slash in id
		"UPID:pve1:0003A2G1:01B4C5D6:67A1B2C3:qmstart:100:root@pam:",  // non-hex
		"XUPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam:", // prefix
	} {
		if _, err := ParseUPID(bad); err == nil {
			t.Errorf("ParseUPID(%q) succeeded", bad)
		}
	}
}

// taskServer serves a task that is "running" for `running` polls, then
// stopped with exit; the log has the given lines.
func taskServer(t *testing.T, running int32, exit string, lines []string) (*Client, *atomic.Int32) {
	c, polls, _ := taskServerLogs(t, running, exit, lines)
	return c, polls
}

// taskServerLogs is taskServer that also counts the log reads.
func taskServerLogs(t *testing.T, running int32, exit string, lines []string) (*Client, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	var polls, logReads atomic.Int32
	base := "/api2/json/nodes/pve1/tasks/" + testUPID
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case base + "/status":
			n := polls.Add(1)
			if n <= running {
				writeJSON(w, 200, `{"data":{"upid":"`+testUPID+`","node":"pve1","pid":"238321","pstart":28624342,"starttime":1738650307,"type":"srvreload","id":"networking","user":"root@pam","tokenid":"terraform","status":"running"}}`)
				return
			}
			writeJSON(w, 200, fmt.Sprintf(`{"data":{"upid":%q,"node":"pve1","pid":238321,"pstart":"28624342","starttime":"1738650307","status":"stopped","exitstatus":%q}}`, testUPID, exit))
		case base + "/log":
			logReads.Add(1)
			if q := r.URL.Query(); q.Get("start") != "0" || q.Get("limit") != "1000" {
				t.Errorf("log query = %q", r.URL.RawQuery)
			}
			var b strings.Builder
			b.WriteString(`{"data":[`)
			for i, l := range lines {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"n":%d,"t":%q}`, i+1, l)
			}
			fmt.Fprintf(&b, `],"total":%d}`, len(lines))
			writeJSON(w, 200, b.String())
		default:
			t.Errorf("unexpected path %q", r.URL.Path)
			http.NotFound(w, r)
		}
	}))
	return clientFor(t, ts, Config{}), &polls, &logReads
}

// A task that ended OK costs its status reads only: its log is read when
// the caller asks (ReadTaskLog), once.
func TestWaitTaskOK(t *testing.T) {
	c, polls, logReads := taskServerLogs(t, 3, "OK", []string{"starting", "TASK OK"})
	res, err := c.WaitTask(context.Background(), testUPID)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != "OK" || res.Warnings != 0 || res.Log != nil || res.UPID.Type != "srvreload" {
		t.Fatalf("result = %+v", res)
	}
	if polls.Load() != 4 || logReads.Load() != 0 {
		t.Errorf("polls = %d, log reads = %d, want 4 and 0", polls.Load(), logReads.Load())
	}
	if err := c.ReadTaskLog(context.Background(), res); err != nil || len(res.Log) != 2 || res.Log[1] != "TASK OK" {
		t.Fatalf("ReadTaskLog: %v, log %q", err, res.Log)
	}
	if err := c.ReadTaskLog(context.Background(), res); err != nil || logReads.Load() != 1 {
		t.Errorf("a second ReadTaskLog: %v, log reads = %d, want 1", err, logReads.Load())
	}
}

func TestWaitTaskWarnings(t *testing.T) {
	c, _, logReads := taskServerLogs(t, 0, "WARNINGS: 2", []string{"WARN: a", "warning: vmbr0: b", "TASK WARNINGS: 2"})
	res, err := c.WaitTask(context.Background(), testUPID)
	if err != nil {
		t.Fatalf("WARNINGS must be success, got %v", err)
	}
	if res.Warnings != 2 || res.ExitStatus != "WARNINGS: 2" || len(res.WarningLines()) != 2 || logReads.Load() != 1 {
		t.Fatalf("result = %+v, warning lines %q, log reads %d", res, res.WarningLines(), logReads.Load())
	}
}

func TestWaitTaskError(t *testing.T) {
	lines := []string{"a", "b", "c", "d", "e", "f", "g", "h", "error: vmbr9: cmd '/sbin/ip link set vmbr9 up' failed", "TASK ERROR: command 'ifreload -a' failed: exit code 1"}
	c, _ := taskServer(t, 1, "command 'ifreload -a' failed: exit code 1", lines)
	_, err := c.WaitTask(context.Background(), testUPID)
	var te *TaskError
	if !errors.As(err, &te) {
		t.Fatalf("err = %T %v, want *TaskError", err, err)
	}
	if len(te.Log) != len(lines) || te.ExitStatus != "command 'ifreload -a' failed: exit code 1" {
		t.Errorf("TaskError = %+v", te)
	}
	msg := err.Error()
	for _, want := range []string{
		"task srvreload networking on node pve1 failed: command 'ifreload -a' failed: exit code 1",
		"cmd '/sbin/ip link set vmbr9 up' failed", testUPID,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "\n  a\n") {
		t.Errorf("message should only keep the last log lines:\n%s", msg)
	}
}

func TestWaitTaskCancel(t *testing.T) {
	var polls atomic.Int32
	// The outer deadline only keeps a broken implementation from hanging.
	outer, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	ctx, cancel := context.WithCancel(outer)
	defer cancel()
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if polls.Add(1) == 2 {
			cancel()
		}
		writeJSON(w, 200, `{"data":{"status":"running"}}`)
	}))
	c := clientFor(t, ts, Config{TaskPollInterval: time.Millisecond})
	_, err := c.WaitTask(ctx, testUPID)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), testUPID) {
		t.Fatalf("err = %v, want context.Canceled naming the UPID", err)
	}
	if polls.Load() < 2 {
		t.Errorf("polls = %d", polls.Load())
	}
	if _, err := c.WaitTask(context.Background(), "not-a-upid"); err == nil {
		t.Error("invalid UPID accepted")
	}
}
