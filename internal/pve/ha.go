package pve

import (
	"context"
	"errors"
	"strings"
)

// HA: resources, groups (PVE 8; on PVE 9 they are migrated to rules and
// every groups call fails), rules (PVE 9) and the HA manager's status.
// Writes are synchronous; the CRM acts on them within seconds.

func haResourcePath(sid string) string { return "/cluster/ha/resources/" + PathEscape(sid) }

// IsHANotFound reports PVE's answer for an HA resource, group or rule that
// is not configured ("no such resource 'vm:100'", "cannot delete service
// 'vm:100', not HA managed!", "no such ha group ...", "no such ha rule
// ...", or a not-found status).
func IsHANotFound(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.IsNotFoundStatus() {
		return true
	}
	for _, p := range []string{"no such resource '", "', not HA managed!", "no such ha group '", "no such ha rule '"} {
		if strings.Contains(ae.Message, p) {
			return true
		}
	}
	return false
}

// HAResource is one entry of /etc/pve/ha/resources.cfg. Optional values PVE
// does not return (not set: PVE's default applies) are nil.
type HAResource struct {
	SID  string // vm:100, ct:101
	Type string // vm, ct
	// State is the requested state (started, stopped, enabled, disabled,
	// ignored); "" when not set (started).
	State       string
	Group       string // PVE 8 only
	Comment     string
	MaxRestart  *int64
	MaxRelocate *int64
	Failback    *bool // PVE 9 only
	Digest      string
	// Errors are PVE's per-option complaints in the list (such as a group
	// that does not exist).
	Errors map[string]string
}

type haResourceWire struct {
	SID         flexString            `json:"sid"`
	Type        flexString            `json:"type"`
	State       flexString            `json:"state"`
	Group       flexString            `json:"group"`
	Comment     flexString            `json:"comment"`
	MaxRestart  *flexInt              `json:"max_restart"`
	MaxRelocate *flexInt              `json:"max_relocate"`
	Failback    *flexBool             `json:"failback"`
	Digest      flexString            `json:"digest"`
	Errors      map[string]flexString `json:"errors"`
}

func (w haResourceWire) resource() HAResource {
	r := HAResource{SID: string(w.SID), Type: string(w.Type), State: string(w.State), Group: string(w.Group),
		Comment: string(w.Comment), Digest: string(w.Digest)}
	if w.MaxRestart != nil {
		v := int64(*w.MaxRestart)
		r.MaxRestart = &v
	}
	if w.MaxRelocate != nil {
		v := int64(*w.MaxRelocate)
		r.MaxRelocate = &v
	}
	if w.Failback != nil {
		v := bool(*w.Failback)
		r.Failback = &v
	}
	if len(w.Errors) > 0 {
		r.Errors = map[string]string{}
		for k, v := range w.Errors {
			r.Errors[k] = string(v)
		}
	}
	return r
}

// HAResources lists the HA resources; typ "vm" or "ct" filters ("" = all).
//
//pve:operation GET /cluster/ha/resources
func (c *Client) HAResources(ctx context.Context, typ string) ([]HAResource, error) {
	p := Params{}
	if typ != "" {
		p.Set("type", typ)
	}
	var wire []haResourceWire
	if err := c.Get(ctx, "/cluster/ha/resources", p, &wire); err != nil {
		return nil, err
	}
	out := make([]HAResource, 0, len(wire))
	for _, w := range wire {
		out = append(out, w.resource())
	}
	return out, nil
}

// HAResource reads one HA resource by sid ("vm:100", or "100" for the
// guest's type).
//
//pve:operation GET /cluster/ha/resources/{sid}
func (c *Client) HAResource(ctx context.Context, sid string) (*HAResource, error) {
	var w haResourceWire
	if err := c.Get(ctx, haResourcePath(sid), nil, &w); err != nil {
		return nil, err
	}
	r := w.resource()
	return &r, nil
}

// HAResourceRequest sets the options of an HA resource. Empty strings and
// nil pointers are not sent.
type HAResourceRequest struct {
	State, Group, Comment   string
	MaxRestart, MaxRelocate *int64
	Failback                *bool
}

func (r HAResourceRequest) params() Params {
	p := Params{}
	if r.State != "" {
		p.Set("state", r.State)
	}
	if r.Group != "" {
		p.Set("group", r.Group)
	}
	if r.Comment != "" {
		p.Set("comment", r.Comment)
	}
	if r.MaxRestart != nil {
		p.SetInt("max_restart", *r.MaxRestart)
	}
	if r.MaxRelocate != nil {
		p.SetInt("max_relocate", *r.MaxRelocate)
	}
	if r.Failback != nil {
		p.SetBool("failback", *r.Failback)
	}
	return p
}

// CreateHAResource puts a guest under HA.
//
//pve:operation POST /cluster/ha/resources
func (c *Client) CreateHAResource(ctx context.Context, sid string, r HAResourceRequest) error {
	p := r.params()
	p.Set("sid", sid)
	return c.Post(ctx, "/cluster/ha/resources", p, nil)
}

