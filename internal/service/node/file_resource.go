package node

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

const fileTypeName = "pve_node_file"

var (
	_ resource.Resource                     = (*fileResource)(nil)
	_ resource.ResourceWithConfigure        = (*fileResource)(nil)
	_ resource.ResourceWithImportState      = (*fileResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*fileResource)(nil)
	_ resource.ResourceWithConfigValidators = (*fileResource)(nil)
)

// NewFileResource is the constructor the provider registers.
func NewFileResource() resource.Resource {
	return &fileResource{framework.ResourceBase{TypeName: fileTypeName}}
}

type fileResource struct{ framework.ResourceBase }

type fileModel struct {
	ID            types.String `tfsdk:"id"`
	Node          types.String `tfsdk:"node"`
	Path          types.String `tfsdk:"path"`
	Content       types.String `tfsdk:"content"`
	ContentBase64 types.String `tfsdk:"content_base64"`
	Mode          types.String `tfsdk:"mode"`
	Owner         types.String `tfsdk:"owner"`
	Group         types.String `tfsdk:"group"`
	SHA256        types.String `tfsdk:"sha256"`
	RestartUnits  types.Set    `tfsdk:"restart_units"`
	ReloadUnits   types.Set    `tfsdk:"reload_units"`
	DaemonReload  types.Bool   `tfsdk:"daemon_reload"`
	KeepOnDestroy types.Bool   `tfsdk:"keep_on_destroy"`
}

var (
	modeRE = regexp.MustCompile(`^0?[0-7]{3}$`)
	// userRE is a Debian user or group name (adduser's default rule,
	// plus system names such as _chrony).
	userRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
)

// pendingKey marks in private state that the file was written but its
// units were not restarted (or reloaded) yet.
const pendingKey = "units_pending"

func (r *fileResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	unitSet := func(what string) schema.SetAttribute {
		return schema.SetAttribute{
			ElementType:         types.StringType,
			Optional:            true,
			MarkdownDescription: what,
			Validators: []validator.Set{setvalidator.ValueStringsAre(regexValidator{re: unitNameRE, what: unitNameWhat}),
				setvalidator.SizeAtLeast(1)},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A file on a node, such as the reference lab's `/etc/systemd/journal-upload.conf` or a systemd drop-in: " +
			"written atomically over SSH (a temporary file beside it, renamed into place) with its mode and owner, content sent as " +
			"data, never through a shell. The SHA-256 of the file on the node is compared on every refresh, so a file changed or " +
			"removed outside Terraform shows up in the next plan.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>:<path>`."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"path": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Absolute path of the file, under `/etc/` or `/usr/local/` (see the allowed paths above).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{filePathValidator{}},
			},
			"content": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The file's content as text, written byte for byte (no newline is added). Exactly one of `content` and `content_base64`.",
			},
			"content_base64": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The file's content, base64-encoded, for binary files (`filebase64()`).",
				Validators:          []validator.String{base64Validator{}},
			},
			"mode": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("0644"),
				MarkdownDescription: "Permission bits in octal, such as `0640`. Default `0644`.",
				Validators:          []validator.String{regexValidator{re: modeRE, what: "permission bits in octal such as 0644"}},
			},
			"owner": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("root"),
				MarkdownDescription: "Owning user (a name that exists on the node). Default `root`.",
				Validators:          []validator.String{regexValidator{re: userRE, what: "a user name such as root"}},
			},
			"group": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("root"),
				MarkdownDescription: "Owning group (a name that exists on the node). Default `root`.",
				Validators:          []validator.String{regexValidator{re: userRE, what: "a group name such as root"}},
			},
			"sha256": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "SHA-256 of the file on the node (hex). Use it in `pve_node_service.triggers` to restart a service " +
					"when the file changes.",
			},
			"restart_units": unitSet("Units to restart (`systemctl try-restart`) after the file changed, such as " +
				"`[\"systemd-journal-upload.service\"]`. The node does not record it: an import gives it as an option of the " +
				"import ID (`<node>:<path>?restart_units=pve-daily-update.timer`)."),
			"reload_units": unitSet("Units to reload (`systemctl try-reload-or-restart`: a restart for units that cannot reload) " +
				"after the file changed. An import gives it as an option of the import ID (`?reload_units=a.service,b.service`)."),
			"daemon_reload": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Run `systemctl daemon-reload` after the file changed, before restarting units: set it for unit files and drop-ins. " +
					"Import sets it for files under systemd's unit directories (`/etc/systemd/system/`, `/etc/systemd/user/`, `/usr/local/lib/systemd/`).",
			},
			"keep_on_destroy": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Leave the file on the node when the resource is destroyed. An import gives it as an option of the import ID (`?keep_on_destroy=true`).",
			},
		},
	}
}

