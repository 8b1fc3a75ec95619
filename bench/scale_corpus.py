"""bench.scale's synthetic wiki: short runbook, postmortem and how-to pages of an organisation's teams.

Page i is a pure function of (seed, i): a corpus of n pages is the first n pages of any larger one, the same
on every machine and run (random.Random seeded by a string hashes it with SHA-512, whatever PYTHONHASHSEED).
Each page has YAML front matter, an H1 title and 2-3 H2 sections, each a short paragraph and a list (bullets,
numbered steps, a timeline or a checklist), some with a fenced command block; inline code spans name
commands, metrics and config keys. Names and numbers are drawn from lists of services, components, symptoms,
causes and commands, so BM25 sees a large vocabulary and the model distinct texts. Pages sit in
team/service/kind/ folders (12 teams x 16 services x 3 kinds).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SOURCE = {"name": "wiki", "type": "wiki", "tenant": "bench", "acl": ["all"]}  # the corpus's source in a config
TEAMS = ["payments", "identity", "platform", "data", "search", "messaging"]
TEAMS += ["storage", "edge", "billing", "mobile", "ml", "security"]
ROLES = ["api", "worker", "gateway", "scheduler", "indexer", "ledger", "sync", "proxy"]
ROLES += ["exporter", "router", "cache", "consumer", "writer", "auth", "notifier", "batch"]
KINDS = ["runbooks", "postmortems", "howto"]
COMPONENTS = ["postgres", "kafka", "redis", "elasticsearch", "etcd", "envoy", "nginx", "rabbitmq", "cassandra"]
COMPONENTS += ["vault", "consul", "coredns", "istio sidecar", "grpc pool", "jvm heap", "ingress controller"]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1"]
# (alert suffix, symptom with a {n} threshold, the metric it reads)
SYMPTOMS = [
    ("HighLatency", "p99 latency above {n} ms", "http_request_duration_seconds"),
    ("HighErrorRate", "5xx ratio above {n}%", "http_requests_total"),
    ("ConsumerLag", "consumer lag above {n}k messages", "kafka_consumergroup_lag"),
    ("DiskPressure", "disk usage above {n}%", "node_filesystem_avail_bytes"),
    ("CrashLooping", "{n} pods in CrashLoopBackOff", "kube_pod_container_status_restarts_total"),
    ("OOMKilled", "{n} containers OOMKilled in an hour", "container_memory_working_set_bytes"),
    ("CertExpiry", "a certificate expiring in {n} days", "probe_ssl_earliest_cert_expiry"),
    ("PoolExhausted", "connection pool saturated for {n} minutes", "db_pool_connections_in_use"),
    ("ReplicationLag", "replication lag above {n} s", "pg_replication_lag_seconds"),
    ("QueueBacklog", "queue depth above {n}k jobs", "job_queue_depth"),
    ("DnsTimeouts", "DNS lookups timing out for {n}% of requests", "coredns_dns_request_duration_seconds"),
    ("BudgetBurn", "error budget burning {n}x faster than allowed", "slo_error_budget_burn_rate"),
]
CAUSES = [
    "a config change that lowered `max_connections` to {n}",
    "a schema migration that locked the `{table}` table for {n} minutes",
    "an expired intermediate certificate in the {component} chain",
    "a noisy neighbour on node pool `pool-{n}`",
    "a retry storm from {other} after a deploy",
    "a memory leak in the {component} client after the upgrade to {n}.{m}",
    "an index rebuild that saturated disk IO on {component}",
    "a feature flag rolled out to {n}% of traffic without a canary",
    "a cron job that ran twice and doubled the load on {component}",
    "a stale DNS record left behind by the {region} failover",
]
TABLES = ["orders", "accounts", "sessions", "invoices", "events", "tokens", "shipments", "audit_log"]
TASKS = [
    "rotate the {component} credentials",
    "fail over {component} to {region}",
    "drain a node running {service}",
    "scale {service} ahead of a launch",
    "restore {component} from a snapshot",
    "replay dead-lettered messages for {service}",
    "roll back a bad deploy of {service}",
    "rebuild the search index of {service}",
]
ACTIONS = [
    "restart the `{service}` deployment with `kubectl -n {team} rollout restart deploy/{service}`",
    "check the `{metric}` panel on the {service} dashboard for the last {n} minutes",
    "read the logs with `kubectl -n {team} logs deploy/{service} --since={n}m`",
    "scale `{service}` to {n} replicas until the backlog clears",
    "compare the current release with the previous one using `shipyard releases diff {service}`",
    "look for slow queries with `select * from pg_stat_activity where state = 'active'`",
    "confirm {component} health with `curl -s http://{service}.{team}.svc:8080/healthz`",
    "page the {other} on-call if the error rate stays above {n}%",
    "raise `{key}` from {n} to {m} in the {service} Helm values",
    "move traffic away from {region} with the edge weights in `edge-routes`",
    "open an incident in #inc-{team} and post the dashboard link",
    "pause the `{service}-batch` cron job until {component} recovers",
]
COMMANDS = [
    "kubectl -n {team} get pods -l app={service} -o wide",
    "kubectl -n {team} describe deploy/{service}",
    "kafka-consumer-groups --bootstrap-server kafka:9092 --describe --group {service}",
    "redis-cli -h {service}-cache info memory",
    "vault kv get secret/{team}/{service}",
    "etcdctl endpoint health --cluster",
    "psql -h {service}-db -c 'select count(*) from {table}'",
    "df -h /var/lib/{team}",
]
KEYS = ["pool_size", "timeout_ms", "max_inflight", "batch_size", "retry_budget", "cache_ttl_s", "worker_threads"]
OPENERS = [
    "This page is for the {service} on-call.",
    "{service} is owned by the {team} team and runs in {region}.",
    "Most of these incidents start within an hour of a change to {service}.",
    "The {component} behind {service} is shared with {other}, so check both.",
    "Alerts for {service} route to the {team} primary through PagerDuty.",
]
FILLERS = [
    "The usual trigger is {cause}.",
    "Expect {symptom} while this lasts.",
    "The {metric} metric shows it first, about {n} minutes before customers notice.",
    "In {region} the same steps apply, with the {component} endpoints of that region.",
    "Do not delete the {table} rows by hand; the {service} reconciler rewrites them.",
    "If {other} is also degraded, treat both as one incident.",
]
SECTIONS = {
    "runbooks": ["Symptoms", "Diagnosis", "Mitigation", "Escalation"],
    "postmortems": ["Summary", "Timeline", "Root cause", "Action items"],
    "howto": ["Overview", "Steps", "Verification", "Rollback"],
}
CONTENT_TYPES = {"runbooks": "runbook", "postmortems": "postmortem", "howto": "document"}


@dataclass(frozen=True)
class Page:
    """One generated page: where it goes under the corpus root, its Markdown, and what questions can name."""

    path: str
    text: str
    service: str
    subject: str  # the symptom, incident or task the page is about


def service_name(team: str, role_index: int) -> str:
    return f"{team}-{ROLES[role_index % len(ROLES)]}"


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace(" ", "-").split("-"))


def page(seed: int, index: int) -> Page:
    """Page `index` of the corpus `seed`: the same text whatever the corpus size."""
    rng = random.Random(f"cairn-scale:{seed}:{index}")
    team, kind = rng.choice(TEAMS), rng.choice(KINDS)
    service = service_name(team, rng.randrange(len(ROLES)))
    other = service_name(rng.choice(TEAMS), rng.randrange(len(ROLES)))
    alert, symptom, metric = rng.choice(SYMPTOMS)
    facts = {
        "team": team,
        "service": service,
        "other": other,
        "metric": metric,
        "component": rng.choice(COMPONENTS),
        "region": rng.choice(REGIONS),
        "table": rng.choice(TABLES),
        "key": rng.choice(KEYS),
    }
    facts["symptom"] = fill(rng, symptom, facts)
    facts["cause"] = fill(rng, rng.choice(CAUSES), facts)
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if kind == "runbooks":
        subject = facts["symptom"]
        title = f"{camel(service)}{alert}: {subject} on {service}"
    elif kind == "postmortems":
        subject = f"{service} incident of {day}"
        title = f"Postmortem: {subject}, {facts['symptom']}"
    else:
        subject = fill(rng, rng.choice(TASKS), facts)
        title = f"How to {subject}"
    headings = SECTIONS[kind][: rng.randint(2, 3)]
    body = [section(rng, heading, facts) for heading in headings]
    front = (
        f"---\ntitle: {json.dumps(title)}\nservice: {service}\ncontent_type: {CONTENT_TYPES[kind]}\n"
        f"environment: production\ntags: [{team}, {alert.lower()}, {facts['component'].split()[0]}]\n"
        f"updated: {day}\n---\n\n"
    )
    slug = "-".join(subject.replace("`", "").replace("%", "pct").split()[:6]).lower().strip(".,:")
    path = f"{team}/{service}/{kind}/{index:06d}-{''.join(c for c in slug if c.isalnum() or c == '-')}.md"
    text = front + f"# {title}\n\n{fill(rng, rng.choice(OPENERS), facts)}\n\n" + "\n".join(body)
    return Page(path, text, service, subject)


def fill(rng: random.Random, template: str, facts: dict[str, str]) -> str:
    n, m = rng.choice([2, 3, 5, 8, 10, 15, 20, 30, 45, 60, 90, 120, 250, 500]), rng.randint(2, 64)
    return template.format(n=n, m=m, **facts)


def section(rng: random.Random, heading: str, facts: dict[str, str]) -> str:
    """One H2 section: two or three sentences, then a list of 2-5 items, sometimes a command block."""
    sentences = " ".join(fill(rng, s, facts) for s in rng.sample(FILLERS, rng.randint(2, 3)))
    items = [fill(rng, a, facts) for a in rng.sample(ACTIONS, rng.randint(2, 5))]
    if heading == "Timeline":
        start = rng.randint(0, 20)
        lines = [f"- {start + i:02d}:{rng.randint(0, 59):02d} UTC: {item}" for i, item in enumerate(items)]
    elif heading == "Action items":
        lines = [f"- [ ] {item[0].upper()}{item[1:]} (owner: {facts['team']})" for item in items]
    elif heading in ("Mitigation", "Steps", "Rollback"):
        lines = [f"{i}. {item[0].upper()}{item[1:]}." for i, item in enumerate(items, 1)]
    else:
        lines = [f"- {item[0].upper()}{item[1:]}." for item in items]
    text = f"## {heading}\n\n{sentences}\n\n" + "\n".join(lines) + "\n"
    if rng.random() < 0.4:
        commands = [fill(rng, c, facts) for c in rng.sample(COMMANDS, rng.randint(1, 3))]
        text += "\n```bash\n" + "\n".join(commands) + "\n```\n"
    return text


def pages(seed: int, count: int) -> Iterator[Page]:
    return (page(seed, i) for i in range(count))


def write_corpus(root: Path, seed: int, count: int) -> int:
    """The corpus's `count` pages written under `root`; the bytes written."""
    written = 0
    for p in pages(seed, count):
        target = root / p.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(p.text, encoding="utf-8")
        written += len(p.text.encode("utf-8"))
    return written


