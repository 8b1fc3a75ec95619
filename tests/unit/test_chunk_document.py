"""chunk_document end to end: a SourceDocument in, parent sections with ids, abstracts and children out."""

from cairn.chunkers import chunk_document
from cairn.chunkers.tokens import count_tokens
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import ContentType, SourceDocument, SourceType

CONFIG = ChunkingConfig()

# A realistic runbook page (~1,800 tokens): H2/H3 sections, fences, tables, lists.
RUNBOOK = """\
# Auth gateway: elevated 5xx rate

This runbook covers the `AuthGatewayHigh5xxRate` alert for the auth-gateway service, the edge
component that terminates TLS for every customer login and token refresh. Follow it from the top:
the diagnosis steps are ordered from the cheapest check to the most invasive one.

## Overview

The auth-gateway is a stateless Envoy deployment in the `identity` namespace. It validates session
cookies, exchanges refresh tokens with the token-service and forwards authenticated requests to the
account API. Each region runs six replicas behind the regional load balancer, and the deployment is
managed by Argo CD from the `platform/identity` repository. Configuration changes reach production
through the weekly release train unless an emergency change is approved by the identity on-call.

The gateway keeps no local state, so restarting a pod is always safe. Sessions survive a restart
because they are stored in the Redis cluster `identity-sessions`, which the gateway reads through a
connection pool of at most 64 connections per pod.

## Alert meaning

The alert fires when more than 2% of requests served by the gateway return a 5xx status for ten
consecutive minutes in any region. The threshold is deliberately low: a login failure is visible to
customers immediately and support tickets follow within minutes. The alert carries the `region` and
`route` labels, which tell you where to look first.

## Impact

Customers cannot log in, refresh their sessions or reset their passwords. Mobile clients retry token
refreshes aggressively, so an outage of the gateway also multiplies the load on the token-service.
If the error rate stays above 20% for more than fifteen minutes, declare a SEV2 incident and page the
incident commander.

## Diagnosis

### Check the gateway pods

Start with the pods themselves. A crash loop or a pod stuck in `Pending` explains most incidents,
and both are visible in a few seconds. Look at restarts, readiness and the node each pod runs on.

```bash
kubectl -n identity get pods -l app=auth-gateway -o wide
kubectl -n identity describe pod -l app=auth-gateway | grep -A5 "Last State"
kubectl -n identity logs deploy/auth-gateway --since=15m | grep -c " 503 "
```

If several pods restarted in the last hour, read the previous container logs with `--previous` and
look for out-of-memory kills. The gateway is limited to 512 MiB per pod; memory growth usually
comes from an oversized request buffer after a configuration change.

### Check the session store

A saturated connection pool to `identity-sessions` produces 503 errors on every route at once,
while the pods look healthy. The gateway exports the pool usage as a gauge; compare it with the
limit of 64 connections per pod, and check the Redis cluster's own latency at the same time.

```bash
kubectl -n identity exec deploy/auth-gateway -- curl -s localhost:9901/stats | grep redis.pool
redis-cli -h identity-sessions.identity.svc --latency-history -i 5
```

If the pool is exhausted on every pod, the Redis cluster is the bottleneck: page the data platform
on-call and keep the gateway as it is, because restarting it would only drop the sessions in flight.

### Inspect upstream latency

The gateway returns 503 when an upstream does not answer within its timeout and 504 when the
token-service is slow. Compare the latency of each upstream with its budget before blaming the
gateway itself.

| Upstream | Timeout | p99 budget | Dashboard |
|----------|---------|------------|-----------|
| token-service | 800 ms | 300 ms | Identity / Tokens |
| account-api | 1500 ms | 600 ms | Accounts / API |
| identity-sessions (Redis) | 50 ms | 5 ms | Identity / Redis |
| rate-limiter | 100 ms | 20 ms | Edge / Limits |

When one upstream is above its budget, follow that service's runbook instead and keep this
incident open as the customer-facing one. When every upstream is within budget, the problem is in
the gateway: continue with the recent deploys.

### Review recent deploys

Most gateway incidents follow a change. List the recent rollouts and the Argo CD sync history, and
compare the start of the errors with the time of the last sync.

```bash
kubectl -n identity rollout history deploy/auth-gateway
argocd app history identity-auth-gateway --output wide | head -n 5
```

A configuration change that touched the route table or the TLS settings is the prime suspect. A
change to the Envoy image alone rarely causes errors unless it also changed the default buffer
limits.

## Mitigation

### Restart auth-gateway

A rolling restart clears stuck connection pools and is safe at any time of day. It takes about four
minutes per region because the deployment keeps at least five replicas ready.

1. Announce the restart in the incident channel with the region you are about to restart.
2. Run the rollout restart and watch it complete:

   ```bash
   kubectl -n identity rollout restart deploy/auth-gateway
   kubectl -n identity rollout status deploy/auth-gateway --timeout=10m
   ```

3. Watch the 5xx rate on the Identity / Gateway dashboard for five minutes.
4. If the rate does not fall below 2%, restore the previous state and move on to the rollback.

### Roll back a bad deploy

If the errors started with a deploy, roll back instead of debugging in production. Argo CD keeps
the last ten revisions of the application, and a rollback does not require an approved change
during an incident.

```bash
argocd app rollback identity-auth-gateway <REVISION>
argocd app wait identity-auth-gateway --health --timeout 600
```

After the rollback, disable automatic sync so that the next release train does not reapply the
faulty revision, and open a ticket for the owning team with the revision number and the graphs.

### Scale out

When the gateway is healthy but saturated, for example during a marketing campaign, add replicas.
The horizontal pod autoscaler caps the deployment at twelve replicas; raise the cap temporarily
rather than editing the deployment, which Argo CD would revert.

```bash
kubectl -n identity patch hpa auth-gateway -p '{"spec":{"maxReplicas":20}}'
```

Remember to restore the cap after the incident; the change is recorded in the incident timeline.

## Escalation

Escalate when the mitigation steps do not bring the error rate under the threshold within thirty
minutes, or immediately when customer data may be exposed.

| Situation | Who | How |
|-----------|-----|-----|
| Gateway still failing after rollback | Identity on-call | PagerDuty `identity-primary` |
| Token-service latency above budget | Tokens team | PagerDuty `tokens-primary` |
| Suspected credential leak | Security on-call | PagerDuty `security-urgent` |
| Regional load balancer errors | Network on-call | PagerDuty `netops` |

## Verification

The incident is mitigated when the 5xx rate has stayed below 1% for fifteen minutes in every region
and the synthetic login check on the status page is green again. Before you resolve the alert,
confirm that the token-service error rate is back to normal as well, since mobile clients keep
retrying failed refreshes for up to an hour after an outage and can hide a second, smaller problem.
Record the mitigation, the time it took effect and any manual change in the incident timeline.

## Known issues

- After a certificate rotation, pods that started before the rotation keep serving the old chain
  until they restart; a rolling restart fixes it.
- The `route` label is empty for requests rejected by the rate limiter, which makes those errors
  look like gateway errors on the dashboard. Filter them with `route!=""` before drawing conclusions.
- The autoscaler reacts to CPU only, so a slow upstream can exhaust connections long before CPU
  rises; scaling out does not help in that case.
- Synthetic checks run every minute from three locations; a single failed check is not a signal.

## References

- Identity architecture overview in the platform handbook.
- The Envoy documentation on circuit breaking and buffer limits.
- Postmortem of the March login outage, which introduced the 2% threshold.
"""


