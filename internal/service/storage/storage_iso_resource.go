package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/isofs"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const storageISOTypeName = "pve_storage_iso"

// defaultISOTimeout fits a 1.5 GB installer image over a slow line.
const defaultISOTimeout = 60 * time.Minute

var (
	_ resource.Resource                   = (*storageISOResource)(nil)
	_ resource.ResourceWithConfigure      = (*storageISOResource)(nil)
	_ resource.ResourceWithImportState    = (*storageISOResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*storageISOResource)(nil)
	_ resource.ResourceWithValidateConfig = (*storageISOResource)(nil)
)

// NewStorageISOResource is the constructor the provider registers.
func NewStorageISOResource() resource.Resource {
	return &storageISOResource{framework.ResourceBase{TypeName: storageISOTypeName}}
}

type storageISOResource struct{ framework.ResourceBase }

// replaceIfRecorded replaces the image when a source attribute changes,
// but not when state has none yet: an imported image adopts the
// configuration's source without being fetched again.
const replaceIfRecordedDesc = "Changing it replaces the image (not after an import, when state has no source yet)."

func replaceStringIfRecorded() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull()
	}, replaceIfRecordedDesc, replaceIfRecordedDesc)
}

func (r *storageISOResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	sources := path.Expressions{path.MatchRoot("url"), path.MatchRoot("source_file"), path.MatchRoot("files")}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An ISO image on a file-based storage (`dir`, `nfs`, `cifs`, `cephfs`; the storage's `content` must include `iso`), " +
			"such as an installer for a VM's CD drive (`pve_vm`'s `cdrom`). Exactly one source: `url`, which the node downloads, " +
			"`source_file`, which the provider uploads, or `files`, from which the provider builds a small ISO 9660 image and uploads it " +
			"(an answer file for PVE's automated installer, cloud-init `cidata`). An image whose file is already on the storage is refused " +
			"at plan: import it instead.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>/<volume>`, such as `z2g4a/local:iso/proxmox-ve_9.1-1.iso`."),
			"node": framework.NodeAttribute("Node that downloads or receives the image; for a shared storage any node that has it.", framework.NodeReplaces),
			"storage": schema.StringAttribute{
				Required: true, MarkdownDescription: "Storage id, such as `local`. Changing it replaces the image.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{stringvalidator.RegexMatches(storageIDRE, "must start with a letter, end with a letter or digit, and hold only letters, digits, '-', '_' and '.'")},
			},
			"file_name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "File name on the storage: letters, digits, `.`, `_`, `-`, ending in `.iso` or `.img`. Changing it replaces the image.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{framework.StringCheck("letters, digits, '.', '_', '-', ending in .iso or .img", "Invalid ISO file name", checkISOFileName)},
			},
			"url": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "HTTP(S) URL the node downloads the image from. " + replaceIfRecordedDesc,
				PlanModifiers:       []planmodifier.String{replaceStringIfRecorded()},
				Validators: []validator.String{
					stringvalidator.ExactlyOneOf(sources...),
					stringvalidator.RegexMatches(httpURLRE, "must be an http:// or https:// URL"),
				},
			},
			"verify_certificates": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Verify the TLS certificate of an `https` `url` (PVE's default: true). Only with `url`.",
			},
			"source_file": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Path of a local file the provider uploads. The provider does not read the file at plan: set `checksum` to have a changed file replace the image. " + replaceIfRecordedDesc,
				PlanModifiers:       []planmodifier.String{replaceStringIfRecorded()},
			},
			"files": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Files (name → content) of an ISO 9660 image the provider builds and uploads, such as " +
					"`{ \"answer.toml\" = ... }` with `volume_label = \"PROXMOX-AIS\"` for PVE's automated installer. Names: lower-case letters, " +
					"digits, `.`, `_`, `-`, at most 30 characters; at most 64 files, 16 MiB in all. " + replaceIfRecordedDesc,
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.MapRequest, resp *mapplanmodifier.RequiresReplaceIfFuncResponse) {
					resp.RequiresReplace = !req.StateValue.IsNull()
				}, replaceIfRecordedDesc, replaceIfRecordedDesc)},
				Validators: []validator.Map{mapvalidator.SizeBetween(1, 64), mapvalidator.KeysAre(framework.StringCheck("a file name of lower-case letters, digits, '.', '_', '-'", "Invalid file name in files", isofs.CheckFileName)), mapvalidator.AlsoRequires(path.MatchRoot("volume_label"))},
			},
			"volume_label": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Volume label of the image built from `files` (upper case, such as `PROXMOX-AIS` or `CIDATA`). Only with `files`. " + replaceIfRecordedDesc,
				PlanModifiers:       []planmodifier.String{replaceStringIfRecorded()},
				Validators: []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("files")),
					framework.StringCheck("an ISO 9660 volume label: upper-case letters, digits, '_', '-'", "Invalid volume_label", isofs.CheckLabel)},
			},
			"checksum": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Expected checksum (hex) of the `url` or `source_file` image; PVE refuses a file that does not match. " + replaceIfRecordedDesc,
				PlanModifiers:       []planmodifier.String{replaceStringIfRecorded()},
				Validators:          []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("checksum_algorithm")), stringvalidator.RegexMatches(hexRE, "must be a hexadecimal digest")},
			},
			"checksum_algorithm": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Algorithm of `checksum`: `md5`, `sha1`, `sha224`, `sha256`, `sha384` or `sha512`.",
				Validators:          []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("checksum")), stringvalidator.OneOf("md5", "sha1", "sha224", "sha256", "sha384", "sha512")},
			},
			"volume": schema.StringAttribute{Computed: true, MarkdownDescription: "Volume id, such as `local:iso/proxmox-ve_9.1-1.iso`, for `pve_vm`'s `cdrom`.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"size":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in bytes.", PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

func (r *storageISOResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m storageISOModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.VerifyCertificates.IsNull() && m.URL.IsNull() && !m.URL.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("verify_certificates"), "verify_certificates needs url",
			"verify_certificates applies to the node's download of url; remove it, or set url.")
	}
	if !m.Checksum.IsNull() && !m.Files.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("checksum"), "checksum does not apply to files",
			"The provider builds the image from files and has PVE verify its SHA-256 itself; remove checksum and checksum_algorithm.")
	}
	if !m.FileName.IsNull() && !m.FileName.IsUnknown() && !m.Files.IsNull() && !strings.HasSuffix(strings.ToLower(m.FileName.ValueString()), ".iso") {
		resp.Diagnostics.AddAttributeError(path.Root("file_name"), "file_name of an image built from files must end in .iso",
			fmt.Sprintf("The provider builds an ISO 9660 image from files; name it %q.", strings.TrimSuffix(m.FileName.ValueString(), ".img")+".iso"))
	}
}

