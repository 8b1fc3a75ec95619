"""Terraform, YAML and code layouts: blocks found, names as breadcrumbs, comments attached, no line lost,
every section inside the SLA when the text allows."""

from __future__ import annotations

import textwrap

from cairn.chunkers import pack_sections
from cairn.chunkers.code import code_units, terraform_units, yaml_units
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()

TERRAFORM = textwrap.dedent("""
    terraform {
      required_version = ">= 1.6"
    }

    # The queue's dead letters stay two weeks.
    # (a second comment line)
    resource "aws_sqs_queue" "dlq" {
      name = "jobs-dlq"
      tags = { purpose = "dead letters { not a brace }" }
      policy = <<EOT
    {"Statement": [
    EOT
    }

    variable "region" {
      default = "eu-west-1"
    }

    output "region" {
      value = var.region
    }

    locals {
      name = "jobs"
    }
""")


def non_blank(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def test_terraform_one_unit_per_top_level_block_with_its_comments():
    units = terraform_units(TERRAFORM, CONFIG)
    assert [u.heading_path for u in units] == [
        ("terraform",),
        ("resource", "aws_sqs_queue.dlq"),
        ("variable", "region"),
        ("output", "region"),
        ("locals",),
    ]
    assert all(u.section_start for u in units)
    dlq = units[1].text
    assert dlq.startswith("# The queue's dead letters stay two weeks.") and dlq.rstrip().endswith("}")
    assert "EOT" in dlq and "value = var.region" not in dlq  # the heredoc's brace did not end the block
    assert non_blank("\n".join(u.text for u in units)) == non_blank(TERRAFORM)


def test_terraform_section_ids_keep_the_block_type():
    sections = pack_sections(
        terraform_units(TERRAFORM * 1, CONFIG),
        "main.tf",
        ChunkingConfig(
            parent_min_tokens=5,
            parent_target_tokens=20,
            parent_max_tokens=60,
            child_min_tokens=5,
            child_target_tokens=20,
            child_max_tokens=60,
            abstract_min_tokens=5,
            abstract_max_tokens=60,
        ),
    )
    ids = [s.section_id for s in sections]
    assert "variable.region" in ids and "output.region" in ids  # same name, different blocks, distinct ids
    assert ["resource", "aws_sqs_queue.dlq"] in [s.breadcrumbs for s in sections]


def test_a_huge_resource_is_cut_by_lines_into_sections_inside_the_band():
    body = "\n".join(f'  tag_{n} = "value number {n} for the bucket"' for n in range(400))
    text = f'resource "aws_s3_bucket" "big" {{\n{body}\n}}\n'
    sections = pack_sections(terraform_units(text, CONFIG), "big.tf", CONFIG)
    assert len(sections) > 1
    assert all(CONFIG.parent_min_tokens <= s.token_count <= CONFIG.parent_max_tokens for s in sections)
    assert sections[0].section_id == "resource.aws-s3-bucket-big"
    assert sections[1].section_id.startswith("resource.aws-s3-bucket-big.part-")
    assert all(s.breadcrumbs == ["resource", "aws_s3_bucket.big"] for s in sections)
    assert non_blank("\n".join(s.text for s in sections)) == non_blank(text)


YAML_MULTI = textwrap.dedent("""
    # the web tier
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      replicas: 3
    ---
    apiVersion: v1
    kind: Service
    metadata:
      name: web
    spec:
      ports:
        - port: 80
""")


def test_yaml_multi_document_keys_sit_under_their_document_label():
    units = yaml_units(YAML_MULTI, CONFIG)
    paths = [u.heading_path for u in units if u.section_start]
    assert paths[0] == ("Deployment web",)
    assert ("Deployment web", "spec") in paths and ("Service web", "metadata") in paths
    assert units[0].text.startswith("# the web tier")
    assert non_blank("\n".join(u.text for u in units)) == non_blank(YAML_MULTI)


def test_yaml_single_document_top_level_keys():
    text = "# settings\nretries: 3\nendpoints:\n  - a\n  - b\nlimits:\n  cpu: 2\n"
    units = yaml_units(text, CONFIG)
    assert [u.heading_path for u in units] == [("retries",), ("endpoints",), ("limits",)]
    assert units[0].text.startswith("# settings")


def test_code_top_level_definitions_with_decorators_and_comments():
    text = textwrap.dedent('''
        #!/usr/bin/env python3
        """Module doc."""
        import os

        # Restart one service.
        @retry(3)
        def restart(name):
            return os.system(name)


        class Drainer:
            def run(self):
                pass
    ''')
    units = code_units(text, CONFIG)
    assert [u.heading_path for u in units] == [(), ("def restart",), ("class Drainer",)]
    assert units[1].text.startswith("# Restart one service.\n@retry(3)")
    assert "def run" in units[2].text  # a method stays inside its class
    assert non_blank("\n".join(u.text for u in units)) == non_blank(text)


def test_shell_functions_and_files_without_definitions():
    script = 'set -e\n\ndrain() {\n  echo draining\n}\n\nmain() {\n  drain\n}\n\nmain "$@"\n'
    assert [u.heading_path for u in code_units(script, CONFIG)] == [(), ("function drain",), ("function main",)]
    plain = "\n".join(f"echo line {n}" for n in range(5))
    units = code_units(plain, CONFIG)
    assert len(units) == 1 and units[0].heading_path == () and not units[0].section_start
