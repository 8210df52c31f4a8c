package pve

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseAPIToken(t *testing.T) {
	good := []struct{ in, id, secret string }{
		{"root@pam!terraform=2f1c-aa", "root@pam!terraform", "2f1c-aa"},
		{"ops@pve!tf.prod_1=abc", "ops@pve!tf.prod_1", "abc"},
		// Split at the last '=' like PVE: the id "user@ldap-corp!t=a" is then invalid (see bad list).
		{"user@ldap-corp!t=a=b", "", ""},
	}
	for _, g := range good[:2] {
		id, sec, err := ParseAPIToken(g.in)
		if err != nil || id != g.id || sec != g.secret {
			t.Errorf("ParseAPIToken(%q) = %q, %q, %v; want %q, %q", g.in, id, sec, err, g.id, g.secret)
		}
	}
	bad := []string{
		"",
		"supersecretvalue",
		"root@pam=supersecretvalue",           // no token name
		"root!tf=supersecretvalue",            // no realm
		"root@pam!tf=",                        // empty secret
		"root@pam!1tf=supersecretvalue",       // token name must start with a letter
		"ro ot@pam!tf=supersecretvalue",       // space in user
		"root@pam!tf!x=supersecretvalue",      // bad name
		"root@1pam!tf=supersecretvalue",       // realm must start with a letter
		good[2].in,                            // "t=a" is not a valid token name
		"root@pam!terraform:supersecretvalue", // wrong separator
	}
	for _, in := range bad {
		_, _, err := ParseAPIToken(in)
		if err == nil {
			t.Errorf("ParseAPIToken(%q) succeeded, want error", in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "USER@REALM!TOKENID=SECRET") {
			t.Errorf("error %q does not explain the expected form", msg)
		}
		if strings.Contains(msg, "supersecretvalue") {
			t.Errorf("error %q leaks the secret", msg)
		}
	}
}

func TestNewClientValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no endpoint", Config{APIToken: testToken}, "endpoint"},
		{"http", Config{Endpoint: "http://pve1:8006", APIToken: testToken}, "endpoint must be an https:// URL such as https://pve1:8006"},
		{"no scheme", Config{Endpoint: "pve1:8006", APIToken: testToken}, "https://"},
		{"no creds", Config{Endpoint: "https://pve1:8006"}, "credentials"},
		{"password only", Config{Endpoint: "https://pve1:8006", Password: "x"}, "username and password"},
		{"both", Config{Endpoint: "https://pve1:8006", APIToken: testToken, Username: "root@pam", Password: "x"}, "not both"},
		{"bad token", Config{Endpoint: "https://pve1:8006", APIToken: "nope=supersecretvalue"}, "USER@REALM!TOKENID=SECRET"},
		{"short fp", Config{Endpoint: "https://pve1:8006", APIToken: testToken, TLSFingerprint: "AB:CD"}, "tls_fingerprint"},
		{"bad pem", Config{Endpoint: "https://pve1:8006", APIToken: testToken, CACertPEM: "junk"}, "ca_cert"},
	}
	for _, tc := range cases {
		_, err := NewClient(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want containing %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "supersecretvalue") {
			t.Errorf("%s: error leaks secret: %v", tc.name, err)
		}
	}

	for _, ep := range []string{"https://pve1:8006", "https://pve1:8006/", "https://pve1:8006/api2/json", "https://pve1:8006/api2/json/"} {
		c, err := NewClient(Config{Endpoint: ep, APIToken: testToken, TLSFingerprint: strings.Repeat("ab:", 31) + "AB"})
		if err != nil {
			t.Fatalf("NewClient(%q): %v", ep, err)
		}
		if c.Endpoint() != "https://pve1:8006" || c.apiBase != "https://pve1:8006/api2/json" {
			t.Errorf("endpoint %q normalised to %q / %q", ep, c.Endpoint(), c.apiBase)
		}
		if c.AuthUser() != testTokenID || c.IsRootTicket() {
			t.Errorf("AuthUser = %q, IsRootTicket = %v", c.AuthUser(), c.IsRootTicket())
		}
	}
}

func versionHandler(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api2/json/version" {
			t.Errorf("unexpected path %s", r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "PVEAPIToken="+testToken {
			t.Errorf("Authorization = %q", got)
		}
		writeJSON(w, 200, `{"data":{"version":"9.1.2","release":"9.1","repoid":"abc123"}}`)
	}
}

