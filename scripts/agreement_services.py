"""The text of the sample master services agreement, written for this project (original, fictional, not legal advice);
rendered to a PDF by scripts/make_sample_agreements.py."""

from __future__ import annotations

from tests.agreement_spec import AgreementSpec, Article, Clause, Sect


def master_services() -> AgreementSpec:
    defs = {
        "Affiliate": "any entity that directly or indirectly controls, is controlled by or is under "
        "common control with a party, where control means ownership of more than half of the "
        "voting interests.",
        "Business Day": "a day other than a Saturday, a Sunday or a public holiday in the State of California.",
        "Confidential Information": "all non-public information disclosed by one party to the other "
        "in connection with this Agreement that is marked confidential or that a reasonable person "
        "would understand to be confidential, including Customer Data.",
        "Customer": "Acme Corp and, where a Statement of Work so provides, its Affiliates.",
        "Customer Data": "all data that Customer or its users upload to, or generate within, the Services.",
        "Effective Date": "January 15, 2025.",
        "Fees": "the amounts payable by Customer for the Services as set out in each Statement of Work.",
        "Incident": "any unplanned interruption of the Services, or any reduction in their quality, "
        "that affects Customer.",
        "Monthly Uptime Percentage": "the total number of minutes in a calendar month, less the "
        "number of minutes of Unavailability in that month, divided by the total number of "
        "minutes in that month.",
        "Provider": "Globex Hosting Inc.",
        "Service Credit": "a credit against future Fees calculated under Section 2.04.",
        "Services": "the hosting, managed database and related support services described in a Statement of Work.",
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
            Article(
                "I",
                "DEFINITIONS",
                [
                    Sect(
                        "1.01",
                        "Defined Terms",
                        paragraphs=[
                            "In this Agreement and in each Statement of Work, the following "
                            "terms have the meanings below."
                        ],
                        definitions=defs,
                    ),
                    Sect(
                        "1.02",
                        "Order of Precedence",
                        paragraphs=[
                            "If this Agreement and a Statement of Work conflict, this Agreement "
                            "prevails unless the Statement of Work expressly identifies the "
                            "provision of this Agreement that it overrides."
                        ],
                    ),
                ],
            ),
            Article(
                "II",
                "SERVICES",
                [
                    Sect(
                        "2.01",
                        "Provision of Services",
                        paragraphs=[
                            "Provider shall provide the Services described in each Statement of "
                            "Work from the Effective Date, or any later start date stated in that "
                            "Statement of Work, until the Statement of Work expires or is "
                            "terminated."
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "Provider shall perform the Services in a professional and "
                                "workmanlike manner, using personnel with appropriate skill and "
                                "experience.",
                            ),
                            Clause(
                                "(b)",
                                "Provider shall host Customer Data only in the regions listed "
                                "in the applicable Statement of Work and shall not move it to another "
                                "region without Customer's prior written consent.",
                            ),
                            Clause(
                                "(c)",
                                "Provider may use subcontractors to perform the Services, provided that:",
                                subclauses=[
                                    (
                                        "(i)",
                                        "Provider remains responsible for their performance as if it were its own;",
                                    ),
                                    (
                                        "(ii)",
                                        "no subcontractor has access to Customer Data unless it "
                                        "is bound by written confidentiality obligations at least as "
                                        "protective as those in Article IV; and",
                                    ),
                                    (
                                        "(iii)",
                                        "Provider maintains a current list of subcontractors "
                                        "and provides it to Customer on request.",
                                    ),
                                ],
                            ),
                        ],
                    ),
                    Sect(
                        "2.02",
                        "Customer Responsibilities",
                        paragraphs=[
                            "Customer is responsible for the accuracy of Customer Data and for "
                            "the acts of its users. Customer shall not use the Services to store "
                            "or transmit material that infringes the rights of a third party or "
                            "that is unlawful, and shall notify Provider promptly of any "
                            "unauthorised use of its accounts of which it becomes aware."
                        ],
                    ),
                    Sect(
                        "2.03",
                        "Support and Incidents",
                        paragraphs=[
                            "Provider shall maintain a support desk available twenty-four hours "
                            "a day, every day of the year, and shall respond to Incidents "
                            "according to their severity:"
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "Severity 1, where the Services are unavailable to all users:",
                                subclauses=[
                                    ("(i)", "first response within fifteen minutes;"),
                                    ("(ii)", "status updates at least every hour until resolved."),
                                ],
                            ),
                            Clause(
                                "(b)",
                                "Severity 2, where a material function is degraded: first "
                                "response within one hour and updates every four hours.",
                            ),
                            Clause(
                                "(c)",
                                "Severity 3, for any other Incident or request: first response "
                                "within one Business Day.",
                            ),
                        ],
                    ),
                    Sect(
                        "2.04",
                        "Service Levels and Service Credits",
                        paragraphs=[
                            "Provider shall make the Services available with a Monthly Uptime "
                            "Percentage of at least 99.9%. If it fails to do so, Customer is "
                            "entitled to a Service Credit of the following percentage of the "
                            "monthly Fees for the affected Services:"
                        ],
                        clauses=[
                            Clause("(a)", "10%, if the Monthly Uptime Percentage is below 99.9% but at least 99.0%;"),
                            Clause("(b)", "25%, if it is below 99.0% but at least 95.0%; and"),
                            Clause("(c)", "50%, if it is below 95.0%."),
                        ],
                    ),
                ],
            ),
            Article(
                "III",
                "FEES AND PAYMENT",
                [
                    Sect(
                        "3.01",
                        "Fees",
                        paragraphs=[
                            "Customer shall pay the Fees set out in each Statement of Work. "
                            "Provider may increase recurring Fees no more than once in any twelve "
                            "month period, by no more than 5%, and only on ninety days' written "
                            "notice."
                        ],
                    ),
                    Sect(
                        "3.02",
                        "Invoicing and Payment",
                        paragraphs=[
                            "Provider shall invoice recurring Fees monthly in advance and usage "
                            "Fees monthly in arrears."
                        ],
                        clauses=[
                            Clause(
                                "(a)", "Customer shall pay each undisputed invoice within thirty days after receipt."
                            ),
                            Clause(
                                "(b)",
                                "Customer may dispute an invoice in good faith by written "
                                "notice before its due date, stating the reasons for the dispute.",
                                subclauses=[
                                    ("(i)", "The parties shall attempt to resolve the dispute within thirty days."),
                                    ("(ii)", "Customer shall pay the undisputed portion of the invoice when due."),
                                ],
                            ),
                            Clause(
                                "(c)",
                                "Late payments bear interest at 1% per month or the highest rate "
                                "permitted by law, whichever is lower.",
                            ),
                        ],
                    ),
                    Sect(
                        "3.03",
                        "Taxes",
                        paragraphs=[
                            "Fees exclude taxes. Customer shall pay all sales, use and similar "
                            "taxes on the Services, other than taxes on Provider's income, "
                            "property or employees."
                        ],
                    ),
                ],
            ),
            Article(
                "IV",
                "CONFIDENTIALITY",
                [
                    Sect(
                        "4.01",
                        "Obligations",
                        paragraphs=[
                            "Each party that receives Confidential Information shall use it only "
                            "to perform or receive the Services and shall protect it with at least "
                            "the care it uses for its own information of a similar kind, and in no "
                            "case less than reasonable care."
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "The receiving party may disclose Confidential Information only "
                                "to its employees, Affiliates, advisers and subcontractors who need to "
                                "know it for the purposes of this Agreement and who are bound by "
                                "obligations of confidence.",
                            ),
                            Clause(
                                "(b)",
                                "The receiving party may also disclose Confidential Information "
                                "where required by law, provided that it:",
                                subclauses=[
                                    ("(i)", "gives the disclosing party prompt notice, where lawful; and"),
                                    ("(ii)", "discloses only the part that it is legally required to disclose."),
                                ],
                            ),
                        ],
                    ),
                    Sect(
                        "4.02",
                        "Exclusions",
                        paragraphs=[
                            "Confidential Information does not include information that is or "
                            "becomes public without a breach of this Agreement, that the receiving "
                            "party already knew without restriction, or that it develops "
                            "independently without use of the disclosing party's information."
                        ],
                    ),
                    Sect(
                        "4.03",
                        "Return and Deletion",
                        paragraphs=[
                            "Within thirty days after termination, each party shall return or "
                            "delete the other party's Confidential Information, except for copies "
                            "held in routine backups, which remain subject to this Article until "
                            "they are overwritten."
                        ],
                    ),
                ],
            ),
            Article(
                "V",
                "LIMITATION OF LIABILITY",
                [
                    Sect(
                        "5.01",
                        "Exclusion of Indirect Damages",
                        paragraphs=[
                            "Neither party is liable to the other for any indirect, incidental, "
                            "special or consequential damages, or for lost profits or revenue, "
                            "arising out of this Agreement, even if it was advised of the "
                            "possibility of those damages."
                        ],
                    ),
                    Sect(
                        "5.02",
                        "Cap on Liability",
                        paragraphs=[
                            "Each party's total liability arising out of this Agreement in any "
                            "twelve month period is limited to the Fees paid or payable by Customer "
                            "in the twelve months before the event giving rise to the liability."
                        ],
                    ),
                    Sect(
                        "5.03",
                        "Exceptions",
                        paragraphs=["The limits in Sections 5.01 and 5.02 do not apply to:"],
                        clauses=[
                            Clause("(a)", "a party's breach of Article IV;"),
                            Clause("(b)", "Customer's obligation to pay Fees; or"),
                            Clause(
                                "(c)",
                                "liability that cannot be limited by law, including liability for:",
                                subclauses=[
                                    ("(i)", "death or personal injury caused by negligence; and"),
                                    ("(ii)", "fraud or wilful misconduct."),
                                ],
                            ),
                        ],
                    ),
                    Sect(
                        "5.04",
                        "Service Credits as Remedy",
                        paragraphs=[
                            "Service Credits are Customer's sole monetary remedy for a failure to "
                            "meet the service levels in Section 2.04, except where the failure "
                            "gives Customer a right to terminate under Section 6.02."
                        ],
                    ),
                ],
            ),
            Article(
                "VI",
                "TERM AND TERMINATION",
                [
                    Sect(
                        "6.01",
                        "Term",
                        paragraphs=[
                            "This Agreement begins on the Effective Date and continues for three "
                            "years. It then renews automatically for successive one-year periods "
                            "unless either party gives notice of non-renewal at least ninety days "
                            "before the end of the current period."
                        ],
                    ),
                    Sect(
                        "6.02",
                        "Termination for Cause",
                        paragraphs=[
                            "Either party may terminate this Agreement, or any Statement of Work, by written notice if:"
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "the other party materially breaches it and fails to cure the "
                                "breach within thirty days after notice;",
                            ),
                            Clause(
                                "(b)",
                                "the other party becomes insolvent or makes an assignment for the "
                                "benefit of creditors; or",
                            ),
                            Clause(
                                "(c)",
                                "in the case of Customer, the Monthly Uptime Percentage is below "
                                "99.0% in any three months of a rolling six month period.",
                            ),
                        ],
                    ),
                    Sect(
                        "6.03",
                        "Effect of Termination",
                        paragraphs=["On termination or expiry of a Statement of Work:"],
                        clauses=[
                            Clause("(a)", "Customer shall pay all Fees accrued up to the date of termination;"),
                            Clause(
                                "(b)",
                                "Provider shall, for sixty days, make Customer Data available "
                                "for export in a standard machine-readable format, and shall then "
                                "delete it:",
                                subclauses=[
                                    (
                                        "(i)",
                                        "from production systems within thirty days after the end "
                                        "of the export period; and",
                                    ),
                                    ("(ii)", "from backups within ninety days after the end of the export period."),
                                ],
                            ),
                            Clause("(c)", "Articles IV and V and this Section 6.03 survive."),
                        ],
                    ),
                ],
            ),
        ],
    )
