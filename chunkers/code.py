"""Code and configuration layouts: Terraform, YAML and source code -> units, one per top-level block.

Each layout finds the blocks a reader navigates by (a Terraform `resource`, a YAML document or top-level
key, a function or class) and hands each to the shared packer as one unit that opens a section, with its
leading comments attached and its name as the heading path:

    Terraform  ("resource", "aws_s3_bucket.logs")    breadcrumbs: file > block type > name
    YAML       ("Deployment web", "spec")             breadcrumbs: file > document > key path
    code       ("def restart_service",)               breadcrumbs: file > definition

Small sibling blocks are merged by the packer (merge_count says so), a block larger than the band's width
is cut between lines (its continuation pieces become ".part-N" sections), so every layout lands in the
same token SLA as Markdown. Invariant: every non-blank line of the file lands in exactly one unit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cairn.chunkers.blocks import group_balanced
from cairn.chunkers.tokens import count_tokens
from cairn.chunkers.units import Unit, piece_budget
from cairn.schemas.config import ChunkingConfig


@dataclass
class _Block:
    lines: list[str]
    path: tuple[str, ...]  # () for text outside any block (a file header, stray lines)


def _units(blocks: list[_Block], config: ChunkingConfig) -> list[Unit]:
    budget = piece_budget(config)
    units: list[Unit] = []
    current: tuple[str, ...] = ()
    for block in blocks:
        text = "\n".join(block.lines).strip("\n")
        if not text.strip():
            continue
        opens = bool(block.path)
        if opens:
            current = block.path
        sizes = [count_tokens(line) + 1 for line in block.lines]
        groups = group_balanced(sizes, budget) if sum(sizes) > budget else [(0, len(block.lines))]
        for n, (a, b) in enumerate(groups):
            piece = "\n".join(block.lines[a:b]).strip("\n")
            if piece.strip():
                units.append(
                    Unit(piece, count_tokens(piece), "code", current, len(current), section_start=opens and n == 0)
                )
    return units


def _attach_comments(lines: list[str], starts: list[int], is_comment: Callable[[str], bool]) -> list[int]:
    """Move each block start up over the comment lines (and blank lines between them) right above it."""
    moved = []
    floor = 0
    for start in starts:
        s = start
        while s - 1 >= floor and (
            is_comment(lines[s - 1]) or (not lines[s - 1].strip() and s - 2 >= floor and is_comment(lines[s - 2]))
        ):
            s -= 1
        while s < start and not lines[s].strip():
            s += 1
        moved.append(s)
        floor = start + 1
    return moved


def _cut(lines: list[str], starts: list[int], paths: Sequence[tuple[str, ...]]) -> list[_Block]:
    """Blocks from sorted start lines: text before the first start is an unnamed block."""
    blocks = []
    if not starts or starts[0] > 0:
        blocks.append(_Block(lines[: starts[0] if starts else len(lines)], ()))
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(lines)
        blocks.append(_Block(lines[start:end], paths[i]))
    return blocks


# ---- Terraform ----------------------------------------------------------------------------------

_TF_BLOCK = re.compile(r'^([a-z_]+)((?:\s+(?:"[^"]*"|[A-Za-z0-9_.-]+))*)\s*\{')
_TF_COMMENT = re.compile(r"^\s*(#|//|/\*|\*)")
_TfState = dict[str, str | bool | None]  # what a line leaves open: "heredoc" (its marker), "block_comment"


def _tf_depth_changes(line: str, state: _TfState) -> int:
    """Net brace depth of one line, skipping strings, comments and heredoc bodies."""
    if state.get("heredoc"):
        if line.strip() == state["heredoc"]:
            state["heredoc"] = None
        return 0
    depth, i, in_string = 0, 0, False
    while i < len(line):
        c = line[i]
        if state.get("block_comment"):
            if line.startswith("*/", i):
                state["block_comment"] = False
                i += 1
        elif in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "#" or line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            state["block_comment"] = True
            i += 1
        elif line.startswith("<<", i):
            marker = re.match(r"<<-?\s*([A-Za-z_][A-Za-z0-9_]*)", line[i:])
            if marker:
                state["heredoc"] = marker.group(1)
                break
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        i += 1
    return depth


def terraform_units(text: str, config: ChunkingConfig) -> list[Unit]:
    """One unit per top-level block (resource, data, module, variable, output, locals, provider...)."""
    lines = text.split("\n")
    starts: list[int] = []
    paths: list[tuple[str, ...]] = []
    depth = 0
    state: _TfState = {}
    for n, line in enumerate(lines):
        if depth == 0 and not state.get("heredoc") and not state.get("block_comment"):
            match = _TF_BLOCK.match(line)
            if match:
                labels = [label.strip('"') for label in re.findall(r'"[^"]*"|[A-Za-z0-9_.-]+', match.group(2))]
                starts.append(n)
                paths.append((match.group(1), ".".join(labels)) if labels else (match.group(1),))
        depth = max(0, depth + _tf_depth_changes(line, state))
    starts = _attach_comments(lines, starts, lambda line: bool(_TF_COMMENT.match(line)))
    return _units(_cut(lines, starts, paths), config)


# ---- YAML ---------------------------------------------------------------------------------------

_YAML_KEY = re.compile(r"^([A-Za-z0-9_.\-/\"']+[^:#]*?):(\s|$)")
_YAML_DOC = re.compile(r"^---(\s|$)")
_YAML_COMMENT = re.compile(r"^\s*#")


def _yaml_label(lines: list[str], n: int) -> str:
    """A Kubernetes-style document is named by its kind and metadata.name; others by their number."""
    text = "\n".join(lines)
    kind = re.search(r"^kind:\s*[\"']?([\w.-]+)", text, re.MULTILINE)
    name = re.search(r"^metadata:\s*\n(?:\s+.*\n)*?\s+name:\s*[\"']?([\w.\-{}]+)", text, re.MULTILINE)
    if kind:
        return f"{kind.group(1)} {name.group(1)}" if name else kind.group(1)
    return f"document {n}"


def yaml_units(text: str, config: ChunkingConfig) -> list[Unit]:
    """One unit per top-level key of each YAML document; a multi-document file's keys sit under their
    document's label. A top-level list or scalar document is one block."""
    lines = text.split("\n")
    docs: list[tuple[int, int]] = []
    start = 0
    for n, line in enumerate(lines):
        if _YAML_DOC.match(line):
            if n > start:
                docs.append((start, n))
            start = n
    docs.append((start, len(lines)))
    multi = sum(1 for a, b in docs if any(line.strip() and not _YAML_DOC.match(line) for line in lines[a:b])) > 1
    starts: list[int] = []
    paths: list[tuple[str, ...]] = []
    for number, (a, b) in enumerate(docs, start=1):
        label = (_yaml_label(lines[a:b], number),) if multi else ()
        keys = [(n, key) for n in range(a, b) if (key := _YAML_KEY.match(lines[n]))]
        if multi:  # the document opens a section even when it has no keys (a list, a scalar)
            starts.append(a)
            paths.append(label)
        for position, (n, key) in enumerate(keys):
            if multi and position == 0:
                continue  # the first key shares the document's section opener
            starts.append(n)
            paths.append((*label, key.group(1).strip("\"'")))
    pairs = sorted(set(zip(starts, paths)), key=lambda p: p[0])
    starts = _attach_comments(lines, [s for s, _ in pairs], lambda line: bool(_YAML_COMMENT.match(line)))
    return _units(_cut(lines, starts, [p for _, p in pairs]), config)