func TestTLSFingerprintPin(t *testing.T) {
	ts := newTLSServer(t, versionHandler(t))

	// Upper-case with colons must work as well as plain hex.
	c := clientFor(t, ts, Config{TLSFingerprint: certFingerprintPVE(ts)})
	v, err := c.Version(context.Background())
	if err != nil {
		t.Fatalf("pinned Version: %v", err)
	}
	if v.Version != "9.1.2" || v.Release != "9.1" || v.RepoID != "abc123" {
		t.Fatalf("Version = %+v", v)
	}
	if err := c.Authenticate(context.Background()); err != nil {
		t.Fatalf("Authenticate with token: %v", err)
	}

	wrong := strings.Repeat("00", 32)
	c = clientFor(t, ts, Config{TLSFingerprint: wrong})
	_, err = c.Version(context.Background())
	var te *TLSError
	if !errors.As(err, &te) {
		t.Fatalf("wrong pin: err = %T %v, want *TLSError", err, err)
	}
	if te.Fingerprint != certFingerprintPVE(ts) {
		t.Errorf("Fingerprint = %q, want %q", te.Fingerprint, certFingerprintPVE(ts))
	}
	if !strings.Contains(te.Error(), certFingerprintPVE(ts)) || !strings.Contains(te.Error(), FormatFingerprint(make([]byte, 32))) {
		t.Errorf("message should name pinned and presented fingerprints: %s", te.Error())
	}
}

func TestTLSUntrustedReportsFingerprint(t *testing.T) {
	var hits atomic.Int32
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	c, err := NewClient(Config{Endpoint: ts.URL, APIToken: testToken, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Authenticate(context.Background())
	var te *TLSError
	if !errors.As(err, &te) {
		t.Fatalf("err = %T %v, want *TLSError", err, err)
	}
	fp := certFingerprintPVE(ts)
	if te.Fingerprint != fp || te.Endpoint != ts.URL {
		t.Errorf("TLSError = %+v, want fingerprint %s endpoint %s", te, fp, ts.URL)
	}
	msg := te.Error()
	for _, want := range []string{"not trusted", `tls_fingerprint = "` + fp + `"`, "ca_cert", "/etc/pve/pve-root-ca.pem"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(strings.ToLower(msg), "insecure") {
		t.Errorf("message should not suggest insecure: %q", msg)
	}
	if hits.Load() != 0 {
		t.Errorf("request reached the server through an untrusted connection")
	}
}

func TestTLSCACertAndInsecure(t *testing.T) {
	ts := newTLSServer(t, versionHandler(t))
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	c := clientFor(t, ts, Config{CACertPEM: caPEM})
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatalf("CA-trusted Version: %v", err)
	}
	c = clientFor(t, ts, Config{Insecure: true})
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatalf("insecure Version: %v", err)
	}
}

func TestConnectErrorNamesEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logged atomic.Int32
	c, err := NewClient(Config{Endpoint: "https://" + addr, APIToken: testToken, Retry: RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		Logger: func(string, ...any) { logged.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Post(context.Background(), "/nodes/n1/network", Params{"iface": "x"}, nil)
	var ce *ConnectError
	if !errors.As(err, &ce) || !ce.Dial {
		t.Fatalf("err = %T %v, want dial *ConnectError", err, err)
	}
	if !strings.Contains(err.Error(), "https://"+addr) {
		t.Errorf("error %q does not name the endpoint", err)
	}
	// A refused connection never sent the request, so even a POST retries.
	if logged.Load() != 2 {
		t.Errorf("retries logged = %d, want 2", logged.Load())
	}
}

func TestTicketAuth(t *testing.T) {
	const ticket = "PVE:root@pam:6789ABCD::c2lnbmF0dXJl+/="
	var logins, posts, gets atomic.Int32
	var expired atomic.Bool
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api2/json/access/ticket" {
			if err := r.ParseForm(); err != nil {
				t.Error(err)
			}
			if r.PostForm.Get("username") != "root@pam" || r.PostForm.Get("password") != "s3cret" {
				rawResponse(t, w, 401, "authentication failure", "")
				return
			}
			if r.Header.Get("CSRFPreventionToken") != "" || r.Header.Get("Authorization") != "" {
				t.Error("login request must not carry auth headers")
			}
			n := logins.Add(1)
			expired.Store(false)
			writeJSON(w, 200, `{"data":{"username":"root@pam","ticket":"`+ticket+`","CSRFPreventionToken":"CSRF`+string('0'+n)+`","cap":{}}}`)
			return
		}
		ck, err := r.Cookie("PVEAuthCookie")
		if err != nil || ck.Value != ticket || expired.Load() {
			rawResponse(t, w, 401, "No ticket", "")
			return
		}
		csrf := r.Header.Get("CSRFPreventionToken")
		switch r.Method {
		case http.MethodGet:
			gets.Add(1)
			if csrf != "" {
				t.Errorf("GET carries CSRF header %q", csrf)
			}
		default:
			posts.Add(1)
			if want := "CSRF" + string('0'+logins.Load()); csrf != want {
				t.Errorf("%s CSRF = %q, want %q", r.Method, csrf, want)
			}
		}
		writeJSON(w, 200, `{"data":null}`)
	}))
	c := clientFor(t, ts, Config{Username: "root@pam", Password: "s3cret"})
	ctx := context.Background()
	if err := c.Authenticate(ctx); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if !c.IsRootTicket() || c.AuthUser() != "root@pam" {
		t.Errorf("IsRootTicket = %v AuthUser = %q", c.IsRootTicket(), c.AuthUser())
	}
	if err := c.Get(ctx, "/nodes", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Post(ctx, "/nodes/n1/network", Params{"iface": "vmbr9"}, nil); err != nil {
		t.Fatal(err)
	}
	// Ticket expiry: one 401, then a transparent re-login.
	expired.Store(true)
	if err := c.Put(ctx, "/nodes/n1/network/vmbr9", Params{"type": "bridge"}, nil); err != nil {
		t.Fatalf("PUT after expiry: %v", err)
	}
	if logins.Load() != 2 || posts.Load() != 2 || gets.Load() != 1 {
		t.Errorf("logins=%d posts=%d gets=%d, want 2/2/1", logins.Load(), posts.Load(), gets.Load())
	}

	bad := clientFor(t, ts, Config{Username: "root@pam", Password: "wrongpassword"})
	err := bad.Authenticate(ctx)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Fatalf("bad login err = %v", err)
	}
	if !strings.Contains(err.Error(), `"root@pam"`) || !strings.Contains(err.Error(), "authentication failure") || strings.Contains(err.Error(), "wrongpassword") {
		t.Errorf("bad login message = %q", err)
	}
}