// UpdateHAResource changes an HA resource: sets what r holds, removes the
// options named in del. A non-empty digest makes PVE refuse when the file
// changed since it was read.
//
//pve:operation PUT /cluster/ha/resources/{sid}
func (c *Client) UpdateHAResource(ctx context.Context, sid string, r HAResourceRequest, del []string, digest string) error {
	p := r.params()
	p.Delete(del...)
	if digest != "" {
		p.Set("digest", digest)
	}
	return c.Put(ctx, haResourcePath(sid), p, nil)
}

// DeleteHAResource removes a guest from HA; the guest keeps running as it
// is. On PVE 9 it is also removed from the rules that name it (purge,
// PVE's default), and a rule left without resources is deleted.
//
//pve:operation DELETE /cluster/ha/resources/{sid}
func (c *Client) DeleteHAResource(ctx context.Context, sid string) error {
	return c.Delete(ctx, haResourcePath(sid), nil, nil)
}

// HAGroup is one PVE 8 HA group.
type HAGroup struct {
	Group      string
	Nodes      string // node[:priority],... as PVE writes it (sorted)
	Restricted bool
	NoFailback bool
	Comment    string
	Digest     string
}

type haGroupWire struct {
	Group      flexString `json:"group"`
	Nodes      flexString `json:"nodes"`
	Restricted flexBool   `json:"restricted"`
	NoFailback flexBool   `json:"nofailback"`
	Comment    flexString `json:"comment"`
	Digest     flexString `json:"digest"`
}

func (w haGroupWire) group() HAGroup {
	return HAGroup{Group: string(w.Group), Nodes: string(w.Nodes), Restricted: bool(w.Restricted),
		NoFailback: bool(w.NoFailback), Comment: string(w.Comment), Digest: string(w.Digest)}
}

// HAGroups lists the HA groups (PVE 8; PVE 9 fails with "ha groups have
// been migrated to rules").
//
//pve:operation GET /cluster/ha/groups
func (c *Client) HAGroups(ctx context.Context) ([]HAGroup, error) {
	var wire []haGroupWire
	if err := c.Get(ctx, "/cluster/ha/groups", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]HAGroup, 0, len(wire))
	for _, w := range wire {
		out = append(out, w.group())
	}
	return out, nil
}

// HAGroup reads one HA group.
//
//pve:operation GET /cluster/ha/groups/{group}
func (c *Client) HAGroup(ctx context.Context, group string) (*HAGroup, error) {
	var w haGroupWire
	if err := c.Get(ctx, "/cluster/ha/groups/"+PathEscape(group), nil, &w); err != nil {
		return nil, err
	}
	g := w.group()
	return &g, nil
}

func (g HAGroup) params() Params {
	p := Params{}
	if g.Nodes != "" {
		p.Set("nodes", g.Nodes)
	}
	p.SetBool("restricted", g.Restricted)
	p.SetBool("nofailback", g.NoFailback)
	if g.Comment != "" {
		p.Set("comment", g.Comment)
	}
	return p
}

// CreateHAGroup creates an HA group (PVE 8).
//
//pve:operation POST /cluster/ha/groups
func (c *Client) CreateHAGroup(ctx context.Context, g HAGroup) error {
	p := g.params()
	p.Set("group", g.Group)
	return c.Post(ctx, "/cluster/ha/groups", p, nil)
}

// UpdateHAGroup sets a group's nodes, flags and comment; an empty comment
// is deleted.
//
//pve:operation PUT /cluster/ha/groups/{group}
func (c *Client) UpdateHAGroup(ctx context.Context, g HAGroup) error {
	p := g.params()
	if g.Comment == "" {
		p.Delete("comment")
	}
	if g.Digest != "" {
		p.Set("digest", g.Digest)
	}
	return c.Put(ctx, "/cluster/ha/groups/"+PathEscape(g.Group), p, nil)
}

// DeleteHAGroup deletes an HA group; PVE refuses while a resource uses it.
//
//pve:operation DELETE /cluster/ha/groups/{group}
func (c *Client) DeleteHAGroup(ctx context.Context, group string) error {
	return c.Delete(ctx, "/cluster/ha/groups/"+PathEscape(group), nil, nil)
}

// HARule is one PVE 9 HA rule.
type HARule struct {
	Rule      string
	Type      string   // node-affinity, resource-affinity
	Resources []string // sids, sorted
	Nodes     string   // node-affinity: node[:priority],... (sorted)
	Strict    bool     // node-affinity
	Affinity  string   // resource-affinity: positive, negative
	Disable   bool
	Comment   string
	Order     int64
	Digest    string
	// Errors are PVE's feasibility complaints per option: the rule is not
	// applied while it has any.
	Errors map[string][]string
}

type haRuleWire struct {
	Rule      flexString          `json:"rule"`
	Type      flexString          `json:"type"`
	Resources flexString          `json:"resources"`
	Nodes     flexString          `json:"nodes"`
	Strict    flexBool            `json:"strict"`
	Affinity  flexString          `json:"affinity"`
	Disable   flexBool            `json:"disable"`
	Comment   flexString          `json:"comment"`
	Order     flexInt             `json:"order"`
	Digest    flexString          `json:"digest"`
	Errors    map[string][]string `json:"errors"`
}

