package framework

import (
	"strings"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// NodeDescription is the description of a plain `node` attribute.
const NodeDescription = "Node name, such as `z2g4a`."

// NodeChange is what changing a resource's node does.
type NodeChange int

const (
	// NodeReplaces: changing the node replaces the resource
	// (RequiresReplace).
	NodeReplaces NodeChange = iota
	// NodeInPlace: the resource handles a changed node itself (moves,
	// refuses it at plan, or only sends its requests elsewhere); its
	// description says which.
	NodeInPlace
)

// NodeAttribute is a resource's required `node`: a PVE node name
// (NodeName), described by description (NodeDescription when empty).
// With NodeReplaces, changing it replaces the resource, and the
// description says so unless it already says what changing it does.
func NodeAttribute(description string, change NodeChange) schema.StringAttribute {
	if description == "" {
		description = NodeDescription
	}
	a := schema.StringAttribute{
		Required:            true,
		MarkdownDescription: description,
		Validators:          []validator.String{NodeName()},
	}
	if change == NodeReplaces {
		a.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplace()}
		if !strings.Contains(strings.ToLower(description), "changing it") {
			a.MarkdownDescription += " Changing it replaces the resource."
		}
	}
	return a
}

// IDAttribute is a resource's computed `id`, kept from the state in plans
// (an object's id does not change), described by description (its
// format, such as "`<node>/<name>`.").
func IDAttribute(description string) schema.StringAttribute {
	return schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: description,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// DataSourceNodeAttribute is a data source's `node`: a PVE node name
// (NodeName), required or optional, described by description
// (NodeDescription when empty).
func DataSourceNodeAttribute(description string, required bool) dsschema.StringAttribute {
	if description == "" {
		description = NodeDescription
	}
	return dsschema.StringAttribute{
		Required:            required,
		Optional:            !required,
		MarkdownDescription: description,
		Validators:          []validator.String{NodeName()},
	}
}