func (r *fileResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.ExactlyOneOf(path.MatchRoot("content"), path.MatchRoot("content_base64"))}
}

type filePathValidator struct{}

func (filePathValidator) Description(context.Context) string {
	return "an absolute path under /etc/ or /usr/local/ that pve_node_file may manage"
}
func (v filePathValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (filePathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	p := req.ConfigValue.ValueString()
	if why := checkFilePath(p); why != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Path not allowed", fmt.Sprintf("pve_node_file does not manage %q: it %s.", p, why))
	}
}

type base64Validator struct{}

func (base64Validator) Description(context.Context) string { return "standard base64" }
func (v base64Validator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (base64Validator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := base64.StdEncoding.DecodeString(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid content_base64", fmt.Sprintf("content_base64 is not standard base64 (as filebase64() and base64encode() produce): %v.", err))
	}
}

// wantContent is the content the configuration asks for; ok is false
// while it is unknown.
func wantContent(m fileModel) ([]byte, bool) {
	switch {
	case m.Content.IsUnknown() || m.ContentBase64.IsUnknown():
		return nil, false
	case !m.ContentBase64.IsNull():
		b, err := base64.StdEncoding.DecodeString(m.ContentBase64.ValueString())
		return b, err == nil
	}
	return []byte(m.Content.ValueString()), true
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// parseMode reads an octal mode string: permission bits with setuid,
// setgid and sticky (stat's %a), nothing above 07777 (higher bits would
// be file type bits of fs.FileMode).
func parseMode(s string) (fs.FileMode, bool) {
	v, err := strconv.ParseUint(s, 8, 32)
	return fs.FileMode(v), err == nil && v <= 0o7777
}

func (r *fileResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, fileTypeName)
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, fileTypeName)
	r.noteFile(ctx, req) // node_refs.go
	var plan fileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if b, ok := wantContent(plan); ok {
		plan.SHA256 = types.StringValue(sha256Hex(b))
	} else {
		plan.SHA256 = types.StringUnknown()
	}
	if !plan.Node.IsUnknown() && !plan.Path.IsUnknown() {
		plan.ID = types.StringValue(plan.Node.ValueString() + ":" + plan.Path.ValueString())
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

// nodeFile is a file as the node has it.
type nodeFile struct {
	kind         string // stat's %F: "regular file", "symbolic link", ...
	mode         fs.FileMode
	owner, group string
	content      []byte
}

// statNode returns the file at p (nil when there is none); it does not
// follow symbolic links.
func statNode(ctx context.Context, ex *nodeexec.Pool, node, p string) (*nodeFile, error) {
	res, err := ex.Run(ctx, node, nodeexec.Cmd("stat", "-c", "%a|%U|%G|%F", "--", p))
	if err != nil {
		var e *nodeexec.Error
		if errors.As(err, &e) && e.Err == nil && strings.Contains(e.Stderr, "No such file or directory") {
			return nil, nil
		}
		return nil, err
	}
	f, ok := parseStat(string(res.Stdout))
	if !ok {
		return nil, fmt.Errorf("node %s: unexpected stat output %q", node, res.Stdout)
	}
	return f, nil
}

// readNodeFile returns the file with its content (nil when there is
// none).
func readNodeFile(ctx context.Context, ex *nodeexec.Pool, node, p string) (*nodeFile, error) {
	f, err := statNode(ctx, ex, node, p)
	if err != nil || f == nil || !strings.HasPrefix(f.kind, "regular") {
		return f, err
	}
	b, ok, err := readOptionalFile(ctx, ex, node, p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil // removed in between
	}
	f.content = b
	return f, nil
}

// fill sets m's node-side attributes from f, keeping m's spelling of
// values that mean the same.
func fill(m *fileModel, f *nodeFile) {
	m.ID = types.StringValue(m.Node.ValueString() + ":" + m.Path.ValueString())
	m.SHA256 = types.StringValue(sha256Hex(f.content))
	switch {
	case !m.ContentBase64.IsNull():
		m.ContentBase64 = types.StringValue(base64.StdEncoding.EncodeToString(f.content))
	case !m.Content.IsNull() || utf8.Valid(f.content):
		if utf8.Valid(f.content) {
			m.Content = types.StringValue(string(f.content))
		} else {
			// Not text any more: the sha256 shows the change.
			m.Content = types.StringValue(strings.ToValidUTF8(string(f.content), "\uFFFD"))
		}
	default:
		m.ContentBase64 = types.StringValue(base64.StdEncoding.EncodeToString(f.content))
	}
	if cur, ok := parseMode(m.Mode.ValueString()); !ok || cur != f.mode {
		m.Mode = types.StringValue(fmt.Sprintf("%04o", uint32(f.mode)))
	}
	m.Owner, m.Group = types.StringValue(f.owner), types.StringValue(f.group)
}

func setStrings(ctx context.Context, s types.Set) []string {
	var out []string
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	_ = s.ElementsAs(ctx, &out, false)
	sort.Strings(out)
	return out
}

// afterChange runs daemon-reload and the unit restarts and reloads.
func afterChange(ctx context.Context, ex *nodeexec.Pool, node string, m fileModel) error {
	if m.DaemonReload.ValueBool() {
		if err := daemonReload(ctx, ex, node); err != nil {
			return err
		}
	}
	if units := setStrings(ctx, m.RestartUnits); len(units) > 0 {
		tflog.Info(ctx, "restarting units after a file change", map[string]any{"node": node, "units": units})
		if _, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", "try-restart").Arg(units...)); err != nil {
			return err
		}
	}
	if units := setStrings(ctx, m.ReloadUnits); len(units) > 0 {
		tflog.Info(ctx, "reloading units after a file change", map[string]any{"node": node, "units": units})
		if _, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", "try-reload-or-restart").Arg(units...)); err != nil {
			return err
		}
	}
	return nil
}