// ModifyPlan refuses, before anything runs, to create an image whose file
// is already on the storage: PVE's upload would overwrite it, and the
// destroy of this resource would then delete a file it did not make.
//
// A replacement is planned in two calls, the second as a create: the
// first records the image it replaces, so the second lets its file be.
func (r *storageISOResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	var plan storageISOModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Node.IsUnknown() || plan.Storage.IsUnknown() || plan.FileName.IsUnknown() {
		return
	}
	node, volid := plan.Node.ValueString(), plan.volid()
	if !req.State.Raw.IsNull() {
		// The framework hands ModifyPlan no RequiresReplace: decide as the
		// attributes' plan modifiers do.
		var prior storageISOModel
		resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
		if prior.replacedBy(&plan) {
			r.PD.RecordPlan(framework.PlannedChange{Kind: storageISOTypeName, ID: isoID(prior.Node.ValueString(), prior.volid()), Action: framework.PlanDestroy})
		}
		return
	}
	// Recorded under its own kind: a create must not hide the destroy
	// record of the image it replaces (one record per kind and id).
	all := r.PD.RecordPlan(framework.PlannedChange{Kind: storageISOTypeName + " create", ID: isoID(node, volid), Action: framework.PlanCreate})
	for _, c := range framework.Changes(all, storageISOTypeName, framework.PlanDestroy) {
		if c.ID == isoID(node, volid) {
			return
		}
	}
	c, err := r.PD.NodeClient(ctx, node)
	found := false
	if err == nil {
		_, found, err = r.find(ctx, c, node, plan.Storage.ValueString(), volid)
	}
	if err != nil {
		// The node or storage may be made by this apply; PVE's own
		// refusal then comes at apply.
		tflog.Debug(ctx, "cannot list the storage's ISO images at plan", map[string]any{"error": err.Error()})
		return
	}
	if found {
		resp.Diagnostics.AddAttributeError(path.Root("file_name"), "ISO image "+volid+" already exists",
			fmt.Sprintf("Storage %s on node %s already has %s. Creating this resource would overwrite it and destroying it would delete "+
				"a file Terraform did not make. Import it (terraform import %s.<name> %s, or an import block), or choose another file_name.",
				plan.Storage.ValueString(), node, volid, storageISOTypeName, isoID(node, volid)))
	}
}