def document(
    content: str, title: str = "Auth gateway: elevated 5xx rate", content_type=ContentType.RUNBOOK
) -> SourceDocument:
    return SourceDocument(
        document_id="doc-1",
        source_name="wiki",
        source_type=SourceType.WIKI,
        source_uri="wiki://runbooks/auth.md",
        locator="runbooks/auth.md",
        title=title,
        content=content,
        tenant_id="acme",
        access_control_list=["sre"],
        content_type=content_type,
        version_hash="v1",
        created_at=0,
        updated_at=0,
        temporal_start=0,
    )


def in_band(tokens: int, low: int, high: int) -> bool:
    return low <= tokens <= high


def test_a_runbook_page_yields_sections_inside_the_parent_band():
    sections = chunk_document(document(RUNBOOK), CONFIG)
    assert 1500 <= count_tokens(RUNBOOK) <= 3000
    within = [s for s in sections if in_band(s.token_count, 400, 900)]
    assert len(sections) >= 2
    assert len(within) / len(sections) >= 0.9


def test_a_runbook_page_is_cut_at_headings_so_no_section_is_split():
    sections = chunk_document(document(RUNBOOK), CONFIG)
    assert all(s.quality_flags.split_count == 0 for s in sections)
    assert all(s.text.lstrip().startswith("#") for s in sections)


def test_sections_are_ordered_and_count_their_tokens():
    sections = chunk_document(document(RUNBOOK), CONFIG)
    assert [s.section_order for s in sections] == list(range(len(sections)))
    assert all(s.token_count == count_tokens(s.text) for s in sections)
    assert all(s.abstract_token_count == count_tokens(s.abstract) for s in sections)


def test_every_non_blank_body_line_appears_in_exactly_one_section():
    sections = chunk_document(document(RUNBOOK), CONFIG)
    section_lines = [line for s in sections for line in s.text.split("\n") if line.strip()]
    body_lines = [line for line in RUNBOOK.split("\n") if line.strip()]
    assert section_lines == body_lines


def test_every_section_of_the_runbook_has_an_abstract_in_band_starting_with_its_breadcrumbs():
    for section in chunk_document(document(RUNBOOK), CONFIG):
        assert section.abstract.split("\n")[0] == " > ".join(section.breadcrumbs)
        assert in_band(section.abstract_token_count, 100, 200)


