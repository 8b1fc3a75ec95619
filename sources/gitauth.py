"""The credentials of an http(s) clone URL, kept off the disk and off git's command line.

`git clone https://user:token@host/repo.git` writes the URL, token included, into the mirror's config and
shows it in `ps` (the command line of git and of its git-remote-https child). So git is given the URL
without its user info, and the user name and password reach git only through the environment of the git
processes that talk to the remote, read back by a one-off credential helper. The empty `credential.helper=`
first drops the helpers of the user's own config, so none of them stores the token either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

_HELPER = (
    '!f() { test "$1" = get && printf "username=%s\\npassword=%s\\n" "$CAIRN_GIT_USERNAME" "$CAIRN_GIT_PASSWORD"; }; f'
)
REMOTE_COMMANDS = frozenset({"clone", "fetch", "ls-remote"})  # the git commands that talk to the remote


@dataclass(frozen=True)
class RemoteAuth:
    url: str  # what git is given: never with user info when it is an http(s) URL
    env: dict[str, str] = field(default_factory=dict)  # CAIRN_GIT_USERNAME / CAIRN_GIT_PASSWORD, or nothing

    def options(self) -> list[str]:
        """The `-c` options for a git command that talks to the remote (none without credentials)."""
        return ["-c", "credential.helper=", "-c", f"credential.helper={_HELPER}"] if self.env else []


def split_credentials(repo: str) -> RemoteAuth:
    """An http(s) URL's user info moved out of the URL (percent-decoded); anything else unchanged."""
    try:
        parts = urlsplit(repo)
    except ValueError:
        return RemoteAuth(repo)
    if parts.scheme.lower() not in ("http", "https") or "@" not in parts.netloc:
        return RemoteAuth(repo)  # ssh URLs, scp-like addresses, local paths and bundles: as before
    userinfo = parts.netloc.rpartition("@")[0]
    username, _, password = userinfo.partition(":")
    start = len(parts.scheme) + len("://")
    clean = repo[:start] + repo[start + len(userinfo) + 1 :]  # the rest of the URL exactly as written
    return RemoteAuth(clean, {"CAIRN_GIT_USERNAME": unquote(username), "CAIRN_GIT_PASSWORD": unquote(password)})
