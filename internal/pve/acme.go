package pve

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// ACME accounts and challenge plugins, cluster-wide (/etc/pve/priv/acme).
// Every account method except the list is reserved to root@pam: PVE
// refuses API tokens there.

// ACMEAccount is a registered account.
type ACMEAccount struct {
	Name      string
	Directory string
	TOSURL    string // the terms of service agreed to at registration
	Location  string // the account URL at the CA
	Contact   []string
	Status    string // valid, deactivated, revoked
}

// ACMEAccounts lists the account names.
//
//pve:operation GET /cluster/acme/account
func (c *Client) ACMEAccounts(ctx context.Context) ([]string, error) {
	var w []struct {
		Name flexString `json:"name"`
	}
	if err := c.Get(ctx, "/cluster/acme/account", nil, &w); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(w))
	for _, x := range w {
		out = append(out, string(x.Name))
	}
	return out, nil
}

func acmeAccountPath(name string) string { return "/cluster/acme/account/" + PathEscape(name) }

// ACMEAccount reads one account. Contact addresses are returned without
// their "mailto:" prefix. A missing account is ErrNotFound.
//
//pve:operation GET /cluster/acme/account/{name}
func (c *Client) ACMEAccount(ctx context.Context, name string) (*ACMEAccount, error) {
	var w struct {
		Account struct {
			Contact []string   `json:"contact"`
			Status  flexString `json:"status"`
		} `json:"account"`
		Directory flexString `json:"directory"`
		Location  flexString `json:"location"`
		TOS       flexString `json:"tos"`
	}
	if err := c.Get(ctx, acmeAccountPath(name), nil, &w); err != nil {
		return nil, err
	}
	a := &ACMEAccount{Name: name, Directory: string(w.Directory), Location: string(w.Location), TOSURL: string(w.TOS), Status: string(w.Account.Status)}
	for _, m := range w.Account.Contact {
		a.Contact = append(a.Contact, strings.TrimPrefix(m, "mailto:"))
	}
	return a, nil
}

// RegisterACMEAccount registers an account with the CA at directory (task
// acmeregister). tosURL states agreement to the CA's terms of service; CAs
// that publish terms refuse registration without it.
//
//pve:operation POST /cluster/acme/account
func (c *Client) RegisterACMEAccount(ctx context.Context, name string, contact []string, directory, tosURL string) (upid string, err error) {
	p := Params{}
	p.Set("name", name)
	p.Set("contact", strings.Join(contact, ","))
	if directory != "" {
		p.Set("directory", directory)
	}
	if tosURL != "" {
		p.Set("tos_url", tosURL)
	}
	var s flexString
	err = c.Post(ctx, "/cluster/acme/account", p, &s)
	return string(s), err
}

// UpdateACMEAccount changes the account's contact addresses at the CA (task
// acmeupdate); an empty list only refreshes the account (acmerefresh).
//
//pve:operation PUT /cluster/acme/account/{name}
func (c *Client) UpdateACMEAccount(ctx context.Context, name string, contact []string) (upid string, err error) {
	p := Params{}
	if len(contact) > 0 {
		p.Set("contact", strings.Join(contact, ","))
	}
	var s flexString
	err = c.Put(ctx, acmeAccountPath(name), p, &s)
	return string(s), err
}

// DeactivateACMEAccount deactivates the account at the CA (task
// acmedeactivate); PVE then renames its file, so the name is free again.
//
//pve:operation DELETE /cluster/acme/account/{name}
func (c *Client) DeactivateACMEAccount(ctx context.Context, name string) (upid string, err error) {
	var s flexString
	err = c.Delete(ctx, acmeAccountPath(name), nil, &s)
	return string(s), err
}

// ACMETermsOfService returns the terms of service URL the CA at directory
// publishes, "" when it has none.
//
//pve:operation GET /cluster/acme/tos
func (c *Client) ACMETermsOfService(ctx context.Context, directory string) (string, error) {
	p := Params{}
	if directory != "" {
		p.Set("directory", directory)
	}
	var s flexString
	err := c.Get(ctx, "/cluster/acme/tos", p, &s)
	return string(s), err
}

// ACMEPlugin is a challenge plugin. Data holds the DNS API's settings
// (KEY=VALUE), which PVE transports base64-encoded.
type ACMEPlugin struct {
	ID              string
	Type            string // dns or standalone
	API             string // DNS API (acme.sh name), such as pdns or cf
	Data            map[string]string
	ValidationDelay *int64 // seconds; nil = unset (PVE's default 30)
	Nodes           []string
	Disable         bool
	// Digest is the plugin configuration's digest (read only).
	Digest string
}

