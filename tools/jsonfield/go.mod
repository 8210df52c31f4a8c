module github.com/pvelab/terraform-provider-pve/tools/jsonfield

go 1.22
