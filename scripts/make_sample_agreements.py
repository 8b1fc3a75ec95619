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

from tests.pdf_factory import AgreementSpec, Article, Clause, Sect, render  # noqa: E402

OUT = REPO / "data" / "legal"


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
            Article("I", "DEFINITIONS", [
                Sect("1.01", "Defined Terms",
                     paragraphs=["Capitalized terms used in this Agreement have the meanings given "
                                 "to them in this Section 1.01. A term defined in the singular has "
                                 "the corresponding meaning when used in the plural, and the reverse."],
                     definitions=defs),
                Sect("1.02", "Calculations",
                     paragraphs=["All calculations of interest under this Agreement are made on the "
                                 "basis of a 360-day year of twelve 30-day months, and all amounts are "
                                 "rounded to the nearest cent, with one half of one cent rounded up."]),
            ]),
            Article("II", "SERVICING OF THE MORTGAGE LOANS", [
                Sect("2.01", "Standard of Care",
                     paragraphs=["The Servicer shall service the Mortgage Loans on behalf of the "
                                 "Trustee and in the interest of the Certificateholders as a whole. "
                                 "In doing so it shall act with the diligence of a prudent servicer "
                                 "of residential mortgage loans and shall give no preference to any "
                                 "loan it services for itself or for any other owner."],
                     clauses=[
                         Clause("(a)", "The Servicer shall keep complete and accurate records for "
                                "each Mortgage Loan and shall make them available to the Trustee on "
                                "five Business Days' notice."),
                         Clause("(b)", "The Servicer may delegate any of its duties to a "
                                "subservicer, provided that:",
                                subclauses=[
                                    ("(i)", "the subservicer is approved to service residential "
                                     "mortgage loans in each state in which it acts;"),
                                    ("(ii)", "the Servicer gives the Trustee written notice of the "
                                     "delegation within ten Business Days; and"),
                                    ("(iii)", "the Servicer remains fully responsible for every act "
                                     "and omission of the subservicer."),
                                ]),
                     ]),
                Sect("2.02", "Collections and Modifications",
                     paragraphs=["The Servicer shall use commercially reasonable efforts to collect "
                                 "every Monthly Payment when due. It may agree to a modification of a "
                                 "Mortgage Loan only in the circumstances set out below."],
                     clauses=[
                         Clause("(a)", "A modification is permitted if the Mortgage Loan is sixty or "
                                "more days delinquent, or if the Servicer reasonably believes that a "
                                "default is imminent, and in either case:",
                                subclauses=[
                                    ("(i)", "the Servicer expects the modification to produce a "
                                     "greater recovery, on a present value basis, than foreclosure; and"),
                                    ("(ii)", "the modified maturity date is no later than the final "
                                     "scheduled Distribution Date of the Certificates."),
                                ]),
                         Clause("(b)", "No modification may forgive principal unless the Trustee has "
                                "consented in writing."),
                     ]),
                Sect("2.03", "Collection Account",
                     paragraphs=["The Servicer shall open the Collection Account on or before the "
                                 "Closing Date. Within two Business Days after receipt it shall "
                                 "deposit into the Collection Account all amounts received on the "
                                 "Mortgage Loans after the Cut-off Date, including:"],
                     clauses=[
                         Clause("(a)", "scheduled payments of principal and interest, net of the "
                                "Servicing Fee;"),
                         Clause("(b)", "prepayments, whether in full or in part; and"),
                         Clause("(c)", "proceeds of insurance, condemnation and liquidation, other "
                                "than amounts applied to restore the mortgaged property."),
                     ]),
                Sect("2.04", "Permitted Withdrawals",
                     paragraphs=["The Servicer may withdraw amounts from the Collection Account only "
                                 "for the following purposes:"],
                     clauses=[
                         Clause("(a)", "to remit Available Funds to the Trustee on the Business Day "
                                "before each Distribution Date;"),
                         Clause("(b)", "to reimburse itself for Advances, but only from later "
                                "collections on the same Mortgage Loan, unless the Advance has been "
                                "determined to be nonrecoverable; and"),
                         Clause("(c)", "to withdraw amounts deposited in error."),
                     ]),
                Sect("2.05", "Advances",
                     paragraphs=["On each Determination Date the Servicer shall determine the amount "
                                 "of each Monthly Payment that was due during the related Collection "
                                 "Period and was not received. Unless it determines that the amount "
                                 "would not be recoverable from later collections on that Mortgage "
                                 "Loan, the Servicer shall deposit an Advance of that amount into the "
                                 "Collection Account no later than the Business Day before the "
                                 "Distribution Date."]),
            ]),
            Article("III", "DISTRIBUTIONS", [
                Sect("3.01", "Distribution Account",
                     paragraphs=["The Trustee shall open the Distribution Account in its own name, in "
                                 "trust for the Certificateholders. Amounts in the Distribution Account "
                                 "may be invested only in obligations of the United States maturing no "
                                 "later than the next Distribution Date."]),
                Sect("3.02", "Order of Distributions",
                     paragraphs=["On each Distribution Date the Trustee shall distribute the "
                                 "Available Funds in the following order:"],
                     clauses=[
                         Clause("(a)", "to the Trustee, its monthly fee and any expenses it is "
                                "entitled to be reimbursed, up to an annual limit of $150,000;"),
                         Clause("(b)", "to the Class A Certificates, interest accrued at their "
                                "pass-through rate, together with any interest unpaid from earlier "
                                "Distribution Dates;"),
                         Clause("(c)", "as principal:",
                                subclauses=[
                                    ("(i)", "first, to the Class A Certificates, until their "
                                     "principal balance is reduced to zero;"),
                                    ("(ii)", "second, to the Class M Certificates, until their "
                                     "principal balance is reduced to zero; and"),
                                    ("(iii)", "third, to the Class B Certificates, until their "
                                     "principal balance is reduced to zero;"),
                                ]),
                         Clause("(d)", "to the Class R Certificates, any remaining amount."),
                     ]),
                Sect("3.03", "Monthly Report",
                     paragraphs=["No later than each Distribution Date the Trustee shall post on its "
                                 "investor website a report showing, for that Distribution Date, the "
                                 "amounts distributed to each class as interest and as principal, the "
                                 "aggregate outstanding Advances, the number and principal balance of "
                                 "delinquent Mortgage Loans by delinquency category, and the losses "
                                 "realised on Liquidated Loans during the Collection Period."]),
                Sect("3.04", "Allocation of Losses",
                     paragraphs=["Losses realised on a Liquidated Loan are allocated on the "
                                 "Distribution Date following the Collection Period in which the loan "
                                 "became a Liquidated Loan."],
                     clauses=[
                         Clause("(a)", "Losses are allocated first to the Class B Certificates, then "
                                "to the Class M Certificates and last to the Class A Certificates, in "
                                "each case until the principal balance of that class is reduced to "
                                "zero."),
                         Clause("(b)", "A later recovery on a Liquidated Loan is distributed as "
                                "principal and reverses the allocation of the loss in the opposite "
                                "order."),
                     ]),
            ]),
            Article("IV", "TERMINATION AND REPLACEMENT", [
                Sect("4.01", "Optional Termination",
                     paragraphs=["On any Distribution Date on which the aggregate principal balance "
                                 "of the Mortgage Loans is less than 10% of that balance as of the "
                                 "Cut-off Date, the Servicer may purchase all remaining Mortgage Loans "
                                 "from the Trust Fund."],
                     clauses=[
                         Clause("(a)", "The purchase price is the sum of:",
                                subclauses=[
                                    ("(i)", "100% of the unpaid principal balance of each Mortgage "
                                     "Loan, plus accrued interest; and"),
                                    ("(ii)", "the appraised value of any property acquired by "
                                     "foreclosure, less estimated costs of sale."),
                                ]),
                         Clause("(b)", "The Servicer shall give the Trustee notice of its intention to "
                                "purchase no later than the Determination Date before the "
                                "Distribution Date on which the purchase is to occur."),
                     ]),
                Sect("4.02", "Termination upon Final Distribution",
                     paragraphs=["This Agreement terminates on the Distribution Date on which the last "
                                 "amount due to Certificateholders is distributed, whether following a "
                                 "purchase under Section 4.01 or the payment or liquidation of the last "
                                 "Mortgage Loan."]),
                Sect("4.03", "Servicer Events of Default",
                     paragraphs=["Each of the following is a Servicer Event of Default:"],
                     clauses=[
                         Clause("(a)", "a failure to remit any amount required to be remitted to the "
                                "Trustee that continues for two Business Days after notice;"),
                         Clause("(b)", "a failure to perform any other material obligation that "
                                "continues for sixty days after notice; or"),
                         Clause("(c)", "the insolvency, receivership or voluntary bankruptcy of the "
                                "Servicer."),
                     ]),
                Sect("4.04", "Successor Servicer",
                     paragraphs=["After a Servicer Event of Default the Trustee may, and at the "
                                 "direction of holders of 25% of the voting rights shall, terminate the "
                                 "Servicer by written notice. The Trustee shall then act as Servicer, or "
                                 "appoint a successor with a net worth of at least $15,000,000, and the "
                                 "terminated Servicer shall cooperate in the transfer of all records "
                                 "and accounts."]),
            ]),
            Article("V", "MISCELLANEOUS", [
                Sect("5.01", "Amendment",
                     paragraphs=["This Agreement may be amended by the parties without the consent of "
                                 "Certificateholders to cure an ambiguity or to correct an error. Any "
                                 "other amendment requires the consent of holders of 66% of the voting "
                                 "rights of each class that is adversely affected."]),
                Sect("5.02", "Governing Law",
                     paragraphs=["This Agreement is governed by the laws of the State of New York, "
                                 "without regard to its conflict of laws rules."]),
            ]),
        ],
    )


