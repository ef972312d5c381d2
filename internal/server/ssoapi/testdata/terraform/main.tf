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
resource "unleash_oidc" "simple_oidc_config" {
  enabled           = true
  discover_url      = "http://mock-openid-server:9000/.well-known/openid-configuration"
  secret            = "kinda-sorta-secret"
  client_id         = "client-id"
  auto_create       = true
  default_root_role = 1
}
