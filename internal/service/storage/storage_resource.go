package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const storageTypeName = "pve_storage"

var storageIDRE = regexp.MustCompile(`^(?i:[a-z][a-z0-9\-_.]*[a-z0-9])$`)

var (
	_ resource.Resource                   = (*storageResource)(nil)
	_ resource.ResourceWithConfigure      = (*storageResource)(nil)
	_ resource.ResourceWithImportState    = (*storageResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*storageResource)(nil)
	_ resource.ResourceWithValidateConfig = (*storageResource)(nil)
)

// NewStorageResource is the constructor the provider registers.
func NewStorageResource() resource.Resource {
	return &storageResource{ResourceBase: framework.ResourceBase{TypeName: storageTypeName}}
}

type storageResource struct{ framework.ResourceBase }

func (r *storageResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := storageCommonAttributes()
	maps.Copy(attrs, storageTypedAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "A storage of the cluster's `/etc/pve/storage.cfg` (GUI: Datacenter → Storage): where guest disks, " +
			"container volumes, ISO images and backups live.\n\n" +
			"Changes are applied in place, guarded by storage.cfg's digest. Options PVE fixes at creation (a directory's " +
			"`path`, an lvmthin's `vgname` and `thinpool`, a zfspool's `pool`, NFS `server` and `export`) and the id and type " +
			"cannot change: the provider refuses such a plan and says why, rather than replacing the storage, because a " +
			"replacement would orphan the volumes on it. Destroying the resource removes the storage from storage.cfg only; " +
			"PVE leaves the volumes on the backend.\n\n" +
			"Credentials: an API token with `Datastore.Allocate` on `/storage` (reading needs `Datastore.Audit`).",
		Attributes: attrs,
	}
}

