"""Steps 1 and 2, before any search: the gate that turns a vague question back with guidance, and the
query-transform hook's extra embedding seeds."""

import json
import re

import pytest

from cairn.query.filters import check_question
from cairn.query.gate import IndexEvidence, TermUse, gate, guidance, is_specific, judge
from cairn.query.transform import seeds
from cairn.schemas.fields import MAX_TEXT
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


# ---- 1b. the gate asks the index about a question of few words (#53) -----------------------------------
def index_of(total: int, passages: dict[str, int], services=(), heading="", example="Alertmanager › Silences"):
    """What query/specific.py would read: `passages` per word among `total` readable passages."""

    def read(terms):
        uses = [TermUse(t, passages.get(t, 0), t in services) for t in terms]
        return IndexEvidence(total, uses, heading, example=example)

    return read


@pytest.mark.parametrize("text", ["pushgateway", "what is a histogram", "when should I use the pushgateway"])
def test_a_short_question_with_a_word_rare_in_the_index_is_searched(text):
    index = index_of(2000, {"pushgateway": 4, "histogram": 30, "use": 300})
    verdict = judge(text, 3, index=index, share=0.05)
    assert verdict.passed and verdict.specific and "specific word" in verdict.reason


def test_a_short_question_of_words_common_in_the_index_gets_guidance_with_the_indexs_own_example():
    verdict = judge("the metrics", 3, index=index_of(2000, {"metrics": 900}), share=0.05)
    assert not verdict.passed and verdict.example == "Alertmanager › Silences"
    assert "'metrics' in 900 of 2000 passages" in verdict.reason and "too short" not in verdict.reason
    said = guidance(verdict.example)
    assert "'Alertmanager › Silences'" in said and "ledger-db" not in said  # not the sample corpus's example
    assert "ledger-db" not in guidance()


def test_a_word_absent_from_the_index_and_a_service_name_are_specific():
    assert is_specific(TermUse("sourdough", 0), 2000, 0.05)  # searched: the floors say nothing answers it
    assert is_specific(TermUse("billing", 600, service=True), 2000, 0.05)
    assert is_specific(TermUse("pgbouncer", 3), 20, 0.05)  # a tiny index: three passages are one topic
    assert not is_specific(TermUse("restart", 9), 21, 0.05)


def test_a_word_counted_to_its_cap_is_never_specific_however_large_the_index():
    # 133k passages: 5% is 6,650, over the 1,000 a word is counted to; a word in half the index read "1000"
    big = 133_000
    assert not is_specific(TermUse("the", 1000, capped=True), big, 0.05)
    assert is_specific(TermUse("pushgateway", 40), big, 0.05)
    assert is_specific(TermUse("billing", 1000, service=True, capped=True), big, 0.05)
    verdict = judge("error", 3, index=lambda t: IndexEvidence(big, [TermUse("error", 1000, capped=True)]))
    assert not verdict.passed and "'error' in 1000+" in verdict.reason


def test_two_common_words_rare_together_are_searched():
    def read(terms):
        return IndexEvidence(2000, [TermUse("major", 300), TermUse("incident", 900)], together=40)

    verdict = judge("major incident", 3, index=read, share=0.05)
    assert verdict.passed and verdict.reason == "its words together (40 of 2000 passages)"
    assert not judge("major incident", 3, index=lambda t: IndexEvidence(2000, read(t).uses, together=400)).passed


def test_two_words_making_up_a_heading_are_searched():
    verdict = judge("query log", 3, index=index_of(2000, {"query": 500, "log": 400}, heading="Query log"))
    assert verdict.passed and verdict.reason == "the words of the heading 'Query log'"


def test_a_long_question_of_two_distinct_words_is_judged_on_its_words_not_its_length():
    text = "basic auth " * (MAX_TEXT // len("basic auth "))  # about 64 KB: as long as a question may be
    assert check_question(text) == text
    rare = judge(text, 3, index=index_of(2000, {"basic": 80, "auth": 12}))
    assert rare.passed and rare.terms == ["basic", "auth"]
    common = judge(text, 3, index=index_of(2000, {"basic": 800, "auth": 700}))
    assert not common.passed and "2 distinct content word(s), none specific" in common.reason


def test_without_the_index_the_word_count_alone_decides():
    assert not judge("pushgateway", 3).passed
    assert judge("ledger primary failover", 3, index=lambda terms: pytest.fail("not asked")).passed


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