type acmePluginWire struct {
	Plugin          flexString `json:"plugin"`
	Type            flexString `json:"type"`
	API             flexString `json:"api"`
	Data            flexString `json:"data"`
	ValidationDelay *flexInt   `json:"validation-delay"`
	Nodes           flexString `json:"nodes"`
	Disable         flexBool   `json:"disable"`
	Digest          flexString `json:"digest"`
}

func (w acmePluginWire) plugin() ACMEPlugin {
	p := ACMEPlugin{
		ID: string(w.Plugin), Type: string(w.Type), API: string(w.API),
		Disable: bool(w.Disable), Digest: string(w.Digest), Data: DecodeACMEPluginData(string(w.Data)),
	}
	if w.ValidationDelay != nil {
		d := int64(*w.ValidationDelay)
		p.ValidationDelay = &d
	}
	p.Nodes = append(p.Nodes, strings.FieldsFunc(string(w.Nodes), func(r rune) bool { return r == ',' || r == ';' || r == ' ' })...)
	return p
}

// EncodeACMEPluginData encodes DNS plugin settings as PVE expects them:
// KEY=VALUE lines, sorted, base64.
func EncodeACMEPluginData(data map[string]string) string {
	if len(data) == 0 {
		return ""
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + data[k] + "\n")
	}
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

// DecodeACMEPluginData reverses EncodeACMEPluginData; nil when empty.
func DecodeACMEPluginData(s string) map[string]string {
	if s == "" {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		raw = []byte(s) // tolerate plain text
	}
	out := map[string]string{}
	// Lines split at "\n" only: a bufio.Scanner would drop a value's
	// trailing "\r" (found by FuzzACMEPluginData) and stop at 64 KiB.
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && k != "" {
			out[k] = v
		}
	}
	return out
}

func acmePluginPath(id string) string { return "/cluster/acme/plugins/" + PathEscape(id) }

// ACMEPlugin reads one plugin; a missing one is ErrNotFound (PVE says "not
// defined" with a 500).
//
//pve:operation GET /cluster/acme/plugins/{id}
func (c *Client) ACMEPlugin(ctx context.Context, id string) (*ACMEPlugin, error) {
	var w acmePluginWire
	if err := c.Get(ctx, acmePluginPath(id), nil, &w); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == http.StatusInternalServerError && strings.Contains(ae.Message, "not defined") {
			return nil, fmt.Errorf("%w (%w)", err, ErrNotFound)
		}
		return nil, err
	}
	p := w.plugin()
	p.ID = id
	return &p, nil
}

func (p ACMEPlugin) params() Params {
	q := Params{}
	if p.API != "" {
		q.Set("api", p.API)
	}
	if d := EncodeACMEPluginData(p.Data); d != "" {
		q.Set("data", d)
	}
	if p.ValidationDelay != nil {
		q.SetInt("validation-delay", *p.ValidationDelay)
	}
	if len(p.Nodes) > 0 {
		q.Set("nodes", strings.Join(p.Nodes, ","))
	}
	if p.Disable {
		q.SetBool("disable", true)
	}
	return q
}

// CreateACMEPlugin adds a plugin.
//
//pve:operation POST /cluster/acme/plugins
func (c *Client) CreateACMEPlugin(ctx context.Context, p ACMEPlugin) error {
	q := p.params()
	q.Set("id", p.ID)
	q.Set("type", p.Type)
	return c.Post(ctx, "/cluster/acme/plugins", q, nil)
}

// UpdateACMEPlugin sets the plugin's non-empty fields and deletes the
// options in del (data, nodes, validation-delay, disable). digest, when
// set, makes PVE refuse if the configuration changed meanwhile. The type
// cannot change.
//
//pve:operation PUT /cluster/acme/plugins/{id}
func (c *Client) UpdateACMEPlugin(ctx context.Context, p ACMEPlugin, del []string, digest string) error {
	q := p.params()
	q.Delete(del...)
	if digest != "" {
		q.Set("digest", digest)
	}
	return c.Put(ctx, acmePluginPath(p.ID), q, nil)
}

// DeleteACMEPlugin removes a plugin (no error if it does not exist).
//
//pve:operation DELETE /cluster/acme/plugins/{id}
func (c *Client) DeleteACMEPlugin(ctx context.Context, id string) error {
	return c.Delete(ctx, acmePluginPath(id), nil, nil)
}
