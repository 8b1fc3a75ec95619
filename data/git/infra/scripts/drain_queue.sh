#!/usr/bin/env bash
# Pause or resume receiving on an invoice queue, and wait until nothing is in flight.
# Usage: drain_queue.sh QUEUE            pause and wait (prints "drained")
#        drain_queue.sh --resume QUEUE   resume receiving
set -euo pipefail

TIMEOUT_SECONDS=900

queue_url() {
  aws sqs get-queue-url --queue-name "$1" --query QueueUrl --output text
}

in_flight() {
  aws sqs get-queue-attributes --queue-url "$1" \
    --attribute-names ApproximateNumberOfMessagesNotVisible \
    --query 'Attributes.ApproximateNumberOfMessagesNotVisible' --output text
}

set_paused() {
  kubectl -n billing patch configmap invoice-worker --type merge -p "{\"data\":{\"receive_paused\":\"$1\"}}"
}

main() {
  if [[ "${1:-}" == "--resume" ]]; then
    set_paused false
    echo "resumed $2"
    return
  fi
  local url waited=0
  url="$(queue_url "$1")"
  set_paused true
  while [[ "$(in_flight "$url")" != "0" ]]; do
    if (( waited >= TIMEOUT_SECONDS )); then
      echo "still in flight after ${TIMEOUT_SECONDS}s: page the billing platform secondary" >&2
      exit 1
    fi
    sleep 10
    waited=$((waited + 10))
  done
  echo drained
}

main "$@"
