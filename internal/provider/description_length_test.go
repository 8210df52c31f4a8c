package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// maxDescriptionWords bounds a type's schema description: a summary that
// `terraform providers schema` and editors show. Longer prose belongs in
// templates/resources/<name>.md.tmpl or templates/data-sources/<name>.md.tmpl,
// which scripts/docs.sh puts below it on the type's page.
const maxDescriptionWords = 150

func TestTypeDescriptionsStayShort(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	check := func(typeName, description string) {
		if n := len(strings.Fields(description)); n > maxDescriptionWords {
			t.Errorf("%s: schema description has %d words (at most %d); move all but the summary to its template in templates/",
				typeName, n, maxDescriptionWords)
		}
	}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "pve"}, &meta)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		check(meta.TypeName, sr.Schema.MarkdownDescription)
	}
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		var meta datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "pve"}, &meta)
		var sr datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sr)
		check(meta.TypeName, sr.Schema.MarkdownDescription)
	}
}
