package pve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config configures a Client. Only Endpoint and credentials are required.
type Config struct {
	// Endpoint is the base URL, e.g. "https://pve1:8006". A trailing "/" or
	// "/api2/json" is accepted and removed.
	Endpoint string
	// APIToken is "USER@REALM!TOKENID=SECRET". Exclusive with Username/Password.
	APIToken string
	// Username ("root@pam") and Password select ticket authentication, which
	// some root@pam-only calls (Ceph OSD create, cluster join) require.
	Username, Password string
	// Insecure disables certificate checks entirely (last resort; prefer
	// TLSFingerprint or CACertPEM).
	Insecure bool
	// CACertPEM adds trusted CA certificates (e.g. /etc/pve/pve-root-ca.pem).
	// The chain and host name are verified against the system pool plus these.
	CACertPEM string
	// TLSFingerprint pins the SHA-256 of the server's leaf certificate (hex,
	// colons optional, any case). When set only the pin is checked, not the
	// chain, so PVE's self-signed certificates work without Insecure.
	TLSFingerprint string
	// RequestTimeout bounds each HTTP request (default 60s).
	RequestTimeout time.Duration
	// MaxParallelPerNode caps in-flight requests per node, i.e. per
	// /nodes/{node}/... path (default 4). PVE's pveproxy has few workers and
	// node-local locks; flooding one node mostly produces lock timeouts.
	// Other paths share one "cluster" bucket with the same cap.
	MaxParallelPerNode int
	// Retry is the retry policy; the zero value means DefaultRetryPolicy.
	Retry RetryPolicy
	// TaskPollInterval is the shortest wait between a task's status reads
	// while tasks of its type have not been timed yet, and the wait before
	// the first (default 200ms). See TaskTimes.
	TaskPollInterval time.Duration
	// TaskTimes records how long tasks of each type took, so that a task
	// is read when one of its type is due to end (about one status read
	// per task). Share one between all clients of a provider; nil gives
	// the client a record of its own.
	TaskTimes *TaskTimes
	// UserAgent is sent with every request.
	UserAgent string
	// Logger, if set, receives retry and task-progress messages with
	// key/value pairs, so the provider can route them to tflog.
	Logger func(msg string, kv ...any)
	// ReadOnly refuses every request but GET (and the login) before it is
	// sent, with ErrReadOnly: what reads a cluster (the adoption command)
	// then cannot change it, whatever its code calls.
	ReadOnly bool
	// AfterWrite, if set, is called after every request but GET and the
	// login, whatever its outcome (a lost answer may still have changed
	// something), so that caches of reads drop what it may have changed.
	AfterWrite func(method, path string)
}

const (
	defaultRequestTimeout = 60 * time.Second
	defaultMaxParallel    = 4
	maxResponseBytes      = 64 << 20
	apiPrefix             = "/api2/json"
)

// Client talks to one PVE endpoint. It is safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string // normalised, without /api2/json
	apiBase  string // endpoint + /api2/json
	host     string // host name used to verify the certificate

	tokenID, tokenSecret string

	pin   []byte
	roots *x509.CertPool

	http        *http.Client
	retry       RetryPolicy
	pace        taskPace
	taskTimes   *TaskTimes
	maxParallel int

	semMu sync.Mutex
	sems  map[string]chan struct{}
	// onQueue is a test hook called when a request has to wait for a slot.
	onQueue func(bucket string)

	loginMu    sync.Mutex // serialises logins
	authMu     sync.Mutex // guards the fields below
	ticket     string
	csrf       string
	ticketUser string
	ticketGen  uint64
}

var (
	tokenUserRe = regexp.MustCompile(`^[^\s:/@]+@[A-Za-z][A-Za-z0-9._-]*$`)
	tokenNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)
)

// ParseAPIToken splits "USER@REALM!TOKENID=SECRET" into the token id
// ("USER@REALM!TOKENID") and the secret. Like PVE it splits at the last '='.
// Error messages never contain the secret.
func ParseAPIToken(s string) (tokenID, secret string, err error) {
	s = strings.TrimSpace(s)
	bad := func() (string, string, error) {
		return "", "", fmt.Errorf("API token must look like USER@REALM!TOKENID=SECRET (for example root@pam!terraform=2f1c...); got %q", redactToken(s))
	}
	i := strings.LastIndexByte(s, '=')
	if i < 0 {
		return bad()
	}
	tokenID, secret = s[:i], s[i+1:]
	if secret == "" {
		return bad()
	}
	user, name, ok := strings.Cut(tokenID, "!")
	if !ok || !tokenUserRe.MatchString(user) || !tokenNameRe.MatchString(name) {
		return bad()
	}
	return tokenID, secret, nil
}