# ---- other code ---------------------------------------------------------------------------------

_DEFINITION = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?"
    r"(def|class|func|function|fn|struct|enum|trait|impl|interface|type|module)\s+\(?([A-Za-z_][\w.]*)"
)
_SHELL_FUNCTION = re.compile(r"^(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?")
_DECORATOR = re.compile(r"^@")
_CODE_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;)")


def code_units(text: str, config: ChunkingConfig) -> list[Unit]:
    """One unit per top-level definition (def/class/func/fn/... at column 0, with its decorators and
    comments); a file without recognisable definitions is cut into line windows by the packer."""
    lines = text.split("\n")
    starts: list[int] = []
    paths: list[tuple[str, ...]] = []
    for n, line in enumerate(lines):
        match = _DEFINITION.match(line)
        name = f"{match.group(1)} {match.group(2)}" if match else None
        if not match and (shell := _SHELL_FUNCTION.match(line)) and not line.startswith(("if", "for", "while")):
            name = f"function {shell.group(1)}"
        if name is None:
            continue
        start = n
        while start > 0 and _DECORATOR.match(lines[start - 1]):
            start -= 1
        starts.append(start)
        paths.append((name,))
    starts = _attach_comments(lines, starts, lambda line: bool(_CODE_COMMENT.match(line)) and not line.startswith("#!"))
    return _units(_cut(lines, starts, paths), config)
