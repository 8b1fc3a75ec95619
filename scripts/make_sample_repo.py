"""Build data/git/infra.bundle, the sample git source, from the files in data/git/.

The bundle holds a five-commit history of a small infrastructure repository (Terraform, Kubernetes YAML, a
shell script, Markdown runbooks) with an edit, a rename and a deletion, so that `cairn ingest` and
`cairn backfill --source infra --commits 5` exercise every kind of change:

    data/git/infra/           the tree at the head commit
    data/git/infra-history/   files only an earlier commit held (the runbook before its edit, a deleted one)

Dates and author are fixed, so the same files always give the same commit ids. Re-run after editing
those files: .venv/bin/python scripts/make_sample_repo.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "data" / "git"
HEAD_TREE = ROOT / "infra"
HISTORY = ROOT / "infra-history"
BUNDLE = ROOT / "infra.bundle"
IMAGE_BEFORE, IMAGE_AFTER = "invoice-worker:2025.01.2", "invoice-worker:2025.06.1"


def _git(repo: Path, *args: str, date: str | None = None) -> None:
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(
        ["git", "-c", "user.name=Billing Platform", "-c", "user.email=billing-platform@acme.invalid", *args],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )


def _put(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _commit(repo: Path, message: str, date: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", message, date=date)


def build(bundle: Path = BUNDLE) -> Path:
    head = {
        p.relative_to(HEAD_TREE).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(HEAD_TREE.rglob("*"))
        if p.is_file()
    }
    past = {
        p.relative_to(HISTORY).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(HISTORY.rglob("*"))
        if p.is_file()
    }
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        _git(repo, "init", "--quiet", "--initial-branch=main")
        for path in ("README.md", "terraform/main.tf", "terraform/variables.tf", "terraform/outputs.tf"):
            _put(repo, path, head[path])
        _put(repo, "k8s/invoice-worker.yaml", head["k8s/invoice-worker.yaml"].replace(IMAGE_AFTER, IMAGE_BEFORE))
        _put(repo, "runbooks/invoice-worker-restart.md", past["runbooks/invoice-worker-restart.v1.md"])
        _put(repo, "runbooks/db-credentials.md", head["runbooks/rotate-invoice-db-credentials.md"])
        _put(repo, "runbooks/legacy-vpn-access.md", past["runbooks/legacy-vpn-access.md"])
        _commit(
            repo,
            "Initial invoice-worker infrastructure: queue, database, IRSA role, manifests, runbooks",
            "2025-01-10T09:00:00+00:00",
        )
        _put(repo, "runbooks/invoice-worker-restart.md", head["runbooks/invoice-worker-restart.md"])
        _put(repo, "scripts/drain_queue.sh", head["scripts/drain_queue.sh"])
        _commit(
            repo,
            "Restart runbook: drain the queue before restarting (duplicate invoices, March incident)",
            "2025-03-04T14:30:00+00:00",
        )
        _git(repo, "mv", "runbooks/db-credentials.md", "runbooks/rotate-invoice-db-credentials.md")
        _commit(repo, "Rename the database credentials runbook after what it does", "2025-04-15T08:15:00+00:00")
        _git(repo, "rm", "--quiet", "runbooks/legacy-vpn-access.md")
        _commit(repo, "Remove the legacy VPN runbook: the bastion replaced the VPN", "2025-06-02T11:00:00+00:00")
        _put(repo, "k8s/invoice-worker.yaml", head["k8s/invoice-worker.yaml"])
        _commit(repo, "invoice-worker 2025.06.1", "2025-06-20T16:45:00+00:00")
        built = {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
        if built != set(head):
            sys.exit(f"the scripted history does not end at data/git/infra: {sorted(built ^ set(head))}")
        bundle.parent.mkdir(parents=True, exist_ok=True)
        _git(repo, "bundle", "create", "--quiet", str(bundle.resolve()), "HEAD", "main")
    return bundle


if __name__ == "__main__":
    print(build())
