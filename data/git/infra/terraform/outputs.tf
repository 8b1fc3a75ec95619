output "queue_url" {
  description = "URL of the invoice-requests queue, set as INVOICE_QUEUE_URL in the Deployment"
  value       = aws_sqs_queue.invoice_requests.url
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue, for the replay tool"
  value       = aws_sqs_queue.invoice_requests_dlq.arn
}

output "db_endpoint" {
  description = "Writer endpoint of the invoices database"
  value       = aws_db_instance.invoices.endpoint
}

output "irsa_role_arn" {
  description = "Role annotated on the invoice-worker service account"
  value       = module.invoice_worker_irsa.iam_role_arn
}