// redactToken shows only the leading part that looks like a token id
// (USER@REALM!TOKENID) and hides the rest, which may be or contain the
// secret however the user mistyped the separator.
func redactToken(s string) string {
	id := tokenIDPrefixRe.FindString(s)
	rest := s[len(id):]
	switch {
	case rest == "" || rest == "=":
		return s
	case strings.HasPrefix(rest, "="):
		return id + "=<redacted>"
	default:
		return id + "<redacted>"
	}
}

var tokenIDPrefixRe = regexp.MustCompile(`^[^\s:/@=!]+@[A-Za-z][A-Za-z0-9._-]*(![A-Za-z][A-Za-z0-9_-]*)?`)

// NewClient validates cfg and builds a Client. It does no network I/O; call
// Authenticate to check the endpoint and credentials.
func NewClient(cfg Config) (*Client, error) {
	c := &Client{cfg: cfg, sems: map[string]chan struct{}{}}

	ep := strings.TrimSpace(cfg.Endpoint)
	if ep == "" {
		return nil, errors.New("endpoint is required: an https:// URL such as https://pve1:8006")
	}
	u, err := url.Parse(ep)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("endpoint must be an https:// URL such as https://pve1:8006; got %q", ep)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("endpoint must be an https:// URL such as https://pve1:8006 without user info, query or fragment; got %q", ep)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, apiPrefix)
	p = strings.TrimRight(p, "/")
	c.endpoint = "https://" + u.Host + p
	c.apiBase = c.endpoint + apiPrefix
	c.host = u.Hostname()

	switch {
	case cfg.APIToken != "" && (cfg.Username != "" || cfg.Password != ""):
		return nil, errors.New("set either api_token or username/password, not both")
	case cfg.APIToken != "":
		c.tokenID, c.tokenSecret, err = ParseAPIToken(cfg.APIToken)
		if err != nil {
			return nil, err
		}
	case cfg.Username != "" && cfg.Password != "":
		if !strings.Contains(cfg.Username, "@") {
			return nil, fmt.Errorf("username must include the realm, e.g. root@pam; got %q", cfg.Username)
		}
	case cfg.Username != "" || cfg.Password != "":
		return nil, errors.New("username and password must both be set for ticket authentication")
	default:
		return nil, errors.New("no credentials: set api_token (USER@REALM!TOKENID=SECRET) or username and password")
	}

	if cfg.TLSFingerprint != "" {
		c.pin, err = parseFingerprint(cfg.TLSFingerprint)
		if err != nil {
			return nil, err
		}
	}
	if cfg.CACertPEM != "" {
		pool, perr := x509.SystemCertPool()
		if perr != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(cfg.CACertPEM)) {
			return nil, errors.New("ca_cert contains no valid PEM certificate (expected the content of /etc/pve/pve-root-ca.pem, starting with -----BEGIN CERTIFICATE-----)")
		}
		c.roots = pool
	}

	c.retry = cfg.Retry.normalized()
	c.pace = taskPace{min: cfg.TaskPollInterval, max: maxTaskPollInterval}
	if c.pace.min <= 0 {
		c.pace.min = defaultTaskPollInterval
	}
	c.pace.max = max(c.pace.max, c.pace.min)
	c.taskTimes = cfg.TaskTimes
	if c.taskTimes == nil {
		c.taskTimes = NewTaskTimes()
	}
	c.maxParallel = cfg.MaxParallelPerNode
	if c.maxParallel <= 0 {
		c.maxParallel = defaultMaxParallel
	}
	if c.cfg.RequestTimeout <= 0 {
		c.cfg.RequestTimeout = defaultRequestTimeout
	}
	if c.cfg.UserAgent == "" {
		c.cfg.UserAgent = "terraform-provider-pve"
	}

	// We always verify ourselves in VerifyConnection (hence
	// InsecureSkipVerify): that way the presented leaf is at hand and a
	// rejection can report its fingerprint, and pinning can skip the chain.
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // verified in VerifyConnection
	if c.pin != nil || !cfg.Insecure {
		tlsCfg.VerifyConnection = c.verifyConnection
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   15 * time.Second,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	c.http = &http.Client{Transport: tr}
	return c, nil
}

func parseFingerprint(s string) ([]byte, error) {
	h := strings.NewReplacer(":", "", " ", "", "-", "").Replace(strings.TrimSpace(s))
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("tls_fingerprint must be the SHA-256 fingerprint of the node certificate: 32 bytes in hex, colons optional (e.g. AB:CD:...); got %q", s)
	}
	return b, nil
}

