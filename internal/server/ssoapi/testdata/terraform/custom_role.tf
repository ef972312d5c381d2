terraform {
  required_providers {
    unleash = {
      source = "Unleash/unleash"
    }
  }
}
provider "unleash" {
  base_url      = "http://127.0.0.1:47392"
  authorization = "*:*.tf-admin-secret"
}
variable "stage" {
  type    = number
  default = 1
}
# Stage 2: a custom root role, made by Terraform, is the default root role
# of people single sign-on creates.
resource "unleash_role" "auditor" {
  count       = var.stage == 2 ? 1 : 0
  name        = "Auditor"
  type        = "root-custom"
  description = "Reads roles"
  permissions = [{ name = "READ_ROLE" }]
}
resource "unleash_oidc" "simple_oidc_config" {
  enabled           = true
  discover_url      = "http://mock-openid-server:9000/.well-known/openid-configuration"
  secret            = "kinda-sorta-secret"
  client_id         = var.stage == 1 ? "client-id" : "client-id-2"
  auto_create       = true
  default_root_role = var.stage == 1 ? 1 : unleash_role.auditor[0].id
}
