"""Gap alerts (query.confidence.gaps): a requested word no returned text contains, compared as words a user
would call the same: case, plurals and endings aside, compounds joined by - _ / or written apart."""

from __future__ import annotations

import pytest

from cairn.query.confidence import gaps

# (query, the returned texts joined, the gaps expected)
CASES = [
    ("proxy timeouts", "The edge-proxy drops idle connections after the timeout.", []),
    ("edge proxy restart", "Restart the edge-proxy pods one at a time.", []),
    ("edge-proxy restart", "Restart the edge proxy pods one at a time.", []),
    ("edge_proxy restart", "restart the edge-proxy deployment", []),
    ("edge-proxy restart", "restart the edge_proxy deployment", []),
    ("Edge-Proxy RESTART", "restart the edge-proxy deployment", []),
    ("restart edge-proxy", "restart the ingress deployment", ["edge-proxy"]),
    ("edge-proxy restart", "restart the edge router", ["edge-proxy"]),  # one part is not the compound
    ("ledger-db failover", "Fail over the ledger database: promote the replica.", ["ledger-db", "failover"]),
    ("ledger-db failover", "ledger-db failover: promote the replica", []),
    ("ledger db failover", "ledger-db failover: promote the replica", []),
    ("proxies", "each proxy holds a pool", []),
    ("proxy", "both proxies hold a pool", []),
    ("caches", "flush the cache", []),
    ("cache", "the caches are flushed", []),
    ("reloading config", "reload the config with SIGHUP", []),
    ("reload configs", "reloading the config with SIGHUP", []),
    ("restarted pods", "restart the pod", []),
    ("failing probes", "the probe fails", []),
    ("kafka consumer lag", "consumer lags behind the partition leader", ["kafka"]),
    ("kafka consumer lag", "Kafka consumers lag", []),
    ("disk pressure eviction", "kubelet evicts pods under disk pressure", []),
    ("disk pressure eviction", "kubelet restarts pods under disk pressure", ["eviction"]),
    ("node not ready", "the node is ready again", []),  # a negation is never a missing topic
    ("certificate expiry", "the certificates expire in 30 days", []),
    ("certificate expiry", "the certificates are renewed", ["expiry"]),
    ("DNS resolution errors", "dns resolution error rate", []),
    ("TLS handshake", "the tls handshake failed", []),
    ("etcd quorum", "etcd lost quorum", []),
    ("etcd quorum", "the database lost quorum", ["etcd"]),
    ("KubePodCrashLooping", "alert KubePodCrashLooping fires when", []),
    ("KubePodCrashLooping", "pods crash looping", ["kubepodcrashlooping"]),
    ("rotate credentials", "credential rotation", []),
    ("KubePodCrashLooping", "alert KubePodNotReady fires when", ["kubepodcrashlooping"]),
    ("INC-1234 postmortem", "postmortem of INC-1234", []),
    ("INC-1234 postmortem", "postmortem of INC-1235", ["inc-1234"]),
    ("runbooks/restart.md", "see runbooks/restart.md", []),
    ("v1.2 upgrade", "upgrade to v1.2", []),
    ("v1.2 upgrade", "upgrade to v1.3", ["v1.2"]),
    ("queue backlog", "the queues' backlogs grow", []),
    ("memory leaks", "a memory leak in the worker", []),
]


@pytest.mark.parametrize("query, text, expected", CASES, ids=[c[0] + " | " + c[1][:30] for c in CASES])
def test_gaps_treat_case_plurals_endings_and_compounds_as_the_same_words(query, text, expected):
    assert gaps(query, [text]) == expected


def test_gaps_look_across_every_returned_text():
    assert gaps("edge-proxy kafka", ["the edge proxy", "kafka brokers"]) == []
    assert gaps("edge-proxy kafka", ["the edge", "proxy and kafka"]) == []  # the parts, anywhere in the answer