// FormatFingerprint formats a certificate digest like PVE shows it:
// upper-case hex pairs separated by colons.
func FormatFingerprint(sum []byte) string {
	var b strings.Builder
	for i, x := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", x)
	}
	return b.String()
}

func (c *Client) verifyConnection(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return &TLSError{Endpoint: c.endpoint, Err: errors.New("server presented no certificate")}
	}
	leaf := cs.PeerCertificates[0]
	sum := sha256.Sum256(leaf.Raw)
	fp := FormatFingerprint(sum[:])
	if c.pin != nil {
		if subtle.ConstantTimeCompare(sum[:], c.pin) == 1 {
			return nil
		}
		return &TLSError{Endpoint: c.endpoint, Fingerprint: fp, Pinned: FormatFingerprint(c.pin), Err: errors.New("certificate fingerprint does not match the pin")}
	}
	inter := x509.NewCertPool()
	for _, ic := range cs.PeerCertificates[1:] {
		inter.AddCert(ic)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.roots, Intermediates: inter, DNSName: c.host}); err != nil {
		return &TLSError{Endpoint: c.endpoint, Fingerprint: fp, Err: err}
	}
	return nil
}

// Endpoint returns the normalised endpoint, e.g. "https://pve1:8006".
func (c *Client) Endpoint() string { return c.endpoint }

// CloseIdleConnections closes kept-alive connections, so that the next
// request proves the endpoint answers on a new one (after a network
// reload an old connection may be dead without knowing it).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// AuthUser returns the identity in use: the token id ("root@pam!terraform")
// or the ticket user ("root@pam").
func (c *Client) AuthUser() string {
	if c.tokenID != "" {
		return c.tokenID
	}
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.ticketUser != "" {
		return c.ticketUser
	}
	return c.cfg.Username
}

// IsRootTicket reports whether the client uses a ticket for root@pam, which
// the root-only API calls require (API tokens never qualify).
func (c *Client) IsRootTicket() bool {
	return c.tokenID == "" && c.AuthUser() == "root@pam"
}

// Authenticate checks the endpoint and credentials: with a password it logs
// in (POST /access/ticket); with a token it reads GET /version.
func (c *Client) Authenticate(ctx context.Context) error {
	if c.tokenID != "" {
		_, err := c.Version(ctx)
		return err
	}
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	return c.login(ctx)
}

// login obtains a ticket. Callers hold loginMu.
//
//pve:operation POST /access/ticket
func (c *Client) login(ctx context.Context) error {
	p := Params{}
	p.Set("username", c.cfg.Username)
	p.Set("password", c.cfg.Password)
	res, err := c.do(ctx, http.MethodPost, "/access/ticket", p, nil, true)
	if err != nil {
		return err
	}
	var t struct {
		Username string `json:"username"`
		Ticket   string `json:"ticket"`
		CSRF     string `json:"CSRFPreventionToken"`
	}
	if err := json.Unmarshal(res.data, &t); err != nil || t.Ticket == "" {
		return fmt.Errorf("PVE API POST /access/ticket: login answer has no ticket (is %s a PVE endpoint?)", c.endpoint)
	}
	if t.Username == "" {
		t.Username = c.cfg.Username
	}
	c.authMu.Lock()
	c.ticket, c.csrf, c.ticketUser = t.Ticket, t.CSRF, t.Username
	c.ticketGen++
	c.authMu.Unlock()
	return nil
}

// ensureTicket logs in unless another goroutine already replaced the ticket
// of generation stale.
func (c *Client) ensureTicket(ctx context.Context, stale uint64, force bool) error {
	if !force {
		c.authMu.Lock()
		have := c.ticket != ""
		c.authMu.Unlock()
		if have {
			return nil
		}
	}
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	c.authMu.Lock()
	have, gen := c.ticket != "", c.ticketGen
	c.authMu.Unlock()
	if have && (!force || gen != stale) {
		return nil
	}
	return c.login(ctx)
}

// ForgetTicket drops the client's ticket, so that its next request logs in
// anew instead of presenting a ticket known to be stale (a node that
// joined a cluster verifies tickets with the cluster's key). No-op for
// API tokens.
func (c *Client) ForgetTicket() {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	c.ticket, c.csrf = "", ""
}

// ReadOnly reports whether the client refuses writes (Config.ReadOnly).
func (c *Client) ReadOnly() bool { return c.cfg.ReadOnly }

