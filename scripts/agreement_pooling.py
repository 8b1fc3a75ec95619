"""The sample pooling and servicing agreement: its title page, its definitions, then its operative articles
(scripts/agreement_pooling_provisions.py). Written for this project (original, fictional, not legal advice);
rendered to a PDF by scripts/make_sample_agreements.py."""

from __future__ import annotations

from scripts.agreement_pooling_provisions import distributions, miscellaneous, servicing, termination
from tests.agreement_spec import AgreementSpec, Article, Sect


def pooling_and_servicing() -> AgreementSpec:
    defs = {
        "Advance": "any payment of delinquent principal and interest that the Servicer makes from "
        "its own funds under Section 2.05, which is reimbursable to it as provided in that Section.",
        "Available Funds": ", with respect to any Distribution Date, the total amount on deposit in the "
        "Distribution Account on that date, less the fees and reimbursements payable from it "
        "before any distribution to Certificateholders.",
        "Business Day": "any day other than a Saturday, a Sunday or a day on which commercial banks in "
        "New York, New York or in Wilmington, Delaware are authorized or required to close.",
        "Certificates": "the Acme Mortgage Pass-Through Certificates, Series 2024-1, issued under this "
        "Agreement in the classes described in the Preliminary Statement.",
        "Collection Account": "the trust account established by the Servicer under Section 2.03 and "
        "held in the name of the Trustee for the benefit of the Certificateholders.",
        "Collection Period": ", with respect to any Distribution Date, the period beginning on the "
        "second day of the preceding calendar month and ending on the first day of the month in "
        "which that Distribution Date occurs.",
        "Cut-off Date": "March 1, 2024.",
        "Depositor": "Acme Mortgage Depositor LLC, a Delaware limited liability company, and its "
        "successors in interest.",
        "Determination Date": ", with respect to any Distribution Date, the tenth day of the month in "
        "which that Distribution Date occurs or, if that day is not a Business Day, the Business Day "
        "immediately before it.",
        "Distribution Account": "the trust account established by the Trustee under Section 3.01.",
        "Distribution Date": "the twentieth day of each month or, if that day is not a Business Day, "
        "the next Business Day, beginning in April 2024.",
        "Liquidated Loan": "a Mortgage Loan as to which the Servicer has determined that all amounts "
        "it expects to recover, whether from the sale of the mortgaged property or otherwise, have "
        "been recovered.",
        "Mortgage Loan": "each residential mortgage loan listed on the Mortgage Loan Schedule, "
        "including every note, mortgage and other document evidencing or securing it.",
        "Mortgage Loan Schedule": "the list of Mortgage Loans attached as Exhibit A, as amended from "
        "time to time to reflect repurchases and substitutions.",
        "Servicer": "Acme Loan Servicing LLC, or any successor appointed under Section 4.04.",
        "Servicing Fee Rate": "0.25% per annum.",
        "Trust Fund": "the Mortgage Loans, the Collection Account, the Distribution Account and all "
        "proceeds of any of them.",
        "Trustee": "Northwind Trust Company, N.A., a national banking association, not in its "
        "individual capacity but solely as trustee, and any successor trustee.",
    }
    return AgreementSpec(
        title="Pooling and Servicing Agreement",
        parties=["Acme Mortgage Depositor LLC", "Northwind Trust Company, N.A."],
        effective_date="March 1, 2024",
        recitals=[
            "The Depositor is the owner of the Mortgage Loans and wishes to convey them to a trust "
            "that will issue the Certificates. Acme Loan Servicing LLC joins this Agreement as the "
            "Servicer solely for the purposes of Article II and Article IV.",
            "The Trustee is willing to hold the Trust Fund on the terms of this Agreement for the "
            "benefit of the holders of the Certificates. Accordingly, the parties agree as follows.",
        ],
        articles=[
            Article(
                "I",
                "DEFINITIONS",
                [
                    Sect(
                        "1.01",
                        "Defined Terms",
                        paragraphs=[
                            "Capitalized terms used in this Agreement have the meanings given "
                            "to them in this Section 1.01. A term defined in the singular has "
                            "the corresponding meaning when used in the plural, and the reverse."
                        ],
                        definitions=defs,
                    ),
                    Sect(
                        "1.02",
                        "Calculations",
                        paragraphs=[
                            "All calculations of interest under this Agreement are made on the "
                            "basis of a 360-day year of twelve 30-day months, and all amounts are "
                            "rounded to the nearest cent, with one half of one cent rounded up."
                        ],
                    ),
                ],
            ),
            servicing(),
            distributions(),
            termination(),
            miscellaneous(),
        ],
    )
