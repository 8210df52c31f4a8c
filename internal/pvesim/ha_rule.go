package pvesim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// HA rules (PVE 9; pve-ha-manager src/PVE/API2/HA/Rules.pm and
// PVE/HA/Rules*.pm): node-affinity and resource-affinity.

// haRuleOptions are the options of each rule type, true when required.
var haRuleOptions = map[string]map[string]bool{
	"node-affinity":     {"resources": true, "nodes": true, "strict": false, "disable": false, "comment": false},
	"resource-affinity": {"resources": true, "affinity": true, "disable": false, "comment": false},
}

func haRuleView(h *haConfig, id string) map[string]any {
	r := h.Rules[id]
	v := haView(r)
	v["rule"] = id
	v["digest"] = rulesDigest(h)
	v["order"] = r.Order
	if errs := haRuleErrors(h)[id]; len(errs) > 0 {
		m := map[string]any{}
		for k, list := range errs {
			m[k] = list
		}
		v["errors"] = m
	}
	return v
}

func haListRules(c *call) (any, *apiError) {
	h := haOf(c)
	ids := sortedKeys(h.Rules)
	sort.SliceStable(ids, func(i, j int) bool { return h.Rules[ids[i]].Order < h.Rules[ids[j]].Order })
	out := []map[string]any{}
	for _, id := range ids {
		r := h.Rules[id]
		if t := c.params["type"]; t != "" && r.Type != t {
			continue
		}
		if sid := c.params["resource"]; sid != "" && !contains(splitList(r.Opts["resources"]), sid) {
			continue
		}
		out = append(out, haRuleView(h, id))
	}
	return out, nil
}

func haReadRule(c *call) (any, *apiError) {
	h := haOf(c)
	if h.Rules[c.params["rule"]] == nil {
		return nil, die("no such ha rule '%s'", c.params["rule"])
	}
	return haRuleView(h, c.params["rule"]), nil
}

// haRuleErrors is check_feasibility, for the checks the simulator knows:
// a resource in two enabled node-affinity rules, and resource-affinity
// rules with fewer than two resources.
func haRuleErrors(h *haConfig) map[string]map[string][]string {
	errs := map[string]map[string][]string{}
	add := func(id, key, msg string) {
		if errs[id] == nil {
			errs[id] = map[string][]string{}
		}
		errs[id][key] = append(errs[id][key], msg)
	}
	users := map[string][]string{}
	for _, id := range sortedKeys(h.Rules) {
		r := h.Rules[id]
		if r.Opts["disable"] == "1" {
			continue
		}
		switch r.Type {
		case "node-affinity":
			for _, sid := range splitList(r.Opts["resources"]) {
				users[sid] = append(users[sid], id)
			}
		case "resource-affinity":
			if len(splitList(r.Opts["resources"])) < 2 {
				add(id, "resources", "rule is ineffective as there are less than two resources")
			}
		}
	}
	for _, sid := range sortedKeys(users) {
		if len(users[sid]) < 2 {
			continue
		}
		for _, id := range users[sid] {
			add(id, "resources", fmt.Sprintf("resource '%s' is already used in another node affinity rule", sid))
		}
	}
	return errs
}

// haCheckRuleOpts is check_config plus the API's resource and node checks.
func haCheckRuleOpts(c *call, typ string, create bool) (map[string]string, *apiError) {
	allowed := haRuleOptions[typ]
	opts := map[string]string{}
	for _, k := range []string{"resources", "nodes", "strict", "affinity", "disable", "comment"} {
		v, ok := c.params[k]
		if !ok {
			continue
		}
		if _, ok := allowed[k]; !ok {
			return nil, die("unexpected property '%s'", k)
		}
		opts[k] = v
	}
	if opts["disable"] == "0" {
		delete(opts, "disable")
	}
	if create {
		for _, k := range sortedKeys(allowed) {
			if allowed[k] && opts[k] == "" {
				return nil, die("missing value for required option '%s'", k)
			}
		}
	}
	return opts, nil
}