// Get sends a GET with params in the query string and decodes "data" into out
// (which may be nil).
func (c *Client) Get(ctx context.Context, path string, params Params, out any) error {
	return c.call(ctx, http.MethodGet, path, params, out)
}

// Post sends a POST with params as a form body.
func (c *Client) Post(ctx context.Context, path string, params Params, out any) error {
	return c.call(ctx, http.MethodPost, path, params, out)
}

// Put sends a PUT with params as a form body.
func (c *Client) Put(ctx context.Context, path string, params Params, out any) error {
	return c.call(ctx, http.MethodPut, path, params, out)
}

// Delete sends a DELETE with params in the query string (PVE rejects a body
// on DELETE with 501).
func (c *Client) Delete(ctx context.Context, path string, params Params, out any) error {
	return c.call(ctx, http.MethodDelete, path, params, out)
}

// GetRaw sends a GET and returns the raw "data" plus the other top-level keys
// of the envelope (e.g. "total", "changes").
func (c *Client) GetRaw(ctx context.Context, path string, params Params) (data json.RawMessage, extras map[string]json.RawMessage, err error) {
	res, err := c.do(ctx, http.MethodGet, path, params, nil, false)
	if err != nil {
		return nil, nil, err
	}
	return res.data, res.extras, nil
}

func (c *Client) call(ctx context.Context, method, path string, params Params, out any) error {
	res, err := c.do(ctx, method, path, params, nil, false)
	if err != nil {
		return err
	}
	return res.decode(method, path, out)
}

type response struct {
	data   json.RawMessage
	extras map[string]json.RawMessage
}

func (r *response) decode(method, path string, out any) error {
	if out == nil || len(r.data) == 0 || string(r.data) == "null" {
		return nil
	}
	if err := json.Unmarshal(r.data, out); err != nil {
		return fmt.Errorf("PVE API %s %s: cannot decode answer: %w", method, path, err)
	}
	return nil
}

// do runs a request with retries and, for ticket auth, one re-login on 401.
func (c *Client) do(ctx context.Context, method, path string, params Params, up *upload, noAuth bool) (*response, error) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if c.cfg.ReadOnly && method != http.MethodGet && !noAuth {
		return nil, fmt.Errorf("%w: %s %s", ErrReadOnly, method, path)
	}
	if c.cfg.AfterWrite != nil && method != http.MethodGet && !noAuth {
		defer c.cfg.AfterWrite(method, path)
	}
	if !noAuth && c.tokenID == "" {
		if err := c.ensureTicket(ctx, 0, false); err != nil {
			return nil, err
		}
	}
	relogged := false
	for attempt := 0; ; attempt++ {
		res, gen, err := c.doOnce(ctx, method, path, params, up, noAuth)
		if err == nil {
			return res, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			// Cancelled after the attempt failed: no retry, and callers
			// can tell cancellation from PVE's answer.
			if errors.Is(err, cerr) {
				return nil, err
			}
			return nil, fmt.Errorf("%w (gave up retrying: %w)", err, cerr)
		}
		var apiErr *APIError
		if !noAuth && c.tokenID == "" && !relogged && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnauthorized {
			// Tickets expire after 2h; log in again once and repeat.
			relogged = true
			c.log("PVE ticket rejected, logging in again", "method", method, "path", path)
			if lerr := c.ensureTicket(ctx, gen, true); lerr != nil {
				return nil, lerr
			}
			attempt--
			continue
		}
		// An Idempotent write whose answer was lost is sent again as a read is.
		resend := c.retry.Retryable(retryMethod(method, path), err) || isIdempotent(ctx) && LostAnswer(err)
		if attempt+1 >= c.retry.MaxAttempts || !resend {
			return nil, err
		}
		d := c.retry.Backoff(attempt)
		c.log("retrying PVE API request", "method", method, "path", path, "attempt", attempt+2, "delay", d.String(), "error", err.Error())
		if serr := sleepCtx(ctx, d); serr != nil {
			return nil, fmt.Errorf("%w (gave up retrying: %w)", err, serr)
		}
	}
}

// retryMethod is the method whose retry rules apply to a request: a
// login (POST /access/ticket) changes nothing on PVE but the ticket it
// hands out, so a failed or lost one is retried as a read (4xx, a wrong
// password included, still is not).
func retryMethod(method, path string) string {
	if method == http.MethodPost && path == "/access/ticket" {
		return http.MethodGet
	}
	return method
}