def changes(seed: int, count: int, share: float = 0.01) -> tuple[list[int], list[int]]:
    """The pages one re-run edits and the pages it deletes: `share` of the corpus each (at least one), disjoint."""
    k = max(1, round(count * share))
    picked = random.Random(f"cairn-scale-changes:{seed}:{count}").sample(range(count), min(count, 2 * k))
    return sorted(picked[:k]), sorted(picked[k:])


def edited(text: str, seed: int, index: int) -> str:
    """The page with one more item in its last section: one section's texts change, the others stay."""
    rng = random.Random(f"cairn-scale-edit:{seed}:{index}")
    note = f"Revised after the review of {rng.choice(REGIONS)}: keep `{rng.choice(KEYS)}` at {rng.randint(2, 999)}."
    return text.rstrip("\n") + f"\n\n- {note}\n"


def questions(seed: int, count: int, asked: int) -> list[str]:
    """`asked` questions a person might type about pages of the corpus (seeded, drawn over all its pages)."""
    rng = random.Random(f"cairn-scale-questions:{seed}:{count}")
    forms = ["what to do about {subject} on {service}", "{subject}", "{service} {subject} how to fix"]
    asked_of = [page(seed, rng.randrange(count)) for _ in range(asked)]
    return [rng.choice(forms).format(subject=p.subject.replace("`", ""), service=p.service) for p in asked_of]
