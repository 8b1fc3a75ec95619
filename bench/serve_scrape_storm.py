"""The scrape-storm row of bench.serve_load (`python -m bench.serve_load --scrape-storm`): the sample corpus, the
feedback store filled to its bound (serve/feedback.py MAX_BYTES, one section in ten marked) before the service
starts, then one client's question p95 alone and while --scrapers clients (in a process of their own, so they
take no time from the measuring client's interpreter) loop on `GET /metrics` without a key, --rounds times in
turn: the ratio of the two p95s per round and its median (goal <= 1.1).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from bench.common import median
from bench.serve_load import SAMPLE_QUESTIONS, Service


def fill_feedback(config: Path) -> dict:
    """The service's feedback store filled to its bound: answers of 5 sections, one section in ten marked."""
    import uuid

    from cairn.schemas.config import load_config
    from cairn.serve import feedback

    store = feedback.FeedbackStore(load_config(config).feedback_file, keep_days=7)
    now, answers = time.time(), 0
    while store.live_bytes() < feedback.MAX_BYTES:
        batch = []
        for _ in range(20_000):
            query_id, answers = uuid.uuid4().hex, answers + 1
            at = now - 86400 + answers * 0.01  # in the window, oldest first
            batch += [(query_id, uuid.uuid4().hex, "bench", int(i == 4), at, None) for i in range(5)]
        batch = [(*row[:5], (answers + n) % 2 if n % 10 == 0 else None) for n, row in enumerate(batch)]
        store._db.executemany("INSERT INTO served VALUES (?, ?, ?, ?, ?, ?)", batch)
        store._db.commit()
    store._db.execute("DROP TABLE marks")  # counted again from the rows at the next open, as an old file is
    store._db.commit()
    rows = store._db.execute("SELECT count(*) FROM served").fetchone()[0]
    marked = store._db.execute("SELECT count(*) FROM served WHERE useful IS NOT NULL").fetchone()[0]
    began = time.perf_counter()  # what every scrape ran before the running counts (14ddc7f's rates()), for scale
    store._db.execute(
        "SELECT injected, useful, count(*) FROM served WHERE useful IS NOT NULL AND at >= ? GROUP BY injected, useful",
        (now - 7 * 86400,),
    ).fetchall()
    group_by_ms = (time.perf_counter() - began) * 1000
    live = store.live_bytes()
    store.close()
    return {"rows": rows, "marked": marked, "live_mb": round(live / 2**20, 1), "old_group_by_ms": round(group_by_ms)}


SCRAPER = """
import http.client, sys, threading
port, clients = int(sys.argv[1]), int(sys.argv[2])
def loop():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while True:
        try:
            conn.request("GET", "/metrics")
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
threads = [threading.Thread(target=loop, daemon=True) for _ in range(clients)]
for t in threads:
    t.start()
sys.stdin.read()  # until the benchmark closes it
"""


def scrape_storm(config: Path, key: str, args: argparse.Namespace) -> dict:
    """Question p95 of one client alone, then with --scrapers clients looping on /metrics, --rounds in turn."""
    filled = fill_feedback(config)
    print(f"feedback store: {filled}", file=sys.stderr)
    service = Service(config, key, 1)
    rounds = []
    try:
        service.warm_up(SAMPLE_QUESTIONS)
        for _ in range(args.rounds):
            alone = service.load(1, SAMPLE_QUESTIONS, args.seconds)
            scrapers = subprocess.Popen(
                [sys.executable, "-c", SCRAPER, str(service.port), str(args.scrapers)], stdin=subprocess.PIPE
            )
            try:
                time.sleep(1.0)  # the scrapers connected and looping
                stormed = service.load(1, SAMPLE_QUESTIONS, args.seconds)
            finally:
                scrapers.stdin.close()  # type: ignore[union-attr]
                scrapers.kill()
                scrapers.wait(timeout=60)
            scraped = service.ask("GET", "/metrics")
            rounds.append(
                {
                    "alone": alone,
                    "scraped": stormed,
                    "p95_ratio": round(stormed["p95_ms"] / alone["p95_ms"], 3),
                    "metrics_bytes": len(scraped[1]),
                }
            )
            print(f"scrape storm round: {rounds[-1]}", file=sys.stderr)
    finally:
        service.stop()
    return {
        "feedback": filled,
        "scrapers": args.scrapers,
        "rounds": rounds,
        "median_p95_ratio": round(median([r["p95_ratio"] for r in rounds]), 3),
        "goal": 1.1,
    }
