"""The operative articles (II to V) of the sample pooling and servicing agreement; scripts/agreement_pooling.py
puts them after its title page and definitions. Written for this project: original, fictional, not legal advice."""

from __future__ import annotations

from tests.agreement_spec import Article, Clause, Sect


def servicing() -> Article:
    """Article II: the standard of care, collections, the Collection Account, withdrawals and Advances."""
    return Article(
        "II",
        "SERVICING OF THE MORTGAGE LOANS",
        [
            Sect(
                "2.01",
                "Standard of Care",
                paragraphs=[
                    "The Servicer shall service the Mortgage Loans on behalf of the "
                    "Trustee and in the interest of the Certificateholders as a whole. "
                    "In doing so it shall act with the diligence of a prudent servicer "
                    "of residential mortgage loans and shall give no preference to any "
                    "loan it services for itself or for any other owner."
                ],
                clauses=[
                    Clause(
                        "(a)",
                        "The Servicer shall keep complete and accurate records for "
                        "each Mortgage Loan and shall make them available to the Trustee on "
                        "five Business Days' notice.",
                    ),
                    Clause(
                        "(b)",
                        "The Servicer may delegate any of its duties to a subservicer, provided that:",
                        subclauses=[
                            (
                                "(i)",
                                "the subservicer is approved to service residential "
                                "mortgage loans in each state in which it acts;",
                            ),
                            (
                                "(ii)",
                                "the Servicer gives the Trustee written notice of the "
                                "delegation within ten Business Days; and",
                            ),
                            (
                                "(iii)",
                                "the Servicer remains fully responsible for every act and omission of the subservicer.",
                            ),
                        ],
                    ),
                ],
            ),
            Sect(
                "2.02",
                "Collections and Modifications",
                paragraphs=[
                    "The Servicer shall use commercially reasonable efforts to collect "
                    "every Monthly Payment when due. It may agree to a modification of a "
                    "Mortgage Loan only in the circumstances set out below."
                ],
                clauses=[
                    Clause(
                        "(a)",
                        "A modification is permitted if the Mortgage Loan is sixty or "
                        "more days delinquent, or if the Servicer reasonably believes that a "
                        "default is imminent, and in either case:",
                        subclauses=[
                            (
                                "(i)",
                                "the Servicer expects the modification to produce a "
                                "greater recovery, on a present value basis, than foreclosure; and",
                            ),
                            (
                                "(ii)",
                                "the modified maturity date is no later than the final "
                                "scheduled Distribution Date of the Certificates.",
                            ),
                        ],
                    ),
                    Clause(
                        "(b)",
                        "No modification may forgive principal unless the Trustee has consented in writing.",
                    ),
                ],
            ),
            Sect(
                "2.03",
                "Collection Account",
                paragraphs=[
                    "The Servicer shall open the Collection Account on or before the "
                    "Closing Date. Within two Business Days after receipt it shall "
                    "deposit into the Collection Account all amounts received on the "
                    "Mortgage Loans after the Cut-off Date, including:"
                ],
                clauses=[
                    Clause("(a)", "scheduled payments of principal and interest, net of the Servicing Fee;"),
                    Clause("(b)", "prepayments, whether in full or in part; and"),
                    Clause(
                        "(c)",
                        "proceeds of insurance, condemnation and liquidation, other "
                        "than amounts applied to restore the mortgaged property.",
                    ),
                ],
            ),
            Sect(
                "2.04",
                "Permitted Withdrawals",
                paragraphs=[
                    "The Servicer may withdraw amounts from the Collection Account only for the following purposes:"
                ],
                clauses=[
                    Clause(
                        "(a)",
                        "to remit Available Funds to the Trustee on the Business Day before each Distribution Date;",
                    ),
                    Clause(
                        "(b)",
                        "to reimburse itself for Advances, but only from later "
                        "collections on the same Mortgage Loan, unless the Advance has been "
                        "determined to be nonrecoverable; and",
                    ),
                    Clause("(c)", "to withdraw amounts deposited in error."),
                ],
            ),
            Sect(
                "2.05",
                "Advances",
                paragraphs=[
                    "On each Determination Date the Servicer shall determine the amount "
                    "of each Monthly Payment that was due during the related Collection "
                    "Period and was not received. Unless it determines that the amount "
                    "would not be recoverable from later collections on that Mortgage "
                    "Loan, the Servicer shall deposit an Advance of that amount into the "
                    "Collection Account no later than the Business Day before the "
                    "Distribution Date."
                ],
            ),
        ],
    )


