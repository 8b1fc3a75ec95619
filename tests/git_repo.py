"""Real git repositories for the tests, built by scripted commits with fixed dates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str, date: str | None = None) -> str:
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
        if date:
            env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        done = subprocess.run(
            [
                "git",
                "-c",
                "user.name=Test Author",
                "-c",
                "user.email=test@example.invalid",
                "-c",
                "protocol.file.allow=always",
                *args,
            ],
            cwd=self.root,
            env=env,
            check=True,
            capture_output=True,
        )
        return done.stdout.decode().strip()

    def write(self, path: str, text: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        (target.write_bytes if isinstance(text, bytes) else target.write_text)(text)

    def commit(self, message: str, date: str) -> str:
        self.git("add", "-A")
        self.git("commit", "--quiet", "-m", message, date=date)
        return self.git("rev-parse", "HEAD")

    def bundle(self, target: Path) -> Path:
        self.git("bundle", "create", "--quiet", str(target), "--all")
        return target