func haAssertRuleParams(c *call, h *haConfig, opts map[string]string) *apiError {
	if v, ok := opts["resources"]; ok {
		list := splitList(v)
		if len(list) == 0 {
			return die("no resources were specified")
		}
		sort.Strings(list)
		var missing []string
		for _, sid := range list {
			if h.Resources[sid] == nil {
				missing = append(missing, sid)
			}
		}
		if len(missing) > 0 {
			return die("cannot use unmanaged resource(s) %s.", strings.Join(missing, ", "))
		}
		opts["resources"] = strings.Join(list, ",")
	}
	if v, ok := opts["nodes"]; ok {
		enc := encodeNodes(v)
		if enc == "" {
			return die("no nodes were specified")
		}
		known := map[string]bool{}
		for _, n := range c.s.visibleNodeNames(c.listener) {
			known[n] = true
		}
		var missing []string
		for _, item := range strings.Split(enc, ",") {
			n, _, _ := strings.Cut(item, ":")
			if !known[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return die("cannot use non-existent node(s) %s.", strings.Join(missing, ", "))
		}
		opts["nodes"] = enc
	}
	return nil
}

func haAssertFeasible(h *haConfig, id string) *apiError {
	errs := haRuleErrors(h)[id]
	if len(errs) == 0 {
		return nil
	}
	m := map[string]string{}
	for k, list := range errs {
		m[k] = strings.Join(list, ", ")
	}
	return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("Rule '%s' is invalid.", id), Errors: m}
}

func haCreateRule(c *call) (any, *apiError) {
	if aerr := checkCfsQuorum(c); aerr != nil {
		return nil, aerr
	}
	h := haOf(c)
	typ, id := c.params["type"], c.params["rule"]
	opts, aerr := haCheckRuleOpts(c, typ, true)
	if aerr != nil {
		return nil, aerr
	}
	if h.Rules[id] != nil {
		return nil, die("create ha rule failed: HA rule '%s' already defined", id)
	}
	if aerr := haAssertRuleParams(c, h, opts); aerr != nil {
		aerr.Message = "create ha rule failed: " + aerr.Message
		return nil, aerr
	}
	order := 0
	for _, r := range h.Rules {
		if r.Order > order {
			order = r.Order
		}
	}
	h.Rules[id] = &haSection{Type: typ, Order: order + 1, Opts: opts}
	if aerr := haAssertFeasible(h, id); aerr != nil {
		delete(h.Rules, id)
		return nil, aerr
	}
	c.s.saveLocked()
	return nil, nil
}

func haUpdateRule(c *call) (any, *apiError) {
	h := haOf(c)
	id := c.params["rule"]
	if d, ok := c.params["digest"]; ok && d != rulesDigest(h) {
		return nil, die("update HA rules failed: %s", modifiedConfig)
	}
	r := h.Rules[id]
	if r == nil {
		return nil, die("update HA rules failed: HA rule '%s' does not exist", id)
	}
	opts, aerr := haCheckRuleOpts(c, r.Type, false)
	if aerr != nil {
		aerr.Message = "update HA rules failed: " + aerr.Message
		return nil, aerr
	}
	if aerr := haAssertRuleParams(c, h, opts); aerr != nil {
		aerr.Message = "update HA rules failed: " + aerr.Message
		return nil, aerr
	}
	next := map[string]string{}
	for k, v := range r.Opts {
		next[k] = v
	}
	allowed := haRuleOptions[r.Type]
	for _, k := range splitList(c.params["delete"]) {
		req, ok := allowed[k]
		if !ok {
			return nil, die("update HA rules failed: no such option '%s'", k)
		}
		if req {
			return nil, die("update HA rules failed: unable to delete required option '%s'", k)
		}
		delete(next, k)
	}
	for k, v := range opts {
		next[k] = v
	}
	old := r.Opts
	r.Opts = next
	if aerr := haAssertFeasible(h, id); aerr != nil {
		r.Opts = old
		return nil, aerr
	}
	c.s.saveLocked()
	return nil, nil
}

func haDeleteRule(c *call) (any, *apiError) {
	h := haOf(c)
	delete(h.Rules, c.params["rule"])
	c.s.saveLocked()
	return nil, nil
}
