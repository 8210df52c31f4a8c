package pvesim

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// apiError is a PVE exception: an HTTP code, a message and optional
// per-parameter errors.
type apiError struct {
	Status  int
	Message string
	Errors  map[string]string
}

func (e *apiError) Error() string { return e.Message }

func errf(status int, format string, args ...any) *apiError {
	return &apiError{Status: status, Message: fmt.Sprintf(format, args...)}
}

// paramErr is raise_param_exc: 400 "Parameter verification failed.".
func paramErr(errs map[string]string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: "Parameter verification failed.", Errors: errs}
}

func paramErr1(key, msg string) *apiError { return paramErr(map[string]string{key: msg}) }

// die is a plain perl die in a handler: 500 with the text.
func die(format string, args ...any) *apiError {
	return errf(http.StatusInternalServerError, format, args...)
}

type handlerFunc func(c *call) (any, *apiError)

type method struct {
	rootOnly bool // no `permissions` in the schema: root@pam only
	noAuth   bool
	params   schema
	// paramsFor, when set, is the schema a call is validated against
	// instead of params: PVE builds some schemas from what the node has
	// installed (storage plugins add types and options). params stays the
	// node without extras, which the official schema describes.
	paramsFor func(c *call) schema
	handler   handlerFunc
}

type route struct {
	pattern string
	segs    []string
	methods map[string]*method
}

// call is one request after auth and routing.
type call struct {
	s        *Sim
	listener string // node whose listener got the request
	method   string
	path     string
	params   map[string]string
	// kinds marks the params that were not plain strings in PVE
	// (server_params.go); validation refuses or skips them.
	kinds map[string]valueKind
	user  string // "root@pam" or "root@pam!terraform"
	// extra top-level keys of the envelope (total, changes)
	extra map[string]any
	// rec is the request's log record, where a task fault the call's
	// task meets is marked (faults.go); nil outside a request.
	rec *Request
	// upload is the file of a multipart upload (storage_upload.go).
	upload *pendingUpload
}

func (c *call) node() *nodeState { return c.s.st.Nodes[c.params["node"]] }

func (c *call) setExtra(k string, v any) {
	if c.extra == nil {
		c.extra = map[string]any{}
	}
	c.extra[k] = v
}

// takesRest reports whether the route's last variable takes the rest of
// the path, slashes and all.
func (rt *route) takesRest() bool { return strings.HasSuffix(rt.pattern, "/content/{volume}") }

