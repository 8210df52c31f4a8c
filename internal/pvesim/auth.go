package pvesim

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const ticketLifetime = 2 * time.Hour

// authKind says which credential a request carried, for the request log.
func authKind(r *http.Request) string {
	if ticketFrom(r) != "" {
		return "ticket"
	}
	if tokenFrom(r) != "" {
		return "token"
	}
	return "none"
}

var (
	cookieAuthRE = regexp.MustCompile(`(?:^|\s)PVEAuthCookie(?:=| )([^;]*)`)
	tokenAuthRE  = regexp.MustCompile(`(?:^|\s)PVEAPIToken(?:=| )([^;]*)`)
)

// ticketFrom extracts the ticket from the cookie or, like
// Formatter::extract_auth_value, from the Authorization header.
func ticketFrom(r *http.Request) string {
	if c, err := r.Cookie("PVEAuthCookie"); err == nil && c.Value != "" {
		v, err := url.PathUnescape(c.Value)
		if err != nil {
			return c.Value
		}
		return v
	}
	if m := cookieAuthRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		v, _ := url.PathUnescape(m[1])
		return v
	}
	return ""
}

func tokenFrom(r *http.Request) string {
	if m := tokenAuthRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		v, err := url.PathUnescape(m[1])
		if err != nil {
			return m[1]
		}
		return v
	}
	return ""
}

// domainFor returns the trust domain serving a listener.
func (s *Sim) domainFor(listener string) *authDomain {
	return s.st.Domains[s.st.Nodes[listener].Domain]
}

// authenticate implements PVE::HTTPServer::auth_handler. It returns the
// user id ("root@pam" or "root@pam!terraform").
func (s *Sim) authenticate(r *http.Request, rel, listener string) (string, *apiError) {
	if (rel == "/access/domains" && r.Method == http.MethodGet) ||
		(rel == "/access/ticket" && (r.Method == http.MethodGet || r.Method == http.MethodPost)) {
		return "", nil
	}
	s.mu.Lock()
	d := s.domainFor(listener)
	s.mu.Unlock()

	// A ticket takes precedence over a token, as in pve-http-server.
	if t := ticketFrom(r); t != "" {
		user, ok := verifyTicket(d, t, time.Now())
		if !ok {
			return "", errf(http.StatusUnauthorized, "authentication failure")
		}
		if r.Method != http.MethodGet && !verifyCSRF(d, user, r.Header.Get("CSRFPreventionToken"), time.Now()) {
			return "", errf(http.StatusUnauthorized, "Permission denied - invalid csrf token")
		}
		return user, nil
	}
	if tok := tokenFrom(r); tok != "" {
		i := strings.LastIndex(tok, "=")
		if i < 0 {
			return "", errf(http.StatusUnauthorized, "authentication failure")
		}
		id, secret := tok[:i], tok[i+1:]
		if id != tokenID || subtle.ConstantTimeCompare([]byte(secret), []byte(d.TokenSecret)) != 1 {
			return "", errf(http.StatusUnauthorized, "authentication failure")
		}
		return tokenID, nil
	}
	return "", errf(http.StatusUnauthorized, "No ticket")
}

func sign(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// makeTicket builds PVE:<user>:<HEX time>::<base64 signature>. PVE signs
// with RSA; an HMAC keeps the shape.
func makeTicket(d *authDomain, user string, now time.Time) string {
	data := fmt.Sprintf("PVE:%s:%08X", user, now.Unix())
	return data + "::" + base64.StdEncoding.EncodeToString(sign(d.TicketKey, data))
}

func verifyTicket(d *authDomain, ticket string, now time.Time) (string, bool) {
	data, sig, ok := strings.Cut(ticket, "::")
	if !ok {
		return "", false
	}
	want := base64.StdEncoding.EncodeToString(sign(d.TicketKey, data))
	if subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
		return "", false
	}
	parts := strings.Split(data, ":")
	if len(parts) != 3 || parts[0] != "PVE" {
		return "", false
	}
	ts, err := strconv.ParseInt(parts[2], 16, 64)
	if err != nil {
		return "", false
	}
	age := now.Unix() - ts
	// PVE accepts tickets from 5 minutes in the future up to the lifetime.
	if age < -300 || age > int64(ticketLifetime/time.Second) {
		return "", false
	}
	return parts[1], true
}

