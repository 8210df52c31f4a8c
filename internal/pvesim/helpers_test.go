package pvesim

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func startSim(t *testing.T, opts Options) (*Sim, Info) {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, s.Info()
}

type client struct {
	t      *testing.T
	base   string
	hc     *http.Client
	token  string
	ticket string
	csrf   string
}

func newClient(t *testing.T, info Info, endpoint string) *client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(info.CACertPEM)) {
		t.Fatal("bad CA PEM")
	}
	if endpoint == "" {
		endpoint = info.Endpoint
	}
	return &client{t: t, base: endpoint + "/api2/json", token: info.APIToken, hc: &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}},
	}}
}

type resp struct {
	status int
	reason string
	raw    []byte
	env    map[string]any
}

func (r resp) data() any { return r.env["data"] }

func (r resp) errs() map[string]any {
	m, _ := r.env["errors"].(map[string]any)
	return m
}

func (r resp) msg() string { s, _ := r.env["message"].(string); return s }

// do sends form-encoded params (query string for GET/DELETE).
func (c *client) do(method, path string, params url.Values) resp {
	c.t.Helper()
	u := c.base + path
	var body io.Reader
	if params != nil && (method == "POST" || method == "PUT") {
		body = strings.NewReader(params.Encode())
	} else if params != nil {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.ticket != "" {
		req.AddCookie(&http.Cookie{Name: "PVEAuthCookie", Value: c.ticket})
		if c.csrf != "" {
			req.Header.Set("CSRFPreventionToken", c.csrf)
		}
	} else if c.token != "" {
		req.Header.Set("Authorization", "PVEAPIToken="+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, reason: strings.TrimSpace(strings.TrimPrefix(res.Status, res.Status[:3])), raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.env); err != nil {
			c.t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return r
}

func (c *client) ok(method, path string, params url.Values) resp {
	c.t.Helper()
	r := c.do(method, path, params)
	if r.status != 200 {
		c.t.Fatalf("%s %s: status %d %s body %s", method, path, r.status, r.reason, r.raw)
	}
	return r
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// waitTask polls the task status until stopped or the deadline.
func (c *client) waitTask(node, upid string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := c.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil)
		st := r.data().(map[string]any)
		if st["status"] == "stopped" {
			return st
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still running", upid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func findIface(list any, name string) map[string]any {
	for _, e := range list.([]any) {
		m := e.(map[string]any)
		if m["iface"] == name {
			return m
		}
	}
	return nil
}