func (r *storageISOResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan storageISOModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, plan.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultISOTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node, id := plan.Node.ValueString(), isoID(plan.Node.ValueString(), plan.volid())
	t := plan.transfer()
	var upid string
	var err error
	switch {
	case !plan.URL.IsNull():
		verify := plan.VerifyCertificates.IsNull() || plan.VerifyCertificates.ValueBool()
		tflog.Info(ctx, "node downloads ISO image", map[string]any{"id": id, "url": plan.URL.ValueString()})
		upid, err = c.DownloadURL(ctx, t, plan.URL.ValueString(), verify)
	case !plan.SourceFile.IsNull():
		src := plan.SourceFile.ValueString()
		fi, serr := os.Stat(src)
		if serr != nil {
			resp.Diagnostics.AddAttributeError(path.Root("source_file"), "Unable to read source_file "+src, serr.Error())
			return
		}
		upid, err = c.Upload(ctx, t, fi.Size(), func() (io.ReadCloser, error) { return os.Open(src) })
	default:
		img, sum, d := plan.image(ctx)
		resp.Diagnostics.Append(d...)
		if resp.Diagnostics.HasError() {
			return
		}
		t.Checksum, t.ChecksumAlgorithm = sum, "sha256"
		upid, err = c.Upload(ctx, t, int64(len(img)), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil })
	}
	if _, err = c.Await(ctx, upid, err); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "ISO image", id, err)
		return
	}
	v, found, err := r.find(ctx, c, node, plan.Storage.ValueString(), plan.volid())
	if err != nil || !found {
		if err == nil {
			err = errors.New("PVE finished the transfer but does not list the image on the storage")
		}
		framework.AddUnable(&resp.Diagnostics, "Create", "ISO image", id, err)
		return
	}
	plan.fromVolume(node, v)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

// find is the image as the storage lists it.
func (r *storageISOResource) find(ctx context.Context, c *pve.Client, node, storage, volid string) (pve.StorageVolume, bool, error) {
	vols, err := c.StorageFiles(ctx, node, storage, "iso")
	if err != nil {
		return pve.StorageVolume{}, false, err
	}
	for _, v := range vols {
		if v.VolID == volid {
			return v, true, nil
		}
	}
	return pve.StorageVolume{}, false, nil
}

func (r *storageISOResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var st storageISOModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, st.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	node := st.Node.ValueString()
	v, found, err := r.find(ctx, c, node, st.Storage.ValueString(), st.volid())
	if err != nil && !storageGone(err) {
		framework.AddUnable(&resp.Diagnostics, "Read", "ISO image", isoID(node, st.volid()), err)
		return
	}
	if !found {
		tflog.Warn(ctx, "ISO image no longer exists; removing it from state", map[string]any{"id": isoID(node, st.volid())})
		resp.State.RemoveResource(ctx)
		return
	}
	st.fromVolume(node, v)
	resp.Diagnostics.Append(resp.State.Set(ctx, st)...)
}

// storageGone is PVE's answer for a storage that was removed (or never
// was on the node): the image went with it.
func storageGone(err error) bool {
	return pve.IsNotFound(err) || strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "is not available on node")
}

// Update only records a source after an import (or a changed
// verify_certificates or timeout): every other change replaces the image.
func (r *storageISOResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior storageISOModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.Volume, plan.Size = prior.ID, prior.Volume, prior.Size
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *storageISOResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var st storageISOModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, st.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	timeout, diags := st.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node, volid := st.Node.ValueString(), st.volid()
	_, found, err := r.find(ctx, c, node, st.Storage.ValueString(), volid)
	if err == nil && !found || err != nil && storageGone(err) {
		return
	}
	if err == nil {
		upid, derr := c.DeleteVolume(ctx, node, volid)
		_, err = c.Await(ctx, upid, derr)
	}
	if err != nil && !pve.IsNotFound(err) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "ISO image", isoID(node, volid), err)
	}
}

func (r *storageISOResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, storage, file, err := parseISOID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("storage"), storage)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("file_name"), file)...)
}

// checkISOFileName refuses a name PVE would change or refuse, naming the
// one to use instead.
func checkISOFileName(name string) error {
	if isoFileNameRE.MatchString(name) {
		return nil
	}
	fix := normalizedISOName(name)
	if !isoFileNameRE.MatchString(fix) {
		fix = strings.TrimSuffix(fix, ".") + ".iso"
	}
	return fmt.Errorf("%q is not a name PVE keeps: it must hold only letters, digits, '.', '_' and '-' (PVE replaces anything else, and "+
		"drops directories) and end in .iso or .img (PVE refuses other extensions for ISO images): use %q", name, fix)
}
