package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/isofs"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// storageISOModel is pve_storage_iso: one ISO image on a file storage,
// downloaded by the node, uploaded from a file, or built from files.
type storageISOModel struct {
	ID                 types.String   `tfsdk:"id"`
	Node               types.String   `tfsdk:"node"`
	Storage            types.String   `tfsdk:"storage"`
	FileName           types.String   `tfsdk:"file_name"`
	URL                types.String   `tfsdk:"url"`
	VerifyCertificates types.Bool     `tfsdk:"verify_certificates"`
	SourceFile         types.String   `tfsdk:"source_file"`
	Files              types.Map      `tfsdk:"files"`
	VolumeLabel        types.String   `tfsdk:"volume_label"`
	Checksum           types.String   `tfsdk:"checksum"`
	ChecksumAlgorithm  types.String   `tfsdk:"checksum_algorithm"`
	Volume             types.String   `tfsdk:"volume"`
	Size               types.Int64    `tfsdk:"size"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

// isoFileNameRE is a name PVE keeps as given: normalize_content_filename
// leaves it alone and the iso content check accepts its extension.
var isoFileNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]+\.(?i:iso|img)$`)

var (
	notContentFileChar = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)
	httpURLRE          = regexp.MustCompile(`^https?://\S+$`)
	hexRE              = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// normalizedISOName is PVE's normalize_content_filename, to suggest the
// name PVE would store instead of a refused one.
func normalizedISOName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return notContentFileChar.ReplaceAllString(name, "_")
}

func (m *storageISOModel) volid() string {
	return m.Storage.ValueString() + ":iso/" + m.FileName.ValueString()
}

func isoID(node, volid string) string { return node + "/" + volid }

// parseISOID splits an import ID `<node>/<storage>:iso/<file>`.
func parseISOID(id string) (node, storage, file string, err error) {
	node, volid, ok := strings.Cut(id, "/")
	storage, name, ok2 := strings.Cut(volid, ":iso/")
	if !ok || !ok2 || node == "" || storage == "" || !isoFileNameRE.MatchString(name) {
		return "", "", "", fmt.Errorf("expected <node>/<storage>:iso/<file>, such as z2g4a/local:iso/proxmox-ve_9.1-1.iso; got %q", id)
	}
	return node, storage, name, nil
}

// transfer is the request of the image's source.
func (m *storageISOModel) transfer() pve.FileTransfer {
	return pve.FileTransfer{
		Node: m.Node.ValueString(), Storage: m.Storage.ValueString(), Content: "iso", FileName: m.FileName.ValueString(),
		Checksum: m.Checksum.ValueString(), ChecksumAlgorithm: m.ChecksumAlgorithm.ValueString(),
	}
}

// image builds the ISO 9660 image of files, with its SHA-256 so PVE
// verifies the upload.
func (m *storageISOModel) image(ctx context.Context) ([]byte, string, diag.Diagnostics) {
	files := map[string]string{}
	diags := m.Files.ElementsAs(ctx, &files, false)
	if diags.HasError() {
		return nil, "", diags
	}
	raw := make(map[string][]byte, len(files))
	for k, v := range files {
		raw[k] = []byte(v)
	}
	img, err := isofs.Build(m.VolumeLabel.ValueString(), raw)
	if err != nil {
		diags.AddError("Unable to build ISO image "+m.FileName.ValueString(), err.Error())
		return nil, "", diags
	}
	sum := sha256.Sum256(img)
	return img, hex.EncodeToString(sum[:]), diags
}

// fromVolume records what PVE lists.
func (m *storageISOModel) fromVolume(node string, v pve.StorageVolume) {
	m.ID = types.StringValue(isoID(node, v.VolID))
	m.Volume = types.StringValue(v.VolID)
	m.Size = types.Int64Value(v.Size)
}

// replacedBy is whether plan replaces the image in state m: another
// place, or a source that differs from the one state recorded.
func (m *storageISOModel) replacedBy(plan *storageISOModel) bool {
	if !m.Node.Equal(plan.Node) || !m.Storage.Equal(plan.Storage) || !m.FileName.Equal(plan.FileName) {
		return true
	}
	for _, a := range [][2]attr.Value{{m.URL, plan.URL}, {m.SourceFile, plan.SourceFile}, {m.Files, plan.Files}, {m.VolumeLabel, plan.VolumeLabel}, {m.Checksum, plan.Checksum}} {
		if !a[0].IsNull() && !a[0].Equal(a[1]) {
			return true
		}
	}
	return false
}
