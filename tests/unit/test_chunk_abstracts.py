"""extractive_abstract: breadcrumbs + the section's most informative sentences, within 100-200 tokens."""

from cairn.chunkers.abstracts import document_idf, extractive_abstract
from cairn.chunkers.tokens import count_tokens
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()
CRUMBS = ["Auth gateway", "Diagnosis"]

DIAGNOSIS = """\
## Diagnosis

Start with the pods themselves. A crash loop or a pod stuck in Pending explains most incidents.
Look at restarts, readiness and the node each pod runs on.

```bash
kubectl -n identity get pods -l app=auth-gateway -o wide
kubectl -n identity describe pod -l app=auth-gateway
kubectl -n identity logs deploy/auth-gateway --since=15m
kubectl -n identity top pods -l app=auth-gateway
```

If several pods restarted in the last hour, read the previous container logs and look for
out-of-memory kills. The gateway is limited to 512 MiB per pod; memory growth usually comes from an
oversized request buffer after a configuration change. The gateway returns 503 when an upstream does
not answer within its timeout and 504 when the token-service is slow. Compare the latency of each
upstream with its budget before blaming the gateway itself. When one upstream is above its budget,
follow that service's runbook instead and keep this incident open as the customer-facing one.
Most gateway incidents follow a change, so list the recent rollouts and the Argo CD sync history.
A configuration change that touched the route table or the TLS settings is the prime suspect.
"""
MITIGATION = """\
## Mitigation

A rolling restart clears stuck connection pools and is safe at any time of day. Roll back a bad
deploy with Argo CD instead of debugging in production. Scale out when the gateway is saturated.
"""


def abstract(text: str = DIAGNOSIS, crumbs=CRUMBS, config: ChunkingConfig = CONFIG) -> str:
    return extractive_abstract(crumbs, text, config, document_idf([DIAGNOSIS, MITIGATION]))


def test_the_abstract_starts_with_the_breadcrumbs_line():
    assert abstract().split("\n")[0] == "Auth gateway > Diagnosis"


def test_the_abstract_of_a_long_section_is_within_the_abstract_band():
    assert count_tokens(DIAGNOSIS) > CONFIG.abstract_max_tokens
    assert CONFIG.abstract_min_tokens <= count_tokens(abstract()) <= CONFIG.abstract_max_tokens


def test_the_abstract_is_made_of_the_section_sentences_in_their_original_order():
    sentences = abstract().split("\n")[1:]
    flat = " ".join(DIAGNOSIS.split())
    positions = [flat.find(sentence) for sentence in sentences]
    assert all(p >= 0 for p in positions)
    assert positions == sorted(positions)


def test_prose_sentences_are_preferred_over_code_lines():
    assert "kubectl" not in abstract()


def test_the_section_heading_is_not_repeated_after_the_breadcrumbs():
    assert "Diagnosis" not in abstract().split("\n", 1)[1]


def test_a_section_shorter_than_the_minimum_is_reproduced_whole():
    short = "## Mitigation\n\nRestart the gateway."
    assert abstract(short, ["Auth gateway", "Mitigation"]) == "Auth gateway > Mitigation\n" + short


def test_the_abstract_never_exceeds_the_maximum_even_with_one_huge_sentence():
    huge = "The gateway " + " ".join(f"upstream{n}" for n in range(600)) + " fails."
    result = abstract(huge)
    assert count_tokens(result) <= CONFIG.abstract_max_tokens
    assert count_tokens(result) >= CONFIG.abstract_min_tokens


def test_sentences_with_terms_rare_in_the_document_are_chosen_first():
    config = ChunkingConfig(abstract_min_tokens=10, abstract_max_tokens=20)
    common = "The gateway restarts the gateway pods."
    section = f"{common} Redis sessions survive because Sentinel fails over replicas. {common}"
    idf = document_idf([section, common, "The gateway restarts pods again."])
    result = extractive_abstract(["Gateway"], section, config, idf)
    assert result == "Gateway\nRedis sessions survive because Sentinel fails over replicas."


def test_the_abstract_is_deterministic():
    assert abstract() == abstract()


def test_idf_is_higher_for_terms_in_fewer_sections():
    idf = document_idf(["gateway restart", "gateway rollback", "gateway scale"])
    assert idf["restart"] > idf["gateway"]


def test_a_sentences_score_is_the_same_whatever_order_its_terms_come_in(monkeypatch):
    """Terms are a set, iterated in an order that changes from one process to the next (string hashing): a plain
    float sum then differed in its last bits, and a tie between two sentences went another way, so the same
    section could get another abstract on another run."""
    import random

    from cairn.chunkers import abstracts

    words = [f"term{n}" for n in range(40)]
    idf = {word: 1.0 + n / 7 for n, word in enumerate(words)}  # values whose sums round differently by order
    candidate = abstracts._Candidate(0, " ".join(words), "prose")
    scores = set()
    for seed in range(30):
        order = random.Random(seed).sample(words, len(words))
        monkeypatch.setattr(abstracts, "terms", lambda text, order=order: order)
        scores.add(abstracts._score(candidate, idf, 1.0))
    assert len(scores) == 1