def master_services() -> AgreementSpec:
    defs = {
        "Affiliate": "any entity that directly or indirectly controls, is controlled by or is under "
            "common control with a party, where control means ownership of more than half of the "
            "voting interests.",
        "Business Day": "a day other than a Saturday, a Sunday or a public holiday in the State of "
            "California.",
        "Confidential Information": "all non-public information disclosed by one party to the other "
            "in connection with this Agreement that is marked confidential or that a reasonable person "
            "would understand to be confidential, including Customer Data.",
        "Customer": "Acme Corp and, where a Statement of Work so provides, its Affiliates.",
        "Customer Data": "all data that Customer or its users upload to, or generate within, the "
            "Services.",
        "Effective Date": "January 15, 2025.",
        "Fees": "the amounts payable by Customer for the Services as set out in each Statement of Work.",
        "Incident": "any unplanned interruption of the Services, or any reduction in their quality, "
            "that affects Customer.",
        "Monthly Uptime Percentage": "the total number of minutes in a calendar month, less the "
            "number of minutes of Unavailability in that month, divided by the total number of "
            "minutes in that month.",
        "Provider": "Globex Hosting Inc.",
        "Service Credit": "a credit against future Fees calculated under Section 2.04.",
        "Services": "the hosting, managed database and related support services described in a "
            "Statement of Work.",
        "Statement of Work": "a document signed by both parties that refers to this Agreement and "
            "describes Services, Fees and any service levels.",
        "Term": "the period described in Section 6.01.",
        "Unavailability": "any period of one minute or longer during which the Services do not "
            "respond to requests from Customer's applications, other than during scheduled "
            "maintenance announced at least five Business Days in advance.",
    }
    return AgreementSpec(
        title="Master Services Agreement",
        parties=["Acme Corp", "Globex Hosting Inc."],
        effective_date="January 15, 2025",
        recitals=[
            "Provider operates data centres and managed hosting platforms. Customer wishes to obtain "
            "hosting and related services from Provider under one or more Statements of Work, each "
            "of which will be governed by this Agreement.",
            "The parties therefore agree as follows.",
        ],
        articles=[
            Article("I", "DEFINITIONS", [
                Sect("1.01", "Defined Terms",
                     paragraphs=["In this Agreement and in each Statement of Work, the following "
                                 "terms have the meanings below."],
                     definitions=defs),
                Sect("1.02", "Order of Precedence",
                     paragraphs=["If this Agreement and a Statement of Work conflict, this Agreement "
                                 "prevails unless the Statement of Work expressly identifies the "
                                 "provision of this Agreement that it overrides."]),
            ]),
            Article("II", "SERVICES", [
                Sect("2.01", "Provision of Services",
                     paragraphs=["Provider shall provide the Services described in each Statement of "
                                 "Work from the Effective Date, or any later start date stated in that "
                                 "Statement of Work, until the Statement of Work expires or is "
                                 "terminated."],
                     clauses=[
                         Clause("(a)", "Provider shall perform the Services in a professional and "
                                "workmanlike manner, using personnel with appropriate skill and "
                                "experience."),
                         Clause("(b)", "Provider shall host Customer Data only in the regions listed "
                                "in the applicable Statement of Work and shall not move it to another "
                                "region without Customer's prior written consent."),
                         Clause("(c)", "Provider may use subcontractors to perform the Services, "
                                "provided that:",
                                subclauses=[
                                    ("(i)", "Provider remains responsible for their performance as if "
                                     "it were its own;"),
                                    ("(ii)", "no subcontractor has access to Customer Data unless it "
                                     "is bound by written confidentiality obligations at least as "
                                     "protective as those in Article IV; and"),
                                    ("(iii)", "Provider maintains a current list of subcontractors "
                                     "and provides it to Customer on request."),
                                ]),
                     ]),
                Sect("2.02", "Customer Responsibilities",
                     paragraphs=["Customer is responsible for the accuracy of Customer Data and for "
                                 "the acts of its users. Customer shall not use the Services to store "
                                 "or transmit material that infringes the rights of a third party or "
                                 "that is unlawful, and shall notify Provider promptly of any "
                                 "unauthorised use of its accounts of which it becomes aware."]),
                Sect("2.03", "Support and Incidents",
                     paragraphs=["Provider shall maintain a support desk available twenty-four hours "
                                 "a day, every day of the year, and shall respond to Incidents "
                                 "according to their severity:"],
                     clauses=[
                         Clause("(a)", "Severity 1, where the Services are unavailable to all users:",
                                subclauses=[
                                    ("(i)", "first response within fifteen minutes;"),
                                    ("(ii)", "status updates at least every hour until resolved."),
                                ]),
                         Clause("(b)", "Severity 2, where a material function is degraded: first "
                                "response within one hour and updates every four hours."),
                         Clause("(c)", "Severity 3, for any other Incident or request: first response "
                                "within one Business Day."),
                     ]),
                Sect("2.04", "Service Levels and Service Credits",
                     paragraphs=["Provider shall make the Services available with a Monthly Uptime "
                                 "Percentage of at least 99.9%. If it fails to do so, Customer is "
                                 "entitled to a Service Credit of the following percentage of the "
                                 "monthly Fees for the affected Services:"],
                     clauses=[
                         Clause("(a)", "10%, if the Monthly Uptime Percentage is below 99.9% but at "
                                "least 99.0%;"),
                         Clause("(b)", "25%, if it is below 99.0% but at least 95.0%; and"),
                         Clause("(c)", "50%, if it is below 95.0%."),
                     ]),
            ]),
            Article("III", "FEES AND PAYMENT", [
                Sect("3.01", "Fees",
                     paragraphs=["Customer shall pay the Fees set out in each Statement of Work. "
                                 "Provider may increase recurring Fees no more than once in any twelve "
                                 "month period, by no more than 5%, and only on ninety days' written "
                                 "notice."]),
                Sect("3.02", "Invoicing and Payment",
                     paragraphs=["Provider shall invoice recurring Fees monthly in advance and usage "
                                 "Fees monthly in arrears."],
                     clauses=[
                         Clause("(a)", "Customer shall pay each undisputed invoice within thirty days "
                                "after receipt."),
                         Clause("(b)", "Customer may dispute an invoice in good faith by written "
                                "notice before its due date, stating the reasons for the dispute.",
                                subclauses=[
                                    ("(i)", "The parties shall attempt to resolve the dispute within "
                                     "thirty days."),
                                    ("(ii)", "Customer shall pay the undisputed portion of the invoice "
                                     "when due."),
                                ]),
                         Clause("(c)", "Late payments bear interest at 1% per month or the highest rate "
                                "permitted by law, whichever is lower."),
                     ]),
                Sect("3.03", "Taxes",
                     paragraphs=["Fees exclude taxes. Customer shall pay all sales, use and similar "
                                 "taxes on the Services, other than taxes on Provider's income, "
                                 "property or employees."]),
            ]),
            Article("IV", "CONFIDENTIALITY", [
                Sect("4.01", "Obligations",
                     paragraphs=["Each party that receives Confidential Information shall use it only "
                                 "to perform or receive the Services and shall protect it with at least "
                                 "the care it uses for its own information of a similar kind, and in no "
                                 "case less than reasonable care."],
                     clauses=[
                         Clause("(a)", "The receiving party may disclose Confidential Information only "
                                "to its employees, Affiliates, advisers and subcontractors who need to "
                                "know it for the purposes of this Agreement and who are bound by "
                                "obligations of confidence."),
                         Clause("(b)", "The receiving party may also disclose Confidential Information "
                                "where required by law, provided that it:",
                                subclauses=[
                                    ("(i)", "gives the disclosing party prompt notice, where lawful; "
                                     "and"),
                                    ("(ii)", "discloses only the part that it is legally required to "
                                     "disclose."),
                                ]),
                     ]),
                Sect("4.02", "Exclusions",
                     paragraphs=["Confidential Information does not include information that is or "
                                 "becomes public without a breach of this Agreement, that the receiving "
                                 "party already knew without restriction, or that it develops "
                                 "independently without use of the disclosing party's information."]),
                Sect("4.03", "Return and Deletion",
                     paragraphs=["Within thirty days after termination, each party shall return or "
                                 "delete the other party's Confidential Information, except for copies "
                                 "held in routine backups, which remain subject to this Article until "
                                 "they are overwritten."]),
            ]),
            Article("V", "LIMITATION OF LIABILITY", [
                Sect("5.01", "Exclusion of Indirect Damages",
                     paragraphs=["Neither party is liable to the other for any indirect, incidental, "
                                 "special or consequential damages, or for lost profits or revenue, "
                                 "arising out of this Agreement, even if it was advised of the "
                                 "possibility of those damages."]),
                Sect("5.02", "Cap on Liability",
                     paragraphs=["Each party's total liability arising out of this Agreement in any "
                                 "twelve month period is limited to the Fees paid or payable by Customer "
                                 "in the twelve months before the event giving rise to the liability."]),
                Sect("5.03", "Exceptions",
                     paragraphs=["The limits in Sections 5.01 and 5.02 do not apply to:"],
                     clauses=[
                         Clause("(a)", "a party's breach of Article IV;"),
                         Clause("(b)", "Customer's obligation to pay Fees; or"),
                         Clause("(c)", "liability that cannot be limited by law, including liability "
                                "for:",
                                subclauses=[
                                    ("(i)", "death or personal injury caused by negligence; and"),
                                    ("(ii)", "fraud or wilful misconduct."),
                                ]),
                     ]),
                Sect("5.04", "Service Credits as Remedy",
                     paragraphs=["Service Credits are Customer's sole monetary remedy for a failure to "
                                 "meet the service levels in Section 2.04, except where the failure "
                                 "gives Customer a right to terminate under Section 6.02."]),
            ]),
            Article("VI", "TERM AND TERMINATION", [
                Sect("6.01", "Term",
                     paragraphs=["This Agreement begins on the Effective Date and continues for three "
                                 "years. It then renews automatically for successive one-year periods "
                                 "unless either party gives notice of non-renewal at least ninety days "
                                 "before the end of the current period."]),
                Sect("6.02", "Termination for Cause",
                     paragraphs=["Either party may terminate this Agreement, or any Statement of Work, "
                                 "by written notice if:"],
                     clauses=[
                         Clause("(a)", "the other party materially breaches it and fails to cure the "
                                "breach within thirty days after notice;"),
                         Clause("(b)", "the other party becomes insolvent or makes an assignment for the "
                                "benefit of creditors; or"),
                         Clause("(c)", "in the case of Customer, the Monthly Uptime Percentage is below "
                                "99.0% in any three months of a rolling six month period."),
                     ]),
                Sect("6.03", "Effect of Termination",
                     paragraphs=["On termination or expiry of a Statement of Work:"],
                     clauses=[
                         Clause("(a)", "Customer shall pay all Fees accrued up to the date of "
                                "termination;"),
                         Clause("(b)", "Provider shall, for sixty days, make Customer Data available "
                                "for export in a standard machine-readable format, and shall then "
                                "delete it:",
                                subclauses=[
                                    ("(i)", "from production systems within thirty days after the end "
                                     "of the export period; and"),
                                    ("(ii)", "from backups within ninety days after the end of the "
                                     "export period."),
                                ]),
                         Clause("(c)", "Articles IV and V and this Section 6.03 survive."),
                     ]),
            ]),
        ],
    )


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
