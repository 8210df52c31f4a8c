package pvesim

import (
	"strconv"
	"strings"
)

// HA groups (PVE 8; pve-ha-manager src/PVE/API2/HA/Groups.pm). PVE 9
// migrated them to rules and answers every group call with an error.

func groupsMigratedErr(verb string) *apiError {
	return die("cannot %s: ha groups have been migrated to rules", verb)
}

func haGroupView(h *haConfig, id string) map[string]any {
	v := haView(h.Groups[id])
	v["group"] = id
	v["digest"] = groupsDigest(h)
	return v
}

func haListGroups(c *call) (any, *apiError) {
	if groupsMigrated(c) {
		return nil, groupsMigratedErr("index groups")
	}
	h := haOf(c)
	out := []map[string]any{}
	for _, id := range sortedKeys(h.Groups) {
		out = append(out, haGroupView(h, id))
	}
	return out, nil
}

func haReadGroup(c *call) (any, *apiError) {
	if groupsMigrated(c) {
		return nil, groupsMigratedErr("read group")
	}
	h := haOf(c)
	if h.Groups[c.params["group"]] == nil {
		return nil, die("no such ha group '%s'", c.params["group"])
	}
	return haGroupView(h, c.params["group"]), nil
}

var haGroupOptions = map[string]bool{"nodes": true, "restricted": true, "nofailback": true, "comment": true}

// encodeNodes is the node list as encode_value writes it: sorted by node,
// ":priority" where one is set.
func encodeNodes(v string) string {
	prio := map[string]string{}
	for _, item := range splitList(v) {
		n, p, _ := strings.Cut(item, ":")
		if p != "" {
			if x, _ := strconv.Atoi(p); x != 0 {
				p = strconv.Itoa(x)
			} else {
				p = ""
			}
		}
		prio[n] = p
	}
	var out []string
	for _, n := range sortedKeys(prio) {
		if prio[n] != "" {
			out = append(out, n+":"+prio[n])
		} else {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

func haCreateGroup(c *call) (any, *apiError) {
	if aerr := checkCfsQuorum(c); aerr != nil {
		return nil, aerr
	}
	if groupsMigrated(c) {
		return nil, groupsMigratedErr("create group")
	}
	if pt := c.params["type"]; pt != "" && pt != "group" {
		return nil, die("types does not match")
	}
	h := haOf(c)
	id := c.params["group"]
	if h.Groups[id] != nil {
		return nil, die("create ha group failed: ha group ID '%s' already defined", id)
	}
	opts := map[string]string{}
	for k := range haGroupOptions {
		if v, ok := c.params[k]; ok {
			opts[k] = v
		}
	}
	opts["nodes"] = encodeNodes(opts["nodes"])
	h.Groups[id] = &haSection{Type: "group", Opts: opts}
	c.s.saveLocked()
	return nil, nil
}

func haUpdateGroup(c *call) (any, *apiError) {
	if groupsMigrated(c) {
		return nil, groupsMigratedErr("update group")
	}
	h := haOf(c)
	id := c.params["group"]
	if d, ok := c.params["digest"]; ok && d != groupsDigest(h) {
		return nil, die("update ha group failed: %s", modifiedConfig)
	}
	g := h.Groups[id]
	if g == nil {
		return nil, die("update ha group failed: no such ha group '%s'", id)
	}
	next := map[string]string{}
	for k, v := range g.Opts {
		next[k] = v
	}
	for k := range haGroupOptions {
		if v, ok := c.params[k]; ok {
			next[k] = v
		}
	}
	if v, ok := c.params["nodes"]; ok {
		next["nodes"] = encodeNodes(v)
	}
	for _, k := range splitList(c.params["delete"]) {
		if !haGroupOptions[k] {
			return nil, die("update ha group failed: no such option '%s'", k)
		}
		if k == "nodes" {
			return nil, die("update ha group failed: unable to delete required option '%s'", k)
		}
		delete(next, k)
	}
	g.Opts = next
	c.s.saveLocked()
	return nil, nil
}

func haDeleteGroup(c *call) (any, *apiError) {
	if groupsMigrated(c) {
		return nil, groupsMigratedErr("delete group")
	}
	h := haOf(c)
	id := c.params["group"]
	for _, sid := range sortedKeys(h.Resources) {
		if h.Resources[sid].Opts["group"] == id {
			return nil, die("delete ha group failed: ha group is used by service '%s'", sid)
		}
	}
	delete(h.Groups, id)
	c.s.saveLocked()
	return nil, nil
}
