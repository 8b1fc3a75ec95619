"""Write the two sample agreements of the legal source into data/legal/.

    acme-northwind-pooling-and-servicing-agreement.pdf   Acme Mortgage Depositor LLC and
                                                         Northwind Trust Company, N.A., March 1, 2024
    acme-globex-master-services-agreement.pdf            Acme Corp and Globex Hosting Inc.,
                                                         January 15, 2025

The text of both agreements was written for this project: it is original, fictional, and not
copied from any real contract; it is not legal advice and binds no one. The PDFs are rendered by
the same writer the tests use (tests/pdf_factory.py), so they have the same layout: a title page,
"ARTICLE I" / "DEFINITIONS" headings, "Section 1.01 Defined Terms." headings, '"Term" means ...'
definitions, indented (a) clauses and (i) sub-clauses, a running header and a "Page N" footer.
Output is deterministic: the same script gives the same bytes.

Regenerate (from the repository root):

    .venv/bin/python scripts/make_sample_agreements.py
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scripts.agreement_pooling import pooling_and_servicing  # noqa: E402
from scripts.agreement_services import master_services  # noqa: E402
from tests.pdf_factory import render  # noqa: E402

OUT = REPO / "data" / "legal"


AGREEMENTS = {
    "acme-northwind-pooling-and-servicing-agreement.pdf": pooling_and_servicing,
    "acme-globex-master-services-agreement.pdf": master_services,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in AGREEMENTS.items():
        path = OUT / name
        data = render(build())
        path.write_bytes(data)
        print(f"{path.relative_to(REPO)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