def test_children_of_the_runbook_are_within_the_child_band_except_a_tail():
    for section in chunk_document(document(RUNBOOK), CONFIG):
        inner = section.chunks[:-1]
        assert all(in_band(c.token_count, CONFIG.child_min_tokens, CONFIG.child_max_tokens) for c in inner)
        assert section.chunks[-1].token_count <= CONFIG.child_max_tokens


def test_children_cover_their_section_text():
    for section in chunk_document(document(RUNBOOK), CONFIG):
        assert "".join(section.text.split()) == "".join("".join(c.text for c in section.chunks).split())
        assert [c.order for c in section.chunks] == list(range(len(section.chunks)))
        assert all(c.token_count == count_tokens(c.text) for c in section.chunks)


def test_health_scores_lie_between_zero_and_one():
    for section in chunk_document(document(RUNBOOK), CONFIG):
        assert 0.0 < section.quality_flags.chunk_health_score <= 1.0


def test_chunking_is_deterministic():
    first = chunk_document(document(RUNBOOK), CONFIG)
    second = chunk_document(document(RUNBOOK), CONFIG)
    assert first == second


def test_prose_content_types_are_chunked_as_markdown_and_the_others_by_their_layout():
    expected = chunk_document(document(RUNBOOK), CONFIG)
    own_layouts = {ContentType.TERRAFORM, ContentType.YAML, ContentType.CODE, ContentType.AGREEMENT}
    for content_type in set(ContentType) - own_layouts:
        assert chunk_document(document(RUNBOOK, content_type=content_type), CONFIG) == expected
    for content_type in own_layouts:
        assert chunk_document(document(RUNBOOK, content_type=content_type), CONFIG) != expected


def test_an_empty_body_yields_no_sections():
    assert chunk_document(document(""), CONFIG) == []
    assert chunk_document(document("\n  \n\t\n"), CONFIG) == []


def test_crlf_line_endings_chunk_like_lf():
    crlf = chunk_document(document(RUNBOOK.replace("\n", "\r\n")), CONFIG)
    assert crlf == chunk_document(document(RUNBOOK), CONFIG)
    assert all("\r" not in s.text for s in crlf)


def test_unicode_text_and_headings_survive_with_ascii_ids():
    body = (
        "# Café déploiement\n\nLe redémarrage du service « auth » prend 4 minutes. 🚀\n\n"
        "## 再起動\n\n手順：ポッドを再起動します。\n"
    )
    sections = chunk_document(document(body, title="Café"), CONFIG)
    assert len(sections) == 1
    assert sections[0].section_id == "cafe-deploiement"
    assert sections[0].breadcrumbs == ["Café déploiement"]
    assert "手順：ポッドを再起動します。" in sections[0].text and "🚀" in sections[0].text


def test_a_document_with_a_thousand_headings_is_tokenised_in_linear_work_into_sane_sections(monkeypatch):
    """The cost guard is the work done, not a stopwatch: the characters handed to the tokenizer stay a small
    multiple of the document's size (re-counting growing sections would make it grow with the square). A thousand
    headings (38 sections) hold the same bound as ten thousand did, in a tenth of the time: the ratio is about 4
    at either size, while work growing with the square of the page's length would be in the hundreds here."""
    from cairn.chunkers import tokens

    real = tokens.encoding()
    tokenised = []

    class Counting:
        def encode(self, text, **kwargs):
            tokenised.append(len(text))
            return real.encode(text, **kwargs)

        def decode(self, ids):
            return real.decode(ids)

    monkeypatch.setattr(tokens, "encoding", lambda: Counting())
    body = "\n\n".join(
        f"## Step {i}\n\nRestart worker {i} after draining its queue; confirm the lag is below 100 messages."
        for i in range(1_000)
    )
    sections = chunk_document(document(body, title="Big handbook"), CONFIG)
    assert sum(tokenised) < 20 * len(body), (
        f"{sum(tokenised):,} characters tokenised for a {len(body):,}-character page"
    )
    assert all(s.token_count <= CONFIG.parent_max_tokens for s in sections)
    assert sum(in_band(s.token_count, 400, 900) for s in sections) / len(sections) >= 0.99
    assert len({s.section_id for s in sections}) == len(sections)


def test_deeply_nested_lists_chunk_without_recursion_errors():
    depth = 400  # markdown-it nests list tokens; a recursive walker would blow the stack
    body = "# Nested\n\n" + "".join("  " * i + f"- level {i} item with a few words\n" for i in range(depth))
    doc = SourceDocument(
        document_id="n",
        source_name="t",
        source_type=SourceType.WIKI,
        source_uri="file:///n.md",
        locator="n.md",
        title="Nested",
        content=body,
        tenant_id="t",
        access_control_list=["g"],
        content_type=ContentType.DOCUMENT,
        version_hash="v",
        created_at=0,
        updated_at=0,
        temporal_start=0,
    )
    sections = chunk_document(doc, ChunkingConfig())
    joined = "\n".join(s.text for s in sections)
    assert sections and "level 0 item" in joined and f"level {depth - 1} item" in joined
