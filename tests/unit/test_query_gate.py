"""Steps 1 and 2, before any search: the gate that turns a vague question back with guidance, and the
query-transform hook's extra embedding seeds."""

import json
import re

import pytest

from cairn.query.gate import gate
from cairn.query.transform import seeds
from tests.conftest import REPO, SHARED


# ---- 1. gate ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "help",
        "how do I do it?",
        "the database",
        "what is this",
        "fix the server",
        "is it down",
        "what happened in 2024",
        "why",
        "the edge",
    ],
)
def test_gate_refuses_vague_queries(text):
    assert not gate(text, 3).passed


@pytest.mark.parametrize(
    "text",
    [
        "INC-4521",
        "values.yaml",
        "ops@acme.example",
        "db-1.prod.acme.io",
        "KubePodCrashLooping",
        "how do I fail over ledger-db",
        "restart edge_proxy",
        "kube-apiserver down",
        "OOMKilled",
        "ENOSPC",
        "503 errors",
        "ORA-00600",
        "/var/log/syslog",
        "runbooks/restart.md",
    ],
)
def test_gate_accepts_a_single_id_like_token(text):
    verdict = gate(text, 3)
    assert verdict.passed and verdict.id_like


def test_the_readme_and_makefile_example_queries_all_pass_the_gate():
    text = "\n".join((REPO / name).read_text() for name in ("README.md", "Makefile", "docs/cli.md"))
    examples = set(re.findall(r'cairn query "([^"]+)"', text)) | set(re.findall(r'retrieve\("([^"]+)"', text))
    examples.discard("TEXT")
    assert len(examples) >= 4, examples
    assert [e for e in examples if not gate(e, 3).passed] == []


def test_every_dev_alert_summary_passes_the_gate():
    path = SHARED / "eval" / "dev" / "runbooks" / "prometheus-operator-runbooks.alerts.jsonl"
    if not path.exists():
        pytest.skip("../shared/eval/dev is absent")
    summaries = [json.loads(line)["summary"] for line in path.read_text().splitlines() if line.strip()]
    assert len(summaries) > 100 and [s for s in summaries if not gate(s, 3).passed] == []


def test_gate_counts_content_words_not_stopwords():
    assert gate("ledger primary failover", 3).passed
    assert not gate("how is the ledger", 3).passed
    assert gate("ledger primary down", 3).passed  # "down" is an operational fact, not a stopword


def test_gate_accepts_a_defined_term_but_not_a_capitalised_sentence_start():
    verdict = gate("What is the Determination Date?", 3)
    assert verdict.passed and verdict.id_like == ["Determination Date"]
    assert not gate("what is the determination date", 3).passed
    assert not gate("How Do I fix it?", 3).passed


# ---- 2. transform hook --------------------------------------------------------------------------
def test_transform_adds_seeds_and_falls_back_on_error():
    assert seeds("q", lambda t: f"hypothetical answer to {t}") == (["q", "hypothetical answer to q"], "1 extra seed(s)")

    def broken(text):
        raise RuntimeError("LLM down")

    texts, note = seeds("q", broken)
    assert texts == ["q"] and "RuntimeError" in note
    assert seeds("q", None) == (["q"], "off")


def test_hyde_embeds_the_hypothetical_answer_instead_of_the_question_and_falls_back_to_it():
    hyde = seeds("q", lambda t: f"hypothetical answer to {t}", replace=True)
    assert hyde == (["hypothetical answer to q"], "1 seed(s) instead of the question")
    assert seeds("q", lambda t: "   ", replace=True)[0] == ["q"]  # nothing usable: the question itself

    def broken(text):
        raise RuntimeError("LLM down")

    assert seeds("q", broken, replace=True)[0] == ["q"]


def test_a_symptom_counts_for_the_missing_word_only_when_symptoms_are_on():
    assert gate("Node is unreachable.", 3).passed
    assert not gate("Node is unreachable.", 3, symptoms=False).passed


def test_a_transform_hook_that_hangs_is_left_behind_and_the_question_runs_without_it():
    """Issue #51: a `[query] transform` hook that hung blocked retrieval (no deadline)."""
    import threading

    from cairn.query import transform as hooks

    release = threading.Event()

    def hangs(text: str) -> str:
        release.wait(600)  # a hook stuck on a service that never answers
        return "never used"

    try:
        texts, note = seeds("ledger failover", hangs, timeout=0.05)
        assert (texts, note) == (["ledger failover"], "timed out after 0.05 s: raw query used")
        for _ in range(hooks.MAX_STUCK - 1):  # more stuck calls, up to the bound
            seeds("ledger failover", hangs, timeout=0.01)
        texts, note = seeds("ledger failover", hangs, timeout=0.01)  # the bound reached: not called at all
        assert (texts, note) == (
            ["ledger failover"],
            f"skipped ({hooks.MAX_STUCK} earlier calls still running): raw query used",
        )
    finally:
        release.set()
    for stuck in [t for t in threading.enumerate() if t.name == "cairn-transform"]:
        stuck.join(60)  # the stuck calls end, and give their slots back
    quick = seeds("ledger failover", lambda t: "a failover answer", timeout=60)
    assert quick == (["ledger failover", "a failover answer"], "1 extra seed(s)")
