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

data "unleash_role" "admin" {
  name = "Admin"
}

data "unleash_role" "viewer" {
  name = "Viewer"
}

resource "unleash_project" "shop" {
  id          = "shop"
  name        = var.stage == 1 ? "Shop" : "Web shop"
  description = "The shop's flags"
  mode        = var.stage == 1 ? "open" : "protected"
}

resource "unleash_project" "billing" {
  id          = "billing"
  name        = "Billing"
  description = "Invoices"
}

resource "unleash_environment" "staging" {
  name = "staging"
  type = var.stage == 1 ? "test" : "preproduction"
}

resource "unleash_project_environment" "shop_staging" {
  project_id              = unleash_project.shop.id
  environment_name        = unleash_environment.staging.name
  change_requests_enabled = var.stage == 2
  required_approvals      = var.stage == 2 ? 2 : null
}

resource "unleash_project_environment" "billing_staging" {
  project_id       = unleash_project.billing.id
  environment_name = unleash_environment.staging.name
}

resource "unleash_context_field" "region" {
  name        = "region"
  description = var.stage == 1 ? "Where the customer is" : "The customer's region"
  stickiness  = true
  legal_values = [
    {
      value       = "eu"
      description = "Europe"
    },
    {
      value = "us"
    }
  ]
}

resource "unleash_context_field" "plan" {
  name = "plan"
}

resource "unleash_api_token" "shop_client" {
  token_name  = "shop-backend"
  type        = "client"
  projects    = [unleash_project.shop.id]
  environment = unleash_environment.staging.name
}

resource "unleash_api_token" "multi_client" {
  token_name  = "shop-and-billing"
  type        = "client"
  projects    = [unleash_project.shop.id, unleash_project.billing.id]
  environment = "development"
  expires_at  = var.stage == 1 ? "2040-01-01T00:00:00Z" : "2041-06-30T12:00:00Z"
}

resource "unleash_api_token" "all_frontend" {
  token_name  = "web"
  type        = "frontend"
  projects    = ["*"]
  environment = "development"
}

resource "unleash_api_token" "shop_frontend" {
  token_name  = "shop-web"
  type        = "frontend"
  projects    = [unleash_project.shop.id]
  environment = unleash_environment.staging.name
}

resource "unleash_user" "carol" {
  email      = "carol@example.com"
  name       = var.stage == 1 ? "Carol" : "Carol Chen"
  root_role  = data.unleash_role.viewer.id
  send_email = false
}

# The provider updates a service account from its old state rather than
# the plan (service_account_resource.go, Update), so a rename never takes:
# the name stays.
resource "unleash_service_account" "deployer" {
  name      = "Deployer"
  username  = "deployer"
  root_role = data.unleash_role.admin.id
}

resource "unleash_service_account_token" "deployer_ci" {
  service_account_id = unleash_service_account.deployer.id
  description        = "CI"
  expires_at         = "2048-01-01T00:00:00Z"
}
