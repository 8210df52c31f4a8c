package pve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestAPIErrorMapping(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		reason   string
		body     string
		wantErr  string
		notFound bool
		msg      string
	}{
		{
			name: "400 with errors", status: 400, reason: "Parameter verification failed.",
			body:    `{"data":null,"message":"Parameter verification failed.\n","errors":{"mtu":"value must have a minimum value of 1280\n","bond_mode":"value 'x' does not have a value in the enumeration 'balance-rr, active-backup'"}}`,
			wantErr: "PVE API POST /nodes/z2g4a/network: 400 Parameter verification failed. (bond_mode: value 'x' does not have a value in the enumeration 'balance-rr, active-backup'; mtu: value must have a minimum value of 1280)",
			msg:     "Parameter verification failed.",
		},
		{
			name: "500 message", status: 500, reason: "bond 'bond0' - unable to find slave 'eno9'",
			body:    `{"data":null,"message":"bond 'bond0' - unable to find slave 'eno9'\n"}`,
			wantErr: "PVE API POST /nodes/z2g4a/network: 500 bond 'bond0' - unable to find slave 'eno9'",
			msg:     "bond 'bond0' - unable to find slave 'eno9'",
		},
		{
			name: "500 does not exist", status: 500, reason: "pool 'tank' does not exist",
			body: `{"data":null,"message":"pool 'tank' does not exist\n"}`, notFound: true,
			msg: "pool 'tank' does not exist",
		},
		{
			name: "400 iface does not exist", status: 400, reason: "Parameter verification failed.",
			body:     `{"data":null,"message":"Parameter verification failed.\n","errors":{"iface":"interface does not exist"}}`,
			notFound: true, wantErr: "PVE API POST /nodes/z2g4a/network: 400 Parameter verification failed. (iface: interface does not exist)",
		},
		{
			name: "404", status: 404, reason: "Not Found", body: ``, notFound: true, msg: "Not Found",
		},
		{
			name: "500 unknown node", status: 500, reason: "hostname lookup 'nope' failed - failed to get address info for: nope: Name or service not known",
			body: `{"data":null,"message":"hostname lookup 'nope' failed - failed to get address info for: nope: Name or service not known\n"}`,
		},
		{
			name: "400 no such task", status: 400, reason: "Parameter verification failed.",
			body: `{"data":null,"message":"Parameter verification failed.\n","errors":{"upid":"no such task"}}`,
		},
		{
			name: "401 empty body", status: 401, reason: "authentication failure", body: ``,
			msg:     "authentication failure",
			wantErr: `PVE API POST /nodes/z2g4a/network: 401 authentication failure: authentication failed for API token "root@pam!terraform"`,
		},
		{
			name: "501", status: 501, reason: "Method 'POST /nodes/z2g4a/networkx' not implemented",
			body: `{"data":null,"message":"Method 'POST /nodes/z2g4a/networkx' not implemented\n"}`,
			msg:  "Method 'POST /nodes/z2g4a/networkx' not implemented",
		},
		{
			name: "old PVE without message", status: 500, reason: "storage 'x' does not exist",
			body: `{"data":null}`, notFound: true, msg: "storage 'x' does not exist",
		},
		{
			name: "403", status: 403, reason: "Permission check failed (/nodes/z2g4a, Sys.Modify)",
			body: `{"data":null,"message":"Permission check failed (/nodes/z2g4a, Sys.Modify)\n"}`,
			msg:  "Permission check failed (/nodes/z2g4a, Sys.Modify)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits int
			ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits++
				rawResponse(t, w, tc.status, tc.reason, tc.body)
			}))
			c := clientFor(t, ts, Config{})
			err := c.Post(context.Background(), "/nodes/z2g4a/network", Params{"iface": "x"}, nil)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %T %v, want *APIError", err, err)
			}
			if ae.StatusCode != tc.status || ae.Method != "POST" || ae.Path != "/nodes/z2g4a/network" {
				t.Errorf("APIError = %+v", ae)
			}
			if tc.msg != "" && ae.Message != tc.msg {
				t.Errorf("Message = %q, want %q", ae.Message, tc.msg)
			}
			if tc.wantErr != "" && !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("Error() = %q\nwant prefix %q", err.Error(), tc.wantErr)
			}
			if got := IsNotFound(err); got != tc.notFound {
				t.Errorf("IsNotFound = %v, want %v", got, tc.notFound)
			}
			if strings.Contains(err.Error(), testTokenSecret) {
				t.Errorf("error leaks the token secret: %s", err)
			}
			if hits != 1 {
				t.Errorf("POST sent %d times, want 1", hits)
			}
		})
	}
}

func TestNotFoundWrapped(t *testing.T) {
	err := error(&APIError{StatusCode: 404})
	wrapped := errors.Join(errors.New("reading bridge"), err)
	if !IsNotFound(wrapped) || IsNotFound(errors.New("does not exist")) || IsNotFound(nil) {
		t.Fatal("IsNotFound must follow wrapping and only match API errors")
	}
}
