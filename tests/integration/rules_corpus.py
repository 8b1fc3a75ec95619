"""A small corpus written straight into an index (no flow) for the retrieval rules' integration tests: a long
document that dominates a question, a one-chunk document on the same subject, a guide whose sections nest under
its title section (parent_section_id) with a section of small merged subsections, and a page of another tenant."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_config
from tests.integration.corpus import FILLER, write_documents

TENANT, GROUP = "acme", "sre"


def long_section(heading: str, fact: str, repeat: int = 8) -> str:
    return f"## {heading}\n\n{fact} " + FILLER * repeat + "\n\n"


# locator -> (title, service_name, body); the guide is the one document of the family (doc_tag) "ledger"
PAGES = {
    "payments-restart.md": (
        "Payments restart",
        "payments-api",
        "# Payments restart\n\n"
        + long_section("Drain traffic", "Drain the payments-api pods before a kubectl rollout restart of payments-api.")
        + long_section(
            "Restart pods", "Restart the payments-api pods with kubectl rollout restart deployment payments-api."
        )
        + long_section("Verify restart", "After the kubectl rollout restart, verify every payments-api pod restarted."),
    ),
    "payments-bounce.md": (
        "Bouncing the billing front end",
        "billing",
        "# Bouncing the billing front end\n\nCycle each pod of the billing front end in turn when it hangs.\n",
    ),
    "ledger-guide.md": (
        "Ledger failover guide",
        "ledger-db",
        "# Ledger failover guide\n\nThis guide moves the ledger database to its replica when the primary is lost. "
        + FILLER * 8
        + "\n\n"
        + long_section("Promote the replica", "Run pg_ctl promote on ledger-db-replica-02 to promote the replica.")
        + long_section("Repoint the pooler", "Update pgbouncer on pool-07 so that writes reach the new primary.")
        + "## Verify the failover\n\n### Check replication\n\nQuery pg_stat_replication on the new primary. "
        + FILLER * 3
        + "\n\n### Check the pooler\n\nRun SHOW POOLS on pgbouncer at pool-07 and expect zero waiting clients. "
        + FILLER * 3
        + "\n",
    ),
}
OTHER_TENANT_PAGE = ("globex-scanner.md", "Warehouse scanner", "scanner", "# Warehouse scanner\n\nRestart the scanner.")


def build(tmp_path: Path) -> Path:
    """The corpus written into tmp_path/index; the config's path."""
    from cairn.schemas import ContentType, SourceDocument, SourceType
    from cairn.schemas.config import load_config
    from cairn.sources import document_id

    config_path = write_config(tmp_path / "cairn.toml", tmp_path / "index", [])
    pages = [(locator, *page, TENANT, GROUP) for locator, page in PAGES.items()]
    pages.append((*OTHER_TENANT_PAGE, "globex", "ops"))
    docs = [
        SourceDocument(
            document_id=document_id(SourceType.WIKI, f"{tenant}-wiki", locator),
            source_name=f"{tenant}-wiki",
            source_type=SourceType.WIKI,
            source_uri=f"file:///wiki/{locator}",
            locator=locator,
            title=title,
            content=body,
            tenant_id=tenant,
            access_control_list=[group],
            content_type=ContentType.RUNBOOK,
            version_hash=f"v-{len(body)}",
            created_at=1_750_000_000,
            updated_at=1_750_000_000,
            temporal_start=1_750_000_000,
            service_name=service,
            doc_tag="ledger" if locator == "ledger-guide.md" else "",
        )
        for locator, title, service, body, tenant, group in pages
    ]
    write_documents(load_config(config_path), docs)
    return config_path


def doc_id(locator: str, tenant: str = TENANT) -> str:
    from cairn.schemas import SourceType
    from cairn.sources import document_id

    return document_id(SourceType.WIKI, f"{tenant}-wiki", locator)