// privateState is the part of resp.Private the resource uses.
type privateState interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// write brings the file on the node to m, runs the units after a change,
// and returns what the node then has.
func (r *fileResource) write(ctx context.Context, action string, m fileModel, pending bool, priv privateState, diags *diag.Diagnostics) (fileModel, bool) {
	if r.Client(diags) == nil || !framework.RequireNodeExec(r.PD, diags, fileTypeName) {
		return m, false
	}
	ex := r.PD.NodeExec
	node, p := m.Node.ValueString(), m.Path.ValueString()
	fail := func(err error) { framework.AddUnable(diags, action, "file", node+":"+p, err) }
	if why := checkFilePath(p); why != "" {
		fail(fmt.Errorf("pve_node_file does not manage %q: it %s", p, why))
		return m, false
	}
	content, ok := wantContent(m)
	if !ok {
		fail(errors.New("content_base64 is not valid base64"))
		return m, false
	}
	mode, _ := parseMode(m.Mode.ValueString())
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		fail(err)
		return m, false
	}
	defer unlock()
	cur, err := readNodeFile(ctx, ex, node, p)
	if err != nil {
		fail(err)
		return m, false
	}
	if cur != nil && !strings.HasPrefix(cur.kind, "regular") {
		fail(fmt.Errorf("%s on node %s is a %s, not a regular file; pve_node_file does not replace it (for a link, manage the file it points to)", p, node, cur.kind))
		return m, false
	}
	changed := cur == nil || sha256Hex(cur.content) != sha256Hex(content) || cur.mode != mode ||
		cur.owner != m.Owner.ValueString() || cur.group != m.Group.ValueString()
	if changed {
		tflog.Info(ctx, "writing file", map[string]any{"node": node, "path": p, "bytes": len(content)})
		err := ex.WriteFile(ctx, node, nodeexec.File{Path: p, Content: content, Mode: mode,
			Owner: m.Owner.ValueString(), Group: m.Group.ValueString(), MakeDirs: true})
		if err != nil {
			fail(err)
			return m, false
		}
	}
	got, err := readNodeFile(ctx, ex, node, p)
	switch {
	case err != nil:
		fail(err)
		return m, false
	case got == nil:
		fail(fmt.Errorf("%s is missing after writing it", p))
		return m, false
	case sha256Hex(got.content) != sha256Hex(content) || got.mode != mode || got.owner != m.Owner.ValueString() || got.group != m.Group.ValueString():
		fail(fmt.Errorf("%s has sha256 %s, mode %04o, owner %s:%s after writing it; want %s, %04o, %s:%s", p,
			sha256Hex(got.content), uint32(got.mode), got.owner, got.group, sha256Hex(content), uint32(mode), m.Owner.ValueString(), m.Group.ValueString()))
		return m, false
	}
	out := m
	fill(&out, got)
	if changed || pending {
		if err := afterChange(ctx, ex, node, m); err != nil {
			// The file is written; the restart is repeated by the next apply.
			diags.Append(priv.SetKey(ctx, pendingKey, []byte(`true`))...)
			fail(fmt.Errorf("the file is written, but running its units failed (the next apply repeats it): %w", err))
			return out, true
		}
	}
	diags.Append(priv.SetKey(ctx, pendingKey, nil)...)
	return out, true
}