// storageCommonAttributes are the attributes of every storage type.
func storageCommonAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": framework.IDAttribute("The storage id."),
		"storage": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Storage id, such as `ceph` or `local-zfs`: starts with a letter, ends with a letter or digit, " +
				"and holds letters, digits, `-`, `_` and `.`. Volume ids start with it (`ceph:vm-100-disk-0`), so PVE cannot " +
				"rename a storage; a changed id is refused at plan.",
			Validators: []validator.String{stringvalidator.RegexMatches(storageIDRE,
				"must start with a letter, end with a letter or digit, and hold only letters, digits, '-', '_' and '.'")},
		},
		"type": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Storage type: `dir`, `nfs`, `lvm`, `lvmthin`, `zfspool`, `rbd`, `cephfs`, `glusterfs` (PVE 8 only) " +
				"with the type-specific attributes below, or a plugin type such as `drbd` (LINSTOR) or `vitastor`, whose settings " +
				"go in `options`. A plugin type must be installed on the nodes (the provider checks at plan). Fixed: a change " +
				"is refused at plan.",
			Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^[a-z][a-z0-9]*$`), "must be a storage type such as dir, rbd or drbd")},
		},
		"content": schema.SetAttribute{
			ElementType: types.StringType, Optional: true, Computed: true,
			MarkdownDescription: "What the storage holds: `images` (VM disks), `rootdir` (container volumes), `iso`, `vztmpl`, " +
				"`backup`, `snippets`, `import`, or `none` (dir only). Unset, PVE's default for the type (rbd: images; lvmthin and " +
				"zfspool: images, rootdir; dir: images, rootdir). Content a type cannot hold is refused at plan (PVE would drop it).",
			Validators:    []validator.Set{setvalidator.SizeAtLeast(1)},
			PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()},
		},
		"nodes": schema.SetAttribute{
			ElementType: types.StringType, Optional: true,
			MarkdownDescription: "Nodes the storage is available on; unset means every node. Node-local storages (lvmthin, zfspool, " +
				"lvm on local disks) should list the nodes that have the volume group or pool.",
			Validators: []validator.Set{setvalidator.SizeAtLeast(1)},
		},
		"shared": schema.BoolAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Whether every node sees the same content. PVE reports network types (rbd, cephfs, nfs, glusterfs, " +
				"drbd, ...) as shared by itself; only dir, lvm (and vitastor) take the setting, for a directory or volume group " +
				"that is shared by other means (a cluster file system, a SAN LUN). Telling PVE a local storage is shared makes " +
				"it migrate guests without copying their disks.",
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
		},
		"disable": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Disable the storage (default false): PVE neither activates it nor allocates on it; volumes stay.",
		},
		"options": schema.MapAttribute{
			ElementType: types.StringType, Optional: true,
			MarkdownDescription: "Further storage.cfg options by their PVE names, booleans as `0`/`1`: the settings of plugin " +
				"types (drbd: `resourcegroup` (required), `controller`, `preferlocal`, ...; vitastor: `vitastor_pool` (required), " +
				"`vitastor_etcd_address`, `vitastor_etcd_prefix`, `vitastor_prefix`, `vitastor_config_path`, `vitastor_nbd`) and " +
				"options without an attribute of their own (`bwlimit`, `max-protected-backups`, `mkdir`, ...). Keys that have an " +
				"attribute are refused here. Keys PVE has but this map lacks show as drift and are removed by the next apply.",
		},
	}
}

// storageTypedAttributes are the options of some types (typedAttrs).
func storageTypedAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	for _, a := range typedAttrs {
		desc := a.desc
		if a.str != nil {
			sa := schema.StringAttribute{Optional: true, Computed: a.computed, Sensitive: a.sensitive, MarkdownDescription: desc,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}}
			if a.computed {
				sa.PlanModifiers = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
			}
			if len(a.enum) > 0 {
				sa.Validators = append(sa.Validators, stringvalidator.OneOf(a.enum...))
			}
			attrs[a.name] = sa
		} else {
			attrs[a.name] = schema.BoolAttribute{Optional: true, MarkdownDescription: desc}
		}
	}
	return attrs
}

func stringSet(xs []string) types.Set {
	vals := make([]attr.Value, 0, len(xs))
	for _, x := range xs {
		vals = append(vals, types.StringValue(x))
	}
	return types.SetValueMust(types.StringType, vals)
}

func setStrings(ctx context.Context, s types.Set) []string {
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	var out []string
	_ = s.ElementsAs(ctx, &out, false)
	sort.Strings(out)
	return out
}

func mapStrings(ctx context.Context, m types.Map) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	_ = m.ElementsAs(ctx, &out, false)
	return out
}

// ValidateConfig refuses attributes the type does not have, missing
// required ones and content the type cannot hold, naming the attribute.
func (r *storageResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m storageModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Type.IsUnknown() || m.Type.IsNull() {
		return
	}
	typ := m.Type.ValueString()
	for _, a := range typedAttrs {
		set, unknown := attrState(&m, a)
		if (set || unknown) && !a.appliesTo(typ) {
			resp.Diagnostics.AddAttributeError(path.Root(a.name), "Attribute does not apply to this storage type",
				fmt.Sprintf("%s is an option of storage type %s, not of %s; PVE would refuse it (\"unexpected property '%s'\"). "+
					"Remove it, or for a plugin type put the plugin's own keys in options.", a.name, joinOr(a.types), typ, a.key))
		}
	}
	for _, name := range requiredAttrs[typ] {
		for _, a := range typedAttrs {
			if a.name == name {
				if set, unknown := attrState(&m, a); !set && !unknown && (!a.computed || typ == "dir") {
					resp.Diagnostics.AddAttributeError(path.Root(a.name), "Missing required attribute",
						fmt.Sprintf("A %s storage needs %s (PVE: \"missing value for required option '%s'\").", typ, a.name, a.key))
				}
			}
		}
	}
	if !m.Options.IsUnknown() {
		opts := mapStrings(ctx, m.Options)
		for _, k := range sortedKeys(opts) {
			if slices.Contains(coreKeys, k) {
				resp.Diagnostics.AddAttributeError(path.Root("options").AtMapKey(k), "Option has its own attribute",
					fmt.Sprintf("Set %s with the %s attribute, not in options.", k, k))
			} else if a := attrByKey(typ, k); a != nil {
				resp.Diagnostics.AddAttributeError(path.Root("options").AtMapKey(k), "Option has its own attribute",
					fmt.Sprintf("Set %s of a %s storage with the %s attribute, not in options.", k, typ, a.name))
			}
		}
		for _, k := range requiredOptions[typ] {
			if _, ok := opts[k]; !ok && !m.Options.IsUnknown() {
				resp.Diagnostics.AddAttributeError(path.Root("options"), "Missing required option",
					fmt.Sprintf("A %s storage needs options.%s (PVE: \"missing value for required option '%s'\").", typ, k, k))
			}
		}
	}
	if !m.Shared.IsNull() && !m.Shared.IsUnknown() && !slices.Contains(sharedSettable, typ) {
		resp.Diagnostics.AddAttributeError(path.Root("shared"), "shared is not settable for this type",
			fmt.Sprintf("PVE decides whether a %s storage is shared (network storages always are); only %s take shared. Remove it.",
				typ, joinOr(sharedSettable)))
	}
	if valid, ok := validContent[typ]; ok && !m.Content.IsUnknown() {
		for _, c := range setStrings(ctx, m.Content) {
			if !slices.Contains(valid, c) {
				resp.Diagnostics.AddAttributeError(path.Root("content"), "Content type not supported",
					fmt.Sprintf("A %s storage cannot hold %q; PVE would drop it with a warning and the plan would never settle. "+
						"Valid: %s.", typ, c, strings.Join(valid, ", ")))
			}
		}
	}
}

// attrState says whether a typed attribute is set or unknown in m.
func attrState(m *storageModel, a typedAttr) (set, unknown bool) {
	if a.str != nil {
		v := *a.str(m)
		return !v.IsNull() && !v.IsUnknown(), v.IsUnknown()
	}
	v := *a.b(m)
	return !v.IsNull() && !v.IsUnknown(), v.IsUnknown()
}

// ModifyPlan refuses what PVE cannot change in place and checks at plan
// that a plugin type is installed.
func (r *storageResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.planWhole(ctx, req, resp)
	if req.Plan.Raw.IsNull() {
		return // destroy: only the configuration goes
	}
	r.checkRefs(ctx, req, resp)
	var plan storageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Storage.IsUnknown() {
		r.PD.PlanNote(framework.PlannedStorages, plan.Storage.ValueString(), "") // for pve_vm_disk's storage check (qemu/vm_refs.go)
	}
	if req.State.Raw.IsNull() {
		r.checkTypeRegistered(ctx, plan.Type, &resp.Diagnostics)
		return
	}
	var state storageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.Storage.ValueString()
	orphan := "Replacing the storage instead would orphan the volumes on it (guest disks, backups), so the provider does not."
	if !plan.Storage.IsUnknown() && plan.Storage.ValueString() != id {
		framework.RefuseChange(&resp.Diagnostics, "storage", "a storage",
			fmt.Sprintf("Volume ids start with the storage id (%s:vm-100-disk-0) and guest configurations refer to them, so PVE "+
				"cannot rename storage %s. %s Keep storage = %q; to move to a new id, add a second pve_storage on the same "+
				"backend, move the disks, then remove this one.", id, id, orphan, id))
	}
	typ := state.Type.ValueString()
	if !plan.Type.IsUnknown() && plan.Type.ValueString() != typ {
		framework.RefuseChange(&resp.Diagnostics, "type", "a storage",
			fmt.Sprintf("Storage %s is of type %s; PVE cannot change a storage's type. %s Keep type = %q.", id, typ, orphan, typ))
		return
	}
	for _, a := range typedAttrs {
		if !a.fixedIn(typ) || a.str == nil {
			continue
		}
		p, s := *a.str(&plan), *a.str(&state)
		if p.IsUnknown() || s.IsNull() || (p.IsNull() && a.computed) {
			continue
		}
		if p.ValueString() != s.ValueString() {
			framework.RefuseChange(&resp.Diagnostics, a.name, "a "+typ+" storage",
				fmt.Sprintf("PVE fixes %s of a %s storage at creation (\"can't change value of fixed parameter '%s'\"); storage %s "+
					"keeps %q. %s Keep %s = %q, or create a second storage with the new value, move the disks, and remove this one.",
					a.name, typ, a.key, id, s.ValueString(), orphan, a.name, s.ValueString()))
		}
	}
}

// checkTypeRegistered asks PVE whether a non-built-in type is registered:
// GET /storage?type=<t> fails the enum check where the plugin is missing.
func (r *storageResource) checkTypeRegistered(ctx context.Context, t types.String, diags *diag.Diagnostics) {
	if t.IsUnknown() || t.IsNull() || slices.Contains(builtinTypes, t.ValueString()) || r.PD == nil || r.PD.Client == nil {
		return
	}
	typ := t.ValueString()
	_, err := r.PD.Client.StorageConfigs(ctx, typ)
	var ae *pve.APIError
	if errors.As(err, &ae) && ae.Errors["type"] != "" {
		diags.AddAttributeError(path.Root("type"), "Storage plugin not installed",
			fmt.Sprintf("PVE does not know storage type %s: its plugin is not installed on the node the provider talks to "+
				"(PVE: %s). Install the plugin's package on every node first (drbd: linstor-proxmox; vitastor: vitastor's "+
				"pve-storage-vitastor), then plan again. A node without the plugin also drops the storage's section whenever "+
				"it writes storage.cfg.", typ, ae.Errors["type"]))
	}
}

// createParams are POST /storage's options from the plan.
func createParams(ctx context.Context, m *storageModel) pve.Params {
	p := pve.Params{}
	typ := m.Type.ValueString()
	if c := setStrings(ctx, m.Content); len(c) > 0 {
		p.Set("content", strings.Join(c, ","))
	}
	if n := setStrings(ctx, m.Nodes); len(n) > 0 {
		p.Set("nodes", strings.Join(n, ","))
	}
	if m.Disable.ValueBool() {
		p.SetBool("disable", true)
	}
	if !m.Shared.IsNull() && !m.Shared.IsUnknown() && slices.Contains(sharedSettable, typ) {
		p.SetBool("shared", m.Shared.ValueBool())
	}
	for _, a := range typedAttrs {
		if !a.appliesTo(typ) {
			continue
		}
		if a.str != nil {
			if v := *a.str(m); !v.IsNull() && !v.IsUnknown() {
				p.Set(a.key, v.ValueString())
			}
		} else if v := *a.b(m); !v.IsNull() && !v.IsUnknown() {
			p.SetBool(a.key, v.ValueBool())
		}
	}
	for k, v := range mapStrings(ctx, m.Options) {
		p.Set(k, v)
	}
	return p
}

// updateParams are PUT /storage/{id}'s: what changed, deletes for what
// went away.
func updateParams(ctx context.Context, plan, state *storageModel) pve.Params {
	p := pve.Params{}
	var del []string
	typ := state.Type.ValueString()
	if !plan.Content.IsUnknown() && !plan.Content.Equal(state.Content) {
		if c := setStrings(ctx, plan.Content); len(c) > 0 {
			p.Set("content", strings.Join(c, ","))
		}
	}
	if !plan.Nodes.Equal(state.Nodes) {
		if n := setStrings(ctx, plan.Nodes); len(n) > 0 {
			p.Set("nodes", strings.Join(n, ","))
		} else {
			del = append(del, "nodes")
		}
	}
	if !plan.Disable.Equal(state.Disable) {
		if plan.Disable.ValueBool() {
			p.SetBool("disable", true)
		} else {
			del = append(del, "disable")
		}
	}
	if slices.Contains(sharedSettable, typ) && !plan.Shared.IsUnknown() && !plan.Shared.Equal(state.Shared) {
		if plan.Shared.ValueBool() {
			p.SetBool("shared", true)
		} else {
			del = append(del, "shared")
		}
	}
	for _, a := range typedAttrs {
		if !a.appliesTo(typ) || a.fixedIn(typ) {
			continue
		}
		if a.str != nil {
			pv, sv := *a.str(plan), *a.str(state)
			switch {
			case pv.IsUnknown() || pv.Equal(sv):
			case pv.IsNull():
				if !a.sensitive {
					del = append(del, a.key)
				}
			default:
				p.Set(a.key, pv.ValueString())
			}
		} else {
			pv, sv := *a.b(plan), *a.b(state)
			switch {
			case pv.IsUnknown() || pv.Equal(sv):
			case pv.IsNull():
				del = append(del, a.key)
			default:
				p.SetBool(a.key, pv.ValueBool())
			}
		}
	}
	po, so := mapStrings(ctx, plan.Options), mapStrings(ctx, state.Options)
	for _, k := range sortedKeys(po) {
		if so[k] != po[k] {
			p.Set(k, po[k])
		}
	}
	for _, k := range sortedKeys(so) {
		if _, ok := po[k]; !ok {
			del = append(del, k)
		}
	}
	if len(del) > 0 {
		p.Delete(del...)
	}
	return p
}

// fromAPI sets m from PVE's section; prior supplies what PVE never
// returns (keyring).
func (m *storageModel) fromAPI(sc *pve.StorageConfig, prior *storageModel) {
	*m = storageModel{}
	m.ID = types.StringValue(sc.Storage)
	m.Storage = types.StringValue(sc.Storage)
	m.Type = types.StringValue(sc.Type)
	m.Content = stringSet(sc.Content)
	m.Nodes = types.SetNull(types.StringType)
	if len(sc.Nodes) > 0 {
		m.Nodes = stringSet(sc.Nodes)
	}
	m.Shared = types.BoolValue(sc.Shared)
	m.Disable = types.BoolValue(sc.Disable)
	rest := map[string]string{}
	for k, v := range sc.Options {
		if k != "shared" {
			rest[k] = v
		}
	}
	for _, a := range typedAttrs {
		if a.str != nil {
			*a.str(m) = types.StringNull()
		} else {
			*a.b(m) = types.BoolNull()
		}
		if !a.appliesTo(sc.Type) {
			continue
		}
		if a.sensitive {
			if prior != nil {
				*a.str(m) = *a.str(prior)
			}
			continue
		}
		v, ok := rest[a.key]
		if !ok {
			continue
		}
		delete(rest, a.key)
		if a.str != nil {
			*a.str(m) = types.StringValue(v)
		} else {
			*a.b(m) = types.BoolValue(v == "1" || v == "true")
		}
	}
	m.Options = types.MapNull(types.StringType)
	if len(rest) > 0 {
		vals := map[string]attr.Value{}
		for k, v := range rest {
			vals[k] = types.StringValue(v)
		}
		m.Options = types.MapValueMust(types.StringType, vals)
	}
}

func (r *storageResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan storageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	id, typ := plan.Storage.ValueString(), plan.Type.ValueString()
	tflog.Info(ctx, "creating storage", map[string]any{"storage": id, "type": typ})
	// Whether storage.cfg lacks id before the POST decides what a lost
	// answer means: a storage that appears after it is this create's, and
	// without one PVE did not act and the create is sent again.
	_, gerr := c.StorageConfig(ctx, id)
	absent := errors.Is(gerr, pve.ErrNotFound)
	create := func() error { return c.CreateStorage(ctx, id, typ, createParams(ctx, &plan)) }
	var err error
	if absent {
		err = c.WriteVerified(ctx, "storage create "+id, create, func() (bool, error) {
			sc, gerr := c.StorageConfig(ctx, id)
			if errors.Is(gerr, pve.ErrNotFound) {
				return false, nil
			}
			return gerr == nil && sc.Type == typ, gerr
		})
	} else {
		err = create()
	}
	if err != nil {
		if strings.Contains(err.Error(), "already defined") {
			err = fmt.Errorf("%w\n\nStorage %s already exists in storage.cfg. Import it instead: terraform import %s.<name> %s", err, id, storageTypeName, id)
		}
		framework.AddUnable(&resp.Diagnostics, "Create", "storage", id, err)
		return
	}
	r.readInto(ctx, c, id, &plan, &resp.State, &resp.Diagnostics)
}

func (r *storageResource) readInto(ctx context.Context, c *pve.Client, id string, prior *storageModel, st interface {
	Set(context.Context, any) diag.Diagnostics
}, diags *diag.Diagnostics) {
	sc, err := c.StorageConfig(ctx, id)
	if err != nil {
		framework.AddUnable(diags, "Read", "storage", id, err)
		return
	}
	var m storageModel
	m.fromAPI(sc, prior)
	diags.Append(st.Set(ctx, &m)...)
}

func (r *storageResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior storageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	id := prior.Storage.ValueString()
	sc, err := r.PD.SharedStorage(ctx, c, id)
	if errors.Is(err, pve.ErrNotFound) {
		tflog.Warn(ctx, "storage is gone from storage.cfg; removing it from the state", map[string]any{"storage": id})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "storage", id, err)
		return
	}
	var m storageModel
	m.fromAPI(sc, &prior)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *storageResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state storageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	id := state.Storage.ValueString()
	p := updateParams(ctx, &plan, &state)
	if len(p) > 0 {
		// The digest makes PVE refuse when storage.cfg changed since it
		// was read, instead of overwriting someone else's edit.
		cur, err := c.StorageConfig(ctx, id)
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "storage", id, err)
			return
		}
		p.Set("digest", cur.Digest)
		tflog.Info(ctx, "updating storage", map[string]any{"storage": id})
		// A lost answer is read back: storage.cfg's digest moved on when
		// PVE wrote it (a resend would be refused for the digest);
		// unchanged, PVE did not act and it is sent again.
		err = c.WriteVerified(ctx, "storage update "+id, func() error { return c.UpdateStorage(ctx, id, p) }, func() (bool, error) {
			now, err := c.StorageConfig(ctx, id)
			return err == nil && now.Digest != cur.Digest, err
		})
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "storage", id, err)
			return
		}
	}
	r.readInto(ctx, c, id, &plan, &resp.State, &resp.Diagnostics)
}

func (r *storageResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state storageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	id := state.Storage.ValueString()
	tflog.Info(ctx, "removing storage from storage.cfg; its volumes stay on the backend", map[string]any{"storage": id})
	// Sent again on a lost answer: one PVE did makes the second not found.
	if err := c.DeleteStorage(pve.Idempotent(ctx), id); err != nil && !errors.Is(err, pve.ErrNotFound) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "storage", id, err)
	}
}

// ImportState takes the storage id.
func (r *storageResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !storageIDRE.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import a storage by its id, such as local-lvm; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("storage"), req.ID)...)
}
