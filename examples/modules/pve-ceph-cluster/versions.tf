terraform {
  required_version = ">= 1.5"
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}
