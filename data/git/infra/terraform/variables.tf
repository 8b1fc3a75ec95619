variable "region" {
  description = "AWS region of the billing account"
  type        = string
  default     = "eu-west-1"
}

variable "environment" {
  description = "production or staging: production gets Multi-AZ and a read replica"
  type        = string
  validation {
    condition     = contains(["production", "staging"], var.environment)
    error_message = "environment must be production or staging"
  }
}

variable "db_instance_class" {
  description = "RDS instance class; db.r6g.large handles the month-end peak of about 40 invoices per second"
  type        = string
  default     = "db.r6g.large"
}

variable "private_subnet_ids" {
  description = "Private subnets of the billing VPC for the database subnet group"
  type        = list(string)
}

variable "oidc_provider_arn" {
  description = "OIDC provider of the EKS cluster, for IRSA"
  type        = string
}

variable "db_secret_arn" {
  description = "Secrets Manager secret holding the invoice_app password (billing/invoice-worker/db)"
  type        = string
}
