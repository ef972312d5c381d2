terraform {
  required_providers {
    unleash = {
      source = "Unleash/unleash"
    }
  }
}

provider "unleash" {
  base_url      = "http://127.0.0.1:4243"
  authorization = "*:*.tf-admin-secret"
}

variable "stage" {
  type    = number
  default = 1
}

data "unleash_role" "editor" {
  name = "Editor"
}

data "unleash_role" "viewer" {
  name = "Viewer"
}

data "unleash_role" "member" {
  name = "Member"
}

data "unleash_permission" "segments" {
  name = "CREATE_SEGMENT"
}

data "unleash_permission" "prod_switch" {
  name        = "UPDATE_FEATURE_ENVIRONMENT"
  environment = "production"
}

data "unleash_permission" "update_feature" {
  name = "UPDATE_FEATURE"
}

resource "unleash_user" "alice" {
  email      = "alice@example.com"
  name       = var.stage == 1 ? "Alice" : "Alice Anders"
  root_role  = var.stage == 1 ? data.unleash_role.viewer.id : data.unleash_role.editor.id
  send_email = false
}

resource "unleash_user" "bob" {
  username  = "bob"
  email     = "bob@example.com"
  password  = "bob-password-123"
  root_role = data.unleash_role.editor.id
}

resource "unleash_role" "prod_switcher" {
  name        = "Prod switcher"
  type        = "custom"
  description = "Switches flags in production"
  permissions = concat([
    { name = data.unleash_permission.prod_switch.name, environment = "production" },
    { name = "CREATE_FEATURE_STRATEGY", environment = "production" },
    { name = data.unleash_permission.update_feature.name },
  ], var.stage == 1 ? [] : [{ name = "DELETE_FEATURE_STRATEGY", environment = "production" }])
}

resource "unleash_role" "segment_keeper" {
  name        = "Segment keeper"
  type        = "root-custom"
  description = "Keeps segments"
  permissions = [
    { name = data.unleash_permission.segments.name },
    { name = "UPDATE_SEGMENT" },
  ]
}

resource "unleash_group" "shop" {
  name         = "shop-team"
  description  = var.stage == 1 ? "The shop's engineers" : "The shop's engineers and Bob"
  mappings_sso = ["shop-engineers"]
  users        = var.stage == 1 ? [tonumber(unleash_user.alice.id)] : [tonumber(unleash_user.alice.id), tonumber(unleash_user.bob.id)]
  root_role    = tonumber(unleash_role.segment_keeper.id)
}

resource "unleash_service_account" "ci" {
  username  = "ci-bot"
  name      = "CI"
  root_role = data.unleash_role.viewer.id
}

resource "unleash_project_access" "default" {
  project = "default"
  roles = var.stage == 1 ? [
    { role = tonumber(unleash_role.prod_switcher.id), users = [tonumber(unleash_user.bob.id)], groups = [tonumber(unleash_group.shop.id)] },
    { role = data.unleash_role.member.id, users = [unleash_service_account.ci.id], groups = [] },
    ] : [
    { role = tonumber(unleash_role.prod_switcher.id), users = [tonumber(unleash_user.bob.id)], groups = [tonumber(unleash_group.shop.id)] },
  ]
}

data "unleash_user" "alice" {
  email = unleash_user.alice.email
}

data "unleash_user" "bob_by_id" {
  id = unleash_user.bob.id
}

output "alice_role" {
  value = data.unleash_user.alice.root_role
}