func (c *Client) doOnce(ctx context.Context, method, path string, params Params, up *upload, noAuth bool) (*response, uint64, error) {
	release, err := c.acquire(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	defer release()

	// An upload takes as long as its bytes take: only ctx bounds it.
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	if up != nil {
		cancel()
		rctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	u := c.apiBase + path
	var body io.Reader
	enc := params.Encode()
	form := method == http.MethodPost || method == http.MethodPut
	var multipartType string
	var length int64
	switch {
	case up != nil:
		rc, ctype, n, err := up.body()
		if err != nil {
			return nil, 0, fmt.Errorf("PVE API %s %s: %w", method, path, err)
		}
		defer rc.Close()
		body, multipartType, length = rc, ctype, n
	case form:
		body = strings.NewReader(enc)
	case enc != "":
		u += "?" + enc
	}
	req, err := http.NewRequestWithContext(rctx, method, u, body)
	if err != nil {
		return nil, 0, fmt.Errorf("PVE API %s %s: %w", method, path, err)
	}
	switch {
	case up != nil:
		// PVE refuses an upload without Content-Length (no chunking).
		req.ContentLength = length
		req.Header.Set("Content-Type", multipartType)
	case form:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	var gen uint64
	if !noAuth {
		if c.tokenID != "" {
			req.Header.Set("Authorization", "PVEAPIToken="+c.tokenID+"="+c.tokenSecret)
		} else {
			c.authMu.Lock()
			ticket, csrf := c.ticket, c.csrf
			gen = c.ticketGen
			c.authMu.Unlock()
			req.AddCookie(&http.Cookie{Name: "PVEAuthCookie", Value: ticket})
			if method != http.MethodGet && method != http.MethodHead {
				req.Header.Set("CSRFPreventionToken", csrf)
			}
		}
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, gen, c.transportError(ctx, rctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, gen, c.transportError(ctx, rctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := parseAPIError(method, path, resp, raw)
		if e.StatusCode == http.StatusUnauthorized {
			e.AuthID = c.AuthUser()
		}
		return nil, gen, e
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, gen, fmt.Errorf("PVE API %s %s: answer is not a JSON object (is %s a PVE API endpoint?): %w", method, path, c.endpoint, err)
	}
	res := &response{data: env["data"]}
	delete(env, "data")
	res.extras = env
	return res, gen, nil
}

func (c *Client) transportError(ctx, rctx context.Context, err error) error {
	var tlsErr *TLSError
	if errors.As(err, &tlsErr) {
		return tlsErr
	}
	if ctx.Err() != nil {
		return fmt.Errorf("PVE API request to %s: %w", c.endpoint, ctx.Err())
	}
	if rctx.Err() != nil {
		err = fmt.Errorf("no answer within %s: %w", c.cfg.RequestTimeout, err)
	}
	return &ConnectError{Endpoint: c.endpoint, Dial: isDialError(err), Err: err}
}

func parseAPIError(method, path string, resp *http.Response, raw []byte) *APIError {
	e := &APIError{Method: method, Path: path, StatusCode: resp.StatusCode}
	var body struct {
		Message string                     `json:"message"`
		Errors  map[string]json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(raw, &body) == nil {
		e.Message = strings.TrimRight(body.Message, "\n")
		for k, v := range body.Errors {
			if e.Errors == nil {
				e.Errors = map[string]string{}
			}
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			e.Errors[k] = strings.TrimRight(s, "\n")
		}
	}
	if e.Message == "" {
		// Before pve-http-server 5.2.0 the message only travelled in the
		// status line's reason phrase.
		e.Message = strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	}
	return e
}

// bucketFor returns the concurrency bucket of a path: the node for
// /nodes/{node}/..., else "cluster".
func bucketFor(path string) string {
	if rest, ok := strings.CutPrefix(path, "/nodes/"); ok {
		node, _, _ := strings.Cut(rest, "/")
		if node != "" {
			return "node/" + node
		}
	}
	return "cluster"
}

func (c *Client) acquire(ctx context.Context, path string) (func(), error) {
	b := bucketFor(path)
	c.semMu.Lock()
	sem, ok := c.sems[b]
	if !ok {
		sem = make(chan struct{}, c.maxParallel)
		c.sems[b] = sem
	}
	c.semMu.Unlock()
	select {
	case sem <- struct{}{}:
	default:
		if c.onQueue != nil {
			c.onQueue(b)
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free request slot for %s: %w", b, ctx.Err())
		}
	}
	return func() { <-sem }, nil
}

func (c *Client) log(msg string, kv ...any) {
	if c.cfg.Logger != nil {
		c.cfg.Logger(msg, kv...)
	}
}