def distributions() -> Article:
    """Article III: the Distribution Account, the order of distributions, the monthly report, losses."""
    return Article(
        "III",
        "DISTRIBUTIONS",
        [
            Sect(
                "3.01",
                "Distribution Account",
                paragraphs=[
                    "The Trustee shall open the Distribution Account in its own name, in "
                    "trust for the Certificateholders. Amounts in the Distribution Account "
                    "may be invested only in obligations of the United States maturing no "
                    "later than the next Distribution Date."
                ],
            ),
            Sect(
                "3.02",
                "Order of Distributions",
                paragraphs=[
                    "On each Distribution Date the Trustee shall distribute the Available Funds in the following order:"
                ],
                clauses=[
                    Clause(
                        "(a)",
                        "to the Trustee, its monthly fee and any expenses it is "
                        "entitled to be reimbursed, up to an annual limit of $150,000;",
                    ),
                    Clause(
                        "(b)",
                        "to the Class A Certificates, interest accrued at their "
                        "pass-through rate, together with any interest unpaid from earlier "
                        "Distribution Dates;",
                    ),
                    Clause(
                        "(c)",
                        "as principal:",
                        subclauses=[
                            (
                                "(i)",
                                "first, to the Class A Certificates, until their principal balance is reduced to zero;",
                            ),
                            (
                                "(ii)",
                                "second, to the Class M Certificates, until their "
                                "principal balance is reduced to zero; and",
                            ),
                            (
                                "(iii)",
                                "third, to the Class B Certificates, until their principal balance is reduced to zero;",
                            ),
                        ],
                    ),
                    Clause("(d)", "to the Class R Certificates, any remaining amount."),
                ],
            ),
            Sect(
                "3.03",
                "Monthly Report",
                paragraphs=[
                    "No later than each Distribution Date the Trustee shall post on its "
                    "investor website a report showing, for that Distribution Date, the "
                    "amounts distributed to each class as interest and as principal, the "
                    "aggregate outstanding Advances, the number and principal balance of "
                    "delinquent Mortgage Loans by delinquency category, and the losses "
                    "realised on Liquidated Loans during the Collection Period."
                ],
            ),
            Sect(
                "3.04",
                "Allocation of Losses",
                paragraphs=[
                    "Losses realised on a Liquidated Loan are allocated on the "
                    "Distribution Date following the Collection Period in which the loan "
                    "became a Liquidated Loan."
                ],
                clauses=[
                    Clause(
                        "(a)",
                        "Losses are allocated first to the Class B Certificates, then "
                        "to the Class M Certificates and last to the Class A Certificates, in "
                        "each case until the principal balance of that class is reduced to "
                        "zero.",
                    ),
                    Clause(
                        "(b)",
                        "A later recovery on a Liquidated Loan is distributed as "
                        "principal and reverses the allocation of the loss in the opposite "
                        "order.",
                    ),
                ],
            ),
        ],
    )


def termination() -> Article:
    """Article IV: optional and final termination, Servicer events of default and the successor."""
    return Article(
        "IV",
        "TERMINATION AND REPLACEMENT",
        [
            Sect(
                "4.01",
                "Optional Termination",
                paragraphs=[
                    "On any Distribution Date on which the aggregate principal balance "
                    "of the Mortgage Loans is less than 10% of that balance as of the "
                    "Cut-off Date, the Servicer may purchase all remaining Mortgage Loans "
                    "from the Trust Fund."
                ],
                clauses=[
                    Clause(
                        "(a)",
                        "The purchase price is the sum of:",
                        subclauses=[
                            (
                                "(i)",
                                "100% of the unpaid principal balance of each Mortgage "
                                "Loan, plus accrued interest; and",
                            ),
                            (
                                "(ii)",
                                "the appraised value of any property acquired by "
                                "foreclosure, less estimated costs of sale.",
                            ),
                        ],
                    ),
                    Clause(
                        "(b)",
                        "The Servicer shall give the Trustee notice of its intention to "
                        "purchase no later than the Determination Date before the "
                        "Distribution Date on which the purchase is to occur.",
                    ),
                ],
            ),
            Sect(
                "4.02",
                "Termination upon Final Distribution",
                paragraphs=[
                    "This Agreement terminates on the Distribution Date on which the last "
                    "amount due to Certificateholders is distributed, whether following a "
                    "purchase under Section 4.01 or the payment or liquidation of the last "
                    "Mortgage Loan."
                ],
            ),
            Sect(
                "4.03",
                "Servicer Events of Default",
                paragraphs=["Each of the following is a Servicer Event of Default:"],
                clauses=[
                    Clause(
                        "(a)",
                        "a failure to remit any amount required to be remitted to the "
                        "Trustee that continues for two Business Days after notice;",
                    ),
                    Clause(
                        "(b)",
                        "a failure to perform any other material obligation that "
                        "continues for sixty days after notice; or",
                    ),
                    Clause("(c)", "the insolvency, receivership or voluntary bankruptcy of the Servicer."),
                ],
            ),
            Sect(
                "4.04",
                "Successor Servicer",
                paragraphs=[
                    "After a Servicer Event of Default the Trustee may, and at the "
                    "direction of holders of 25% of the voting rights shall, terminate the "
                    "Servicer by written notice. The Trustee shall then act as Servicer, or "
                    "appoint a successor with a net worth of at least $15,000,000, and the "
                    "terminated Servicer shall cooperate in the transfer of all records "
                    "and accounts."
                ],
            ),
        ],
    )


def miscellaneous() -> Article:
    """Article V: amendment and governing law."""
    return Article(
        "V",
        "MISCELLANEOUS",
        [
            Sect(
                "5.01",
                "Amendment",
                paragraphs=[
                    "This Agreement may be amended by the parties without the consent of "
                    "Certificateholders to cure an ambiguity or to correct an error. Any "
                    "other amendment requires the consent of holders of 66% of the voting "
                    "rights of each class that is adversely affected."
                ],
            ),
            Sect(
                "5.02",
                "Governing Law",
                paragraphs=[
                    "This Agreement is governed by the laws of the State of New York, "
                    "without regard to its conflict of laws rules."
                ],
            ),
        ],
    )