func makeCSRF(d *authDomain, user string, now time.Time) string {
	ts := fmt.Sprintf("%08X", now.Unix())
	return ts + ":" + base64.RawStdEncoding.EncodeToString(sign(d.TicketKey, ts+":"+user))
}

func verifyCSRF(d *authDomain, user, tok string, now time.Time) bool {
	ts, sig, ok := strings.Cut(tok, ":")
	if !ok {
		return false
	}
	want := base64.RawStdEncoding.EncodeToString(sign(d.TicketKey, ts+":"+user))
	if subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
		return false
	}
	t, err := strconv.ParseInt(ts, 16, 64)
	if err != nil {
		return false
	}
	age := now.Unix() - t
	return age >= -300 && age <= int64(ticketLifetime/time.Second)
}

func registerAuth(t *routeTable) {
	t.add("GET", "/access", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return subdirs("ticket", "domains", "users", "groups", "roles", "acl", "password"), nil
	}})
	t.add("GET", "/access/domains", &method{noAuth: true, params: schema{}, handler: func(*call) (any, *apiError) {
		return []map[string]any{
			{"realm": "pam", "type": "pam", "comment": "Linux PAM standard authentication"},
			{"realm": "pve", "type": "pve", "comment": "Proxmox VE authentication server"},
		}, nil
	}})
	t.add("GET", "/access/ticket", &method{noAuth: true, params: schema{}, handler: func(*call) (any, *apiError) {
		return nil, nil
	}})
	t.add("POST", "/access/ticket", &method{noAuth: true, params: schema{
		"username":      pStr().req().maxLen(64),
		"password":      pStr().req(),
		"realm":         withFormatFn("pve-realm", verifyRealm).maxLen(32),
		"otp":           pStr(),
		"path":          pStr().maxLen(64).needs("privs"),
		"privs":         withFormatFn("pve-priv-list", listOf(verifyPrivName(t.rel))).maxLen(64).needs("path"),
		"new-format":    pBool(),
		"tfa-challenge": pStr(),
	}, handler: createTicket})
}

func createTicket(c *call) (any, *apiError) {
	d := c.s.domainFor(c.listener)
	user := c.params["username"]
	if realm := c.params["realm"]; realm != "" && !strings.Contains(user, "@") {
		user += "@" + realm
	}
	pw := c.params["password"]
	now := time.Now()
	ok := false
	if user == "root@pam" {
		if subtle.ConstantTimeCompare([]byte(pw), []byte(d.RootPassword)) == 1 {
			ok = true
		} else if tu, valid := verifyTicket(d, pw, now); valid && tu == user {
			ok = true // ticket renewal: the old ticket as password
		}
	}
	if !ok {
		return nil, errf(http.StatusUnauthorized, "authentication failure")
	}
	res := map[string]any{
		"username":            user,
		"ticket":              makeTicket(d, user, now),
		"CSRFPreventionToken": makeCSRF(d, user, now),
		"cap":                 rootCaps(),
	}
	if cc := c.s.clusterOf(c.listener); cc != nil {
		res["clustername"] = cc.Name
	}
	return res, nil
}

func rootCaps() map[string]any {
	set := func(privs ...string) map[string]int {
		m := map[string]int{}
		for _, p := range privs {
			m[p] = 1
		}
		return m
	}
	return map[string]any{
		"vms":     set("VM.Allocate", "VM.Audit", "VM.Backup", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Cloudinit", "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network", "VM.Config.Options", "VM.Console", "VM.Migrate", "VM.PowerMgmt", "VM.Snapshot", "VM.Snapshot.Rollback", "Permissions.Modify"),
		"storage": set("Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit", "Permissions.Modify"),
		"access":  set("Group.Allocate", "Permissions.Modify", "User.Modify"),
		"nodes":   set("Sys.Audit", "Sys.Console", "Sys.Incoming", "Sys.Modify", "Sys.PowerMgmt", "Sys.Syslog", "Permissions.Modify"),
		"dc":      set("Sys.Audit", "Sys.Modify", "SDN.Allocate", "SDN.Audit", "SDN.Use"),
		"sdn":     set("SDN.Allocate", "SDN.Audit", "SDN.Use", "Permissions.Modify"),
		"mapping": set("Mapping.Audit", "Mapping.Modify", "Mapping.Use", "Permissions.Modify"),
	}
}

func subdirs(names ...string) []map[string]string {
	out := make([]map[string]string, len(names))
	for i, n := range names {
		out[i] = map[string]string{"subdir": n}
	}
	return out
}
