# invoice-worker: its queue, its database and the IAM role its pods assume.
# Applied from CI by the billing-platform pipeline; state in the billing-tfstate bucket.

terraform {
  required_version = ">= 1.6"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }
  }
  backend "s3" {
    bucket = "acme-billing-tfstate"
    key    = "invoice-worker/terraform.tfstate"
    region = "eu-west-1"
  }
}

provider "aws" {
  region = var.region
  default_tags {
    tags = {
      service = "invoice-worker"
      team    = "billing-platform"
    }
  }
}

locals {
  name = "invoice-requests"
  # five failed receives send a message to the dead-letter queue (see the restart runbook)
  max_receive_count = 5
}

# The dead-letter queue keeps poison invoices for two weeks so that they can be replayed by hand.
resource "aws_sqs_queue" "invoice_requests_dlq" {
  name                      = "${local.name}-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = true
}

# The work queue: a visibility timeout longer than the slowest invoice render (about 90 seconds).
resource "aws_sqs_queue" "invoice_requests" {
  name                       = local.name
  visibility_timeout_seconds = 180
  message_retention_seconds  = 345600
  receive_wait_time_seconds  = 20
  sqs_managed_sse_enabled    = true

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.invoice_requests_dlq.arn
    maxReceiveCount     = local.max_receive_count
  })
}

resource "aws_db_subnet_group" "invoices" {
  name       = "invoices"
  subnet_ids = var.private_subnet_ids
}

# PostgreSQL for invoices. Multi-AZ in production; the ledger export reads the replica.
resource "aws_db_instance" "invoices" {
  identifier                  = "invoices-${var.environment}"
  engine                      = "postgres"
  engine_version              = "16.3"
  instance_class              = var.db_instance_class
  allocated_storage           = 200
  max_allocated_storage       = 1000
  storage_encrypted           = true
  multi_az                    = var.environment == "production"
  db_subnet_group_name        = aws_db_subnet_group.invoices.name
  username                    = "billing_admin"
  manage_master_user_password = true
  backup_retention_period     = 14
  deletion_protection         = true
  performance_insights_enabled = true
}

resource "aws_db_instance" "invoices_replica" {
  count               = var.environment == "production" ? 1 : 0
  identifier          = "invoices-${var.environment}-replica"
  replicate_source_db = aws_db_instance.invoices.identifier
  instance_class      = var.db_instance_class
  storage_encrypted   = true
}

# The role the invoice-worker service account assumes through IRSA: receive and delete on its own
# queue, read its database secret, nothing else.
module "invoice_worker_irsa" {
  source  = "terraform-aws-modules/iam/aws//modules/iam-role-for-service-accounts-eks"
  version = "~> 5.39"

  role_name = "invoice-worker-${var.environment}"
  oidc_providers = {
    main = {
      provider_arn               = var.oidc_provider_arn
      namespace_service_accounts = ["billing:invoice-worker"]
    }
  }
  role_policy_arns = {
    queue = aws_iam_policy.invoice_worker.arn
  }
}

data "aws_iam_policy_document" "invoice_worker" {
  statement {
    actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"]
    resources = [aws_sqs_queue.invoice_requests.arn]
  }
  statement {
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [var.db_secret_arn]
  }
}

resource "aws_iam_policy" "invoice_worker" {
  name   = "invoice-worker-${var.environment}"
  policy = data.aws_iam_policy_document.invoice_worker.json
}
