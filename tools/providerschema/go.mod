module github.com/pvelab/terraform-provider-pve/tools/providerschema

go 1.22