func (w haRuleWire) rule() HARule {
	r := HARule{Rule: string(w.Rule), Type: string(w.Type), Nodes: string(w.Nodes), Strict: bool(w.Strict),
		Affinity: string(w.Affinity), Disable: bool(w.Disable), Comment: string(w.Comment), Order: int64(w.Order),
		Digest: string(w.Digest), Errors: w.Errors}
	for _, s := range strings.Split(string(w.Resources), ",") {
		if s = strings.TrimSpace(s); s != "" {
			r.Resources = append(r.Resources, s)
		}
	}
	return r
}

// HARules lists the HA rules in their order; typ and resource filter
// ("" = all).
//
//pve:operation GET /cluster/ha/rules
func (c *Client) HARules(ctx context.Context, typ, resource string) ([]HARule, error) {
	p := Params{}
	if typ != "" {
		p.Set("type", typ)
	}
	if resource != "" {
		p.Set("resource", resource)
	}
	var wire []haRuleWire
	if err := c.Get(ctx, "/cluster/ha/rules", p, &wire); err != nil {
		return nil, err
	}
	out := make([]HARule, 0, len(wire))
	for _, w := range wire {
		out = append(out, w.rule())
	}
	return out, nil
}

// HARule reads one HA rule.
//
//pve:operation GET /cluster/ha/rules/{rule}
func (c *Client) HARule(ctx context.Context, rule string) (*HARule, error) {
	var w haRuleWire
	if err := c.Get(ctx, "/cluster/ha/rules/"+PathEscape(rule), nil, &w); err != nil {
		return nil, err
	}
	r := w.rule()
	return &r, nil
}

func (r HARule) params() Params {
	p := Params{"type": r.Type}
	if len(r.Resources) > 0 {
		p.Set("resources", strings.Join(r.Resources, ","))
	}
	if r.Type == "node-affinity" {
		if r.Nodes != "" {
			p.Set("nodes", r.Nodes)
		}
		if r.Strict {
			p.SetBool("strict", true)
		}
	}
	if r.Affinity != "" {
		p.Set("affinity", r.Affinity)
	}
	if r.Disable {
		p.SetBool("disable", true)
	}
	if r.Comment != "" {
		p.Set("comment", r.Comment)
	}
	return p
}

// CreateHARule creates an HA rule (PVE 9). PVE refuses resources that are
// not HA resources, unknown nodes, and rules that contradict others.
//
//pve:operation POST /cluster/ha/rules
func (c *Client) CreateHARule(ctx context.Context, r HARule) error {
	p := r.params()
	p.Set("rule", r.Rule)
	return c.Post(ctx, "/cluster/ha/rules", p, nil)
}

// UpdateHARule sets a rule's options; strict, disable and comment are
// deleted when false/empty.
//
//pve:operation PUT /cluster/ha/rules/{rule}
func (c *Client) UpdateHARule(ctx context.Context, r HARule) error {
	p := r.params()
	if r.Type == "node-affinity" && !r.Strict {
		p.Delete("strict")
	}
	if !r.Disable {
		p.Delete("disable")
	}
	if r.Comment == "" {
		p.Delete("comment")
	}
	if r.Digest != "" {
		p.Set("digest", r.Digest)
	}
	return c.Put(ctx, "/cluster/ha/rules/"+PathEscape(r.Rule), p, nil)
}

// DeleteHARule deletes an HA rule (PVE answers success for an unknown one).
//
//pve:operation DELETE /cluster/ha/rules/{rule}
func (c *Client) DeleteHARule(ctx context.Context, rule string) error {
	return c.Delete(ctx, "/cluster/ha/rules/"+PathEscape(rule), nil, nil)
}

// HAStatusEntry is one line of the HA manager's status: the quorum, the
// master, each node's LRM, each service.
type HAStatusEntry struct {
	ID, Type, Node, Status string
	// Services only: sid, the state PVE shows (started, stopped, starting,
	// stopping, disabled, ignored, error, ...), the CRM's state and the
	// requested one.
	SID, State, CRMState, RequestState string
}

// HAStatus returns the HA manager's current status.
//
//pve:operation GET /cluster/ha/status/current
func (c *Client) HAStatus(ctx context.Context) ([]HAStatusEntry, error) {
	var wire []struct {
		ID           flexString `json:"id"`
		Type         flexString `json:"type"`
		Node         flexString `json:"node"`
		Status       flexString `json:"status"`
		SID          flexString `json:"sid"`
		State        flexString `json:"state"`
		CRMState     flexString `json:"crm_state"`
		RequestState flexString `json:"request_state"`
	}
	if err := c.Get(ctx, "/cluster/ha/status/current", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]HAStatusEntry, 0, len(wire))
	for _, w := range wire {
		out = append(out, HAStatusEntry{ID: string(w.ID), Type: string(w.Type), Node: string(w.Node), Status: string(w.Status),
			SID: string(w.SID), State: string(w.State), CRMState: string(w.CRMState), RequestState: string(w.RequestState)})
	}
	return out, nil
}