func (r *fileResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan fileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	out, ok := r.write(ctx, "Create", plan, false, resp.Private, &resp.Diagnostics)
	if ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
	}
}

func (r *fileResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan fileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	pending, diags := req.Private.GetKey(ctx, pendingKey)
	resp.Diagnostics.Append(diags...)
	out, ok := r.write(ctx, "Update", plan, len(pending) > 0, resp.Private, &resp.Diagnostics)
	if ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
	}
}

func (r *fileResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state fileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, fileTypeName) {
		return
	}
	node, p := state.Node.ValueString(), state.Path.ValueString()
	f, err := readNodeFile(ctx, r.PD.NodeExec, node, p)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "file", node+":"+p, err)
		return
	}
	if f == nil {
		tflog.Warn(ctx, "the file is gone from the node", map[string]any{"node": node, "path": p})
		resp.State.RemoveResource(ctx)
		return
	}
	if !strings.HasPrefix(f.kind, "regular") {
		resp.Diagnostics.AddWarning("File "+p+" on node "+node+" was replaced",
			fmt.Sprintf("%s is now a %s; the next apply refuses to replace it.", p, f.kind))
		state.SHA256 = types.StringValue("")
	} else {
		fill(&state, f)
	}
	if pending, diags := req.Private.GetKey(ctx, pendingKey); len(pending) > 0 && !diags.HasError() {
		// The units did not run after the last write: plan an update
		// that runs them.
		state.SHA256 = types.StringValue("")
		resp.Diagnostics.AddWarning("Units of "+p+" on node "+node+" did not run after the last change",
			"The last apply wrote the file but restarting or reloading its units failed; the next apply runs them again.")
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *fileResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state fileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, p := state.Node.ValueString(), state.Path.ValueString()
	if state.KeepOnDestroy.ValueBool() {
		tflog.Info(ctx, "keep_on_destroy: leaving the file on the node", map[string]any{"node": node, "path": p})
		return
	}
	if r.Client(&resp.Diagnostics) == nil || !framework.RequireNodeExec(r.PD, &resp.Diagnostics, fileTypeName) {
		return
	}
	ex := r.PD.NodeExec
	fail := func(err error) { framework.AddUnable(&resp.Diagnostics, "Delete", "file", node+":"+p, err) }
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		fail(err)
		return
	}
	defer unlock()
	f, err := statNode(ctx, ex, node, p)
	if err != nil {
		fail(err)
		return
	}
	if f == nil {
		return
	}
	if !strings.HasPrefix(f.kind, "regular") {
		fail(fmt.Errorf("%s is now a %s, not the file Terraform wrote; remove it by hand or forget it with terraform state rm", p, f.kind))
		return
	}
	if err := ex.RemoveFile(ctx, node, p); err != nil {
		fail(err)
		return
	}
	if err := afterChange(ctx, ex, node, state); err != nil {
		fail(fmt.Errorf("the file is removed, but running its units failed: %w", err))
	}
}

