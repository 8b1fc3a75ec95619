"""flows.progress: a line on stderr where no terminal shows a bar, at most one per interval, each source's end."""

from __future__ import annotations

from cairn.flows import progress


def test_lines_report_each_sources_end_and_throttle_in_between(capsys):
    progress.set_progress_display("lines")
    display = progress.start()
    display.update("wiki", 1, 3)  # within the interval: silent
    display.update("wiki", 3, 3)  # the end of a source: always said
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cairn: wiki: 3/3 documents (")
    display.every = 0.0
    display.update("git", 1, 4)
    line = capsys.readouterr().err
    assert "git: 1/4 documents" in line and "s left)" in line  # mid-source: the time left at this rate
    progress.set_progress_display("off")
    silent = progress.start()
    silent.update("wiki", 3, 3)
    assert capsys.readouterr().err == ""


def test_a_sources_work_is_said_before_its_first_batch(capsys):
    progress.set_progress_display("lines")
    display = progress.start()
    display.update("wiki", 0, 17)  # the plan is known: said at once, whatever the interval
    display.update("empty", 0, 0)  # nothing to index: nothing to say
    assert capsys.readouterr().err == "cairn: wiki: 0/17 documents to index\n"
    progress.set_progress_display("off")


def simulate(text_counts: list[int], batch: int, seconds_per_text: float, slice_texts: int = 32):
    """A source's documents embedded batch by batch at a steady rate, as embed_texts tells it: each batch's texts
    in slices (0 before the first); yields (the estimate, now, the true seconds left) after each slice."""
    estimate = progress.Estimate(len(text_counts))
    total_texts, now, embedded = sum(text_counts), 1000.0, 0
    for first in range(0, len(text_counts), batch):
        texts = sum(text_counts[first : first + batch])
        documents = len(text_counts[first : first + batch])
        for done in range(0, texts, slice_texts):
            estimate.embedding(documents, done, texts, now)
            step = min(slice_texts, texts - done)
            now += step * seconds_per_text
            embedded += step
            estimate.embedding(documents, done + step, texts, now)
            yield estimate, now, (total_texts - embedded) * seconds_per_text, embedded / total_texts


def test_the_time_left_holds_within_a_quarter_once_a_tenth_is_embedded():
    import random

    chance = random.Random(7)
    counts = [chance.randint(3, 30) for _ in range(60)]  # pages of very different sizes, as a wiki's are
    checked = 0
    for estimate, now, truth, share in simulate(counts, batch=8, seconds_per_text=0.05):
        if 0.1 <= share < 1.0 and truth > 0:
            left = estimate.seconds_left(now)
            assert left is not None and abs(left - truth) <= 0.25 * truth, (share, left, truth)
            checked += 1
    assert checked > 10


def test_nothing_embedded_yet_is_no_estimate_and_a_steady_source_is_exact():
    estimate = progress.Estimate(10)
    assert estimate.seconds_left(5.0) is None and estimate.texts_expected == 0
    estimate.embedding(2, 0, 20, now=0.0)
    estimate.embedding(2, 10, 20, now=1.0)  # 10 texts a second; 10 texts a document
    assert estimate.texts_expected == 100 and estimate.seconds_left(1.0) == 9.0
    estimate.embedding(2, 20, 20, now=2.0)
    estimate.embedding(3, 0, 30, now=2.0)  # the next batch: the one before it counted as done
    assert estimate.texts_done == 20 and estimate.texts_expected == 100 and estimate.seconds_left(2.0) == 8.0


def test_the_lines_say_the_texts_embedded_with_their_rate_and_time_left(capsys):
    progress.set_progress_display("lines")
    display = progress.start()
    display.update("wiki", 0, 4)
    progress.embedding(2, 0, 40)  # routed to the running display; nothing embedded yet: nothing said
    progress.embedding(2, 32, 40)  # the first texts: said at once
    progress.embedding(2, 40, 40)  # within the interval: silent
    display.close()
    progress.embedding(2, 40, 40)  # after the run: nobody's to show
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "cairn: wiki: 0/4 documents to index" and len(lines) == 2
    assert lines[1].startswith("cairn: wiki: 32 of about 80 texts embedded (") and "s left)" in lines[1]
    progress.set_progress_display("off")


def test_the_models_load_in_the_first_slice_does_not_slow_the_estimate():
    estimate = progress.Estimate(4)
    estimate.embedding(4, 0, 64, now=0.0)
    estimate.embedding(4, 32, 64, now=12.0)  # 32 texts in 12 s: 10 of them the model's load
    estimate.embedding(4, 48, 64, now=13.0)  # then 16 texts a second
    assert estimate.rate(13.0) == 16.0 and estimate.seconds_left(13.0) == 1.0