func TestParamsPlacement(t *testing.T) {
	type seen struct{ method, query, body, ctype string }
	var mu sync.Mutex
	var got []seen
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.RawQuery, string(b), r.Header.Get("Content-Type")})
		mu.Unlock()
		writeJSON(w, 200, `{"data":{"ok":1}}`)
	}))
	c := clientFor(t, ts, Config{})
	p := Params{}
	p.SetBool("cleanup", true)
	p.SetBool("force", false)
	p.Set("name", "a b")
	ctx := context.Background()
	var out struct{ OK int }
	for _, f := range []func(context.Context, string, Params, any) error{c.Get, c.Delete, c.Post, c.Put} {
		if err := f(ctx, "/x", p, &out); err != nil {
			t.Fatal(err)
		}
		if out.OK != 1 {
			t.Fatal("data not decoded into out")
		}
	}
	const enc = "cleanup=1&force=0&name=a+b"
	want := []seen{
		{"GET", enc, "", ""},
		{"DELETE", enc, "", ""},
		{"POST", "", enc, "application/x-www-form-urlencoded"},
		{"PUT", "", enc, "application/x-www-form-urlencoded"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestGetRawExtras(t *testing.T) {
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"data":[{"n":1,"t":"x"}],"total":7}`)
	}))
	c := clientFor(t, ts, Config{})
	data, extras, err := c.GetRaw(context.Background(), "/nodes/n1/tasks", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `[{"n":1,"t":"x"}]` || string(extras["total"]) != "7" {
		t.Fatalf("data=%s extras=%v", data, extras)
	}
}

// TestMaxParallelPerNode proves the per-node cap with barriers: the server
// holds requests until released, and the client reports each request that
// has to queue. With a cap of 2 and 6 requests to one node, exactly 2 must
// reach the server and 4 must queue; a request to another bucket must not be
// blocked meanwhile.
func TestMaxParallelPerNode(t *testing.T) {
	const limit, total = 2, 6
	var inflight, maxInflight atomic.Int32
	arrived := make(chan struct{}, total)
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseAll() // on failure too, or the server cannot shut down
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api2/json/version" || strings.HasPrefix(r.URL.Path, "/api2/json/nodes/n2/") {
			writeJSON(w, 200, `{"data":{}}`)
			return
		}
		n := inflight.Add(1)
		for {
			m := maxInflight.Load()
			if n <= m || maxInflight.CompareAndSwap(m, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		inflight.Add(-1)
		writeJSON(w, 200, `{"data":null}`)
	}))
	c := clientFor(t, ts, Config{MaxParallelPerNode: limit})
	queued := make(chan string, total)
	c.onQueue = func(b string) { queued <- b }

	ctx := context.Background()
	errs := make(chan error, total)
	for i := 0; i < total; i++ {
		go func() { errs <- c.Get(ctx, "/nodes/n1/qemu", nil, nil) }()
	}
	timeout := time.After(10 * time.Second)
	var nArrived, nQueued int
	for nArrived < limit || nQueued < total-limit {
		select {
		case <-arrived:
			nArrived++
		case b := <-queued:
			if b != "node/n1" {
				t.Errorf("queued in bucket %q", b)
			}
			nQueued++
		case <-timeout:
			t.Fatalf("timed out: %d arrived, %d queued", nArrived, nQueued)
		}
	}
	if got := inflight.Load(); got != limit {
		t.Fatalf("in flight = %d, want %d", got, limit)
	}
	// Other buckets are independent of the saturated node.
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, "/nodes/n2/qemu", nil, nil); err != nil {
		t.Fatal(err)
	}
	releaseAll()
	for i := 0; i < total; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if m := maxInflight.Load(); m != limit {
		t.Errorf("max in flight = %d, want %d", m, limit)
	}
}

func TestBucketFor(t *testing.T) {
	for in, want := range map[string]string{
		"/nodes/pve1/network": "node/pve1", "/nodes/pve1": "node/pve1", "/nodes": "cluster",
		"/cluster/options": "cluster", "/version": "cluster",
	} {
		if got := bucketFor(in); got != want {
			t.Errorf("bucketFor(%q) = %q, want %q", in, got, want)
		}
	}
}