func (rt *route) match(path string) (map[string]string, bool) {
	segs := splitPath(path)
	// Storage content is mounted with fragmentDelimiter '' (pve-storage
	// PVE/API2/Storage/Status.pm): the rest of the path is one volume id,
	// slashes and all.
	if n := len(rt.segs); len(segs) > n && rt.takesRest() {
		segs = append(segs[:n-1:n-1], strings.Join(segs[n-1:], "/"))
	}
	if len(segs) != len(rt.segs) {
		return nil, false
	}
	vars := map[string]string{}
	for i, p := range rt.segs {
		if strings.HasPrefix(p, "{") {
			if segs[i] == "" {
				return nil, false
			}
			vars[p[1:len(p)-1]] = segs[i]
		} else if p != segs[i] {
			return nil, false
		}
	}
	return vars, true
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func (s *Sim) findRoute(path string) (*route, map[string]string) {
	if s.tree != nil {
		return s.tree.find(path)
	}
	for _, rt := range s.routes {
		if vars, ok := rt.match(path); ok {
			return rt, vars
		}
	}
	return nil, nil
}

type routeTable struct {
	routes []*route
	rel    pveRelease // parameters differ between releases
}

func (t *routeTable) add(m, pattern string, md *method) {
	for _, rt := range t.routes {
		if rt.pattern == pattern {
			rt.methods[m] = md
			return
		}
	}
	t.routes = append(t.routes, &route{pattern: pattern, segs: splitPath(pattern), methods: map[string]*method{m: md}})
}

// statusWriter records the request in the log as soon as the status is
// known, before the response leaves, so a client that has its answer also
// finds it in Requests().
type statusWriter struct {
	http.ResponseWriter
	status int
	rec    *Request
	s      *Sim
}

func (w *statusWriter) logStatus(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	w.rec.Status = code
	w.s.logRequest(*w.rec)
}

func (w *statusWriter) WriteHeader(code int) {
	w.logStatus(code)
	w.ResponseWriter.WriteHeader(code)
}

// serve handles one request in PVE's order: faults, URI split, body,
// authentication, handler lookup (501), permissions (403), node proxying
// (500 hostname lookup), parameter validation (400), handler.
func (s *Sim) serve(listener string, w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rel, isAPI := strings.CutPrefix(r.URL.Path, "/api2/json")
	if isAPI && rel != "" && !strings.HasPrefix(rel, "/") {
		isAPI = false
	}
	if rel == "" {
		rel = "/"
	}
	if !isAPI {
		rel = r.URL.Path
	}
	rec := Request{Time: start, Node: listener, Method: r.Method, Path: rel, Auth: authKind(r)}
	var params map[string]string
	var kinds map[string]valueKind
	var perr *apiError
	var up *pendingUpload
	if isAPI && r.Method == http.MethodPost && uploadPathRE.MatchString(rel) && r.ContentLength != 0 {
		params, up, perr = readUpload(r, int(s.uploadSeq.Add(1)))
		kinds = map[string]valueKind{}
		for k := range params {
			kinds[k] = kindScalar
		}
	} else {
		params, kinds, perr = readParams(r)
	}
	rec.Params = redactParams(params)
	sw := &statusWriter{ResponseWriter: w, rec: &rec, s: s}

	if s.isOffline(listener) {
		panic(http.ErrAbortHandler) // a powered-off node answers nothing
	}
	if f := s.matchFault(r.Method, rel); f != nil {
		rec.Fault, rec.FaultRule = f.Kind.String(), f.Rule
		if f.Kind == FaultDropAfter {
			defer s.dropAfter(sw)() // faults.go: served, then no answer
		} else if done := s.applyFault(f, sw, r, rel); done {
			return
		}
	}
	if !isAPI {
		s.writeError(sw, errf(http.StatusNotImplemented, "no such uri"))
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		s.writeError(sw, errf(http.StatusNotImplemented, "method '%s' not available", r.Method))
		return
	}
	if perr != nil {
		s.writeError(sw, perr)
		return
	}

	user, aerr := s.authenticate(r, rel, listener)
	if aerr != nil {
		s.authDelay()
		s.writeError(sw, aerr)
		return
	}

	rt, vars := s.findRoute(rel)
	var md *method
	if rt != nil {
		md = rt.methods[r.Method]
	}
	if md == nil {
		s.writeError(sw, errf(http.StatusNotImplemented, "Method '%s %s' not implemented", r.Method, rel))
		return
	}
	// pve-manager HTTPServer: a parameter also in the URI must be equal
	// (an array or undefined value never is); keys in sorted order.
	dup := make([]string, 0, len(vars))
	for k := range vars {
		if _, ok := params[k]; ok {
			dup = append(dup, k)
		}
	}
	sort.Strings(dup)
	for _, k := range dup {
		if params[k] != vars[k] || kinds[k] != kindScalar {
			s.writeError(sw, paramErr1(k, "duplicate parameter (already defined in URI) with conflicting values!"))
			return
		}
	}
	for k, v := range vars {
		params[k] = v
	}
	if md.rootOnly && user != "root@pam" {
		s.writeError(sw, errf(http.StatusForbidden, "Permission check failed (user != root@pam)"))
		return
	}

	s.mu.Lock()
	s.fireTriggersLocked(r.Method, rel)
	c := &call{s: s, listener: listener, method: r.Method, path: rel, params: params, kinds: kinds, user: user, rec: &rec, upload: up}
	res, herr := s.dispatch(c, rt, md)
	s.mu.Unlock()
	if herr != nil {
		if herr.Status == http.StatusUnauthorized {
			s.authDelay() // outside s.mu: PVE delays every 401
		}
		s.writeError(sw, herr)
		return
	}
	s.writeData(sw, res, c.extra)
}

// requestTrigger is something a hook lets happen in the cluster just
// before the first request matching method and path at which it can
// happen is served (an HA migration the request then meets: ha_hooks.go).
type requestTrigger struct {
	method string
	path   *regexp.Regexp
	fire   func() bool // under s.mu; false: not yet (kept for the next request)
}

func (s *Sim) fireTriggersLocked(method, path string) {
	for i, t := range s.triggers {
		if t.method == method && t.path.MatchString(path) && t.fire() {
			s.triggers = append(s.triggers[:i:i], s.triggers[i+1:]...)
			return
		}
	}
}

func (s *Sim) dispatch(c *call, rt *route, md *method) (any, *apiError) {
	// proxyto node: an unknown node (or another node while standalone)
	// fails in remote_node_ip's DNS fallback.
	if len(rt.segs) >= 2 && rt.segs[0] == "nodes" && rt.segs[1] == "{node}" {
		n := c.params["node"]
		if n == "localhost" {
			n = c.listener
			c.params["node"] = n
		}
		if perr := s.proxyError(c.listener, n); perr != nil {
			return nil, perr
		}
	}
	sc := md.params
	if md.paramsFor != nil {
		sc = md.paramsFor(c)
	}
	if errs := sc.validateKinds(c.params, c.kinds); sc != nil && len(errs) > 0 {
		return nil, paramErr(errs)
	}
	// A key sent without a value is undef in PVE's $param: handlers see it
	// as not given (`comment=` on a pool update leaves the comment).
	for k, kind := range c.kinds {
		if kind == kindUndef {
			delete(c.params, k)
		}
	}
	return md.handler(c)
}

func (s *Sim) authDelay() {
	if s.opts.AuthFailureDelay <= 0 {
		return
	}
	t := time.NewTimer(s.opts.AuthFailureDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.closing:
	}
}

const maxPostBody = 512 * 1024

// readParams is pve-http-server's extract_params: the body (JSON, or
// form-encoded by decode_urlencoded) and then the query string, whose keys
// replace the body's; `_dc` is dropped. A body on GET/DELETE is a 501 as in
// pve-http-server. kinds marks the values that were not plain strings.
func readParams(r *http.Request) (map[string]string, map[string]valueKind, *apiError) {
	params := map[string]string{}
	kinds := map[string]valueKind{}
	// pve-http-server AnyEvent.pm: $limit_max_post = 512 KiB, refused
	// as 501 "for data too large".
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPostBody+1))
	if err != nil {
		return params, kinds, errf(http.StatusBadRequest, "unable to read request body")
	}
	if len(body) > maxPostBody {
		return params, kinds, errf(http.StatusNotImplemented, "for data too large")
	}
	if len(body) > 0 {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			return params, kinds, errf(http.StatusNotImplemented, "Unexpected content for method '%s'", r.Method)
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if ct == "application/json" {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				return params, kinds, errf(http.StatusBadRequest, "malformed JSON string: %v", err)
			}
			for k, v := range m {
				if v != nil {
					jsonParam(k, v, params, kinds)
				}
			}
		} else {
			decodeURLEncoded(string(body), params, kinds)
		}
	}
	decodeURLEncoded(r.URL.RawQuery, params, kinds)
	delete(params, "_dc")
	delete(kinds, "_dc")
	return params, kinds, nil
}

