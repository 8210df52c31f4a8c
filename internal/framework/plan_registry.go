package framework

import (
	"sort"
	"sync"
)

// Whole-plan safety. Terraform plans every resource of a configuration in
// this one provider process, concurrently and in no fixed order, and fails
// the whole plan when any resource's plan has an error. So a set of changes
// that is unsafe only together (two OSDs of one host, a VM and a disk it
// keeps) can be refused at plan by one of them: every resource records what
// it plans here and then judges the full set recorded so far. Record and
// snapshot are one atomic step, so of any set of records the last to be
// recorded sees all of them: a rule that only ever turns unsafe as records
// are added (monotone) is always refused by some member of the set, in any
// order. Rules whose safety depends on a record that may come later (a
// destroy that is safe only if another resource is destroyed too) must be
// written as "unsafe when A and B are both recorded", with B the record of
// the resource that stays (see PlanKeep).

// PlanAction is what a plan does to one resource.
type PlanAction int

const (
	// PlanKeep: the resource stays (updated in place or unchanged).
	PlanKeep PlanAction = iota
	// PlanCreate: the resource is created.
	PlanCreate
	// PlanDestroy: the resource is destroyed.
	PlanDestroy
)

func (a PlanAction) String() string {
	switch a {
	case PlanCreate:
		return "create"
	case PlanDestroy:
		return "destroy"
	}
	return "keep"
}

// PlannedChange is one resource's planned change as recorded for the
// whole-plan checks.
type PlannedChange struct {
	// Kind is the resource type, such as "pve_ceph_osd".
	Kind string
	// ID identifies the resource within Kind (its id attribute, or what
	// the plan knows of it); a second record of one Kind and ID replaces
	// the first (Terraform plans a resource once per walk; a replan in the
	// apply walk records again).
	ID     string
	Action PlanAction
	// Facts are the kind's own details (node, ids, ...), read only by the
	// checks of that kind; keep them immutable values.
	Facts any
}

// Label names the change in messages: "pve_ceph_osd osd.3".
func (c PlannedChange) Label() string { return c.Kind + " " + c.ID }

// PlanRegistry collects the planned changes of one Terraform command, per
// scope (the cluster a provider configuration talks to). Safe for
// concurrent use.
type PlanRegistry struct {
	mu     sync.Mutex
	scopes map[string]map[string]PlannedChange
}

// NewPlanRegistry returns an empty registry.
func NewPlanRegistry() *PlanRegistry {
	return &PlanRegistry{scopes: map[string]map[string]PlannedChange{}}
}

// Record adds c to scope and returns every change recorded in scope so far,
// c included, sorted by Kind and ID (so messages do not depend on the order
// in which Terraform planned the resources).
func (r *PlanRegistry) Record(scope string, c PlannedChange) []PlannedChange {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.scopes[scope]
	if s == nil {
		s = map[string]PlannedChange{}
		r.scopes[scope] = s
	}
	s[c.Kind+"\x00"+c.ID] = c
	out := make([]PlannedChange, 0, len(s))
	for _, v := range s {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Changes filters changes by kind and action.
func Changes(all []PlannedChange, kind string, action PlanAction) []PlannedChange {
	var out []PlannedChange
	for _, c := range all {
		if c.Kind == kind && c.Action == action {
			out = append(out, c)
		}
	}
	return out
}

// RecordPlan records c for the cluster pd talks to and returns what the
// plan has recorded there so far (see PlanRegistry.Record). Without a
// registry (a ProviderData built by hand in a test) it returns just c.
func (pd *ProviderData) RecordPlan(c PlannedChange) []PlannedChange {
	if pd == nil || pd.Plan == nil {
		return []PlannedChange{c}
	}
	scope := ""
	if pd.Client != nil {
		scope = pd.Client.Endpoint()
	}
	return pd.Plan.Record(scope, c)
}

// KindStorage is pve_storage's kind in the registry: its destroy records
// carry the storage id as ID.
const KindStorage = "pve_storage"

// StorageVolumes is implemented by the Facts of a change that leaves
// volumes on storages after the plan (a disk that stays, or one detached
// with its volume kept), so that a storage destroy in the same plan sees
// them without knowing the kind.
type StorageVolumes interface {
	// KeptVolumeStorages are the storage ids the volumes live on.
	KeptVolumeStorages() []string
}

// KeptOnStorage returns the changes in all whose volumes stay on storage.
func KeptOnStorage(all []PlannedChange, storage string) []PlannedChange {
	var out []PlannedChange
	for _, c := range all {
		if v, ok := c.Facts.(StorageVolumes); ok {
			for _, s := range v.KeptVolumeStorages() {
				if s == storage {
					out = append(out, c)
					break
				}
			}
		}
	}
	return out
}