// ImportState takes <node>:<path>, optionally followed by
// ?restart_units=a.timer,b.service&reload_units=c.service: what the
// provider does after it writes the file is not on the node, so an import
// that should match a configuration setting them says so (issue #12). The
// content comes from the node (as text when it is valid UTF-8, else as
// content_base64).
func (r *fileResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, opts, err := framework.SplitImportOptions(req.ID, map[string][]string{"restart_units": nil, "reload_units": nil,
		"keep_on_destroy": {"true", "false"}})
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with <node>:<path>[?restart_units=<unit>,...&reload_units=<unit>,...&keep_on_destroy=true]: %v.", fileTypeName, err))
		return
	}
	node, p, ok := strings.Cut(id, ":")
	if !ok || !framework.IsNodeName(node) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with <node>:<path>, such as z2g4a:/etc/systemd/journal-upload.conf; got %q.", fileTypeName, req.ID))
		return
	}
	for _, name := range []string{"restart_units", "reload_units"} {
		v, ok := opts[name]
		if !ok {
			continue
		}
		units, why := importUnits(v)
		if why != "" {
			resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import option %s=%q: %s.", name, v, why))
			return
		}
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), units)...)
	}
	id = node + ":" + p
	if why := checkFilePath(p); why != "" {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("pve_node_file does not manage %q: it %s.", p, why))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("path"), p)...)
	// A unit file or drop-in is only read by systemd after a
	// daemon-reload, so its configuration says daemon_reload = true:
	// adopting one then plans no change.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("daemon_reload"), isUnitFilePath(p))...)
	// keep_on_destroy is the provider's own setting too: a file a package
	// installed (its conffile) is imported with keep_on_destroy=true so
	// that destroying the resource leaves the file.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("keep_on_destroy"), opts["keep_on_destroy"] == "true")...)
}

// unitFileDirs are where systemd looks for units and their drop-ins among
// the directories pve_node_file manages (systemd.unit(5)).
var unitFileDirs = []string{"/etc/systemd/system/", "/etc/systemd/user/", "/usr/local/lib/systemd/system/", "/usr/local/lib/systemd/user/"}

func isUnitFilePath(p string) bool {
	for _, d := range unitFileDirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// importUnits parses the comma-separated unit list of an import option;
// why is set when it is not one.
func importUnits(v string) (units []string, why string) {
	seen := map[string]bool{}
	for _, u := range strings.Split(v, ",") {
		switch {
		case !unitNameRE.MatchString(u):
			return nil, fmt.Sprintf("%q is not %s; separate units with commas", u, unitNameWhat)
		case seen[u]:
			return nil, fmt.Sprintf("%s is given twice", u)
		}
		seen[u] = true
		units = append(units, u)
	}
	return units, ""
}