func (s *Sim) writeData(w http.ResponseWriter, data any, extra map[string]any) {
	env := map[string]any{"data": data}
	for k, v := range extra {
		env[k] = v
	}
	b, err := marshalResponse(env) // json.Marshal's bytes (perf_json.go)
	if err != nil {
		s.writeError(w, die("unable to encode result: %v", err))
		return
	}
	h := w.Header()
	h.Set("Server", "pve-api-daemon/3.0")
	h.Set("Content-Type", "application/json;charset=UTF-8")
	h.Set("Cache-Control", "max-age=0")
	h.Set("Pragma", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// writeError answers like pve-http-server: status code, reason phrase =
// first line of the message, JSON body {data:null,message,errors}; 401 has
// an empty body. The connection is closed, as PVE does for status >= 400.
// The reason phrase needs a hand-written status line, hence the hijack.
func (s *Sim) writeError(w http.ResponseWriter, e *apiError) {
	msg := e.Message
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	var body []byte
	if e.Status != http.StatusUnauthorized {
		env := map[string]any{"data": nil, "message": msg}
		if len(e.Errors) > 0 {
			env["errors"] = e.Errors
		}
		body, _ = json.Marshal(env)
	}
	reason := strings.SplitN(e.Message, "\n", 2)[0]
	reason = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, reason)
	if reason == "" {
		reason = http.StatusText(e.Status)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	if sw, ok := w.(*statusWriter); ok {
		sw.logStatus(e.Status)
		w = sw.ResponseWriter
	}
	if hj, ok := w.(http.Hijacker); ok {
		conn, bufrw, err := hj.Hijack()
		if err == nil {
			var sb strings.Builder
			fmt.Fprintf(&sb, "HTTP/1.1 %d %s\r\n", e.Status, reason)
			sb.WriteString("Cache-Control: max-age=0\r\nConnection: close\r\nPragma: no-cache\r\n")
			fmt.Fprintf(&sb, "Date: %s\r\nServer: pve-api-daemon/3.0\r\n", date)
			if body != nil {
				sb.WriteString("Content-Type: application/json;charset=UTF-8\r\n")
			}
			fmt.Fprintf(&sb, "Content-Length: %d\r\n\r\n", len(body))
			_, _ = bufrw.WriteString(sb.String())
			_, _ = bufrw.Write(body)
			_ = bufrw.Flush()
			_ = conn.Close()
			return
		}
	}
	h := w.Header()
	h.Set("Server", "pve-api-daemon/3.0")
	h.Set("Connection", "close")
	if body != nil {
		h.Set("Content-Type", "application/json;charset=UTF-8")
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}
