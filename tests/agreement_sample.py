"""The default test contract: a pooling and servicing agreement of about six pages, as an AgreementSpec
(tests/agreement_spec.py). Original text, written for the tests."""

from __future__ import annotations

from tests.agreement_spec import AgreementSpec, Article, Clause, Sect


def sample_spec() -> AgreementSpec:
    defs = {
        "Accrual Period": ", with respect to any Distribution Date, the calendar month immediately "
        "preceding the month in which that Distribution Date occurs, computed on the basis of a "
        "360-day year consisting of twelve 30-day months.",
        "Business Day": "any day other than a Saturday, a Sunday or a day on which banking "
        "institutions in the State of New York or in the city in which the Corporate Trust Office "
        "is located are authorized or obligated by law or executive order to be closed.",
        "Certificateholder": "the Person in whose name a Certificate is registered in the "
        "Certificate Register, except that a Certificate registered in the name of the Depositor, "
        "the Servicer or any affiliate of either shall be deemed not to be outstanding for the "
        "purpose of giving any consent or direction under this Agreement.",
        "Closing Date": "the date on which the Certificates are first issued, which is expected "
        "to be the date set out on the cover page of this Agreement.",
        "Collection Account": "the segregated trust account established and maintained by the "
        "Servicer under Section 3.03, entitled in the name of the Trustee for the benefit of the "
        "Certificateholders, into which all collections on the Mortgage Loans are deposited.",
        "Cut-off Date": "the close of business on the last day of the month preceding the month "
        "in which the Closing Date occurs.",
        "Determination Date": ", with respect to any Distribution Date, the fifteenth day of the "
        "calendar month in which that Distribution Date occurs or, if that day is not a Business "
        "Day, the Business Day immediately preceding it.",
        "Distribution Account": "the segregated trust account established and maintained by the "
        "Trustee under Section 4.01, from which distributions to Certificateholders are made.",
        "Distribution Date": "the twenty-fifth day of each calendar month or, if that day is not "
        "a Business Day, the next succeeding Business Day, commencing in the month following the "
        "Closing Date.",
        "Monthly Payment": ", with respect to any Mortgage Loan and any Due Date, the scheduled "
        "payment of principal and interest due on that Due Date under the terms of the related "
        "Mortgage Note, after giving effect to any modification permitted by this Agreement.",
        "Mortgage Loan": "each loan secured by a first lien on residential real property that is "
        "listed on the Mortgage Loan Schedule and transferred to the Trust on the Closing Date, "
        "together with every right to payment arising under it after the Cut-off Date.",
        "Servicer": "the entity named as servicer in the preamble to this Agreement, or any "
        "successor servicer appointed under Section 6.02.",
        "Servicing Fee": ", with respect to each Mortgage Loan and each Distribution Date, one "
        "twelfth of the product of the Servicing Fee Rate and the Stated Principal Balance of that "
        "Mortgage Loan as of the first day of the related Accrual Period.",
        "Trustee": "the entity named as trustee in the preamble to this Agreement, not in its "
        "individual capacity but solely as trustee, and any successor trustee appointed under "
        "Article VI.",
    }
    return AgreementSpec(
        title="Pooling and Servicing Agreement",
        parties=["Sample Depositor LLC", "Sample Trust Company, N.A."],
        effective_date="June 1, 2024",
        recitals=[
            "The Depositor intends to sell pass-through certificates, to be issued under this "
            "Agreement in several classes, which in the aggregate will evidence the entire beneficial "
            "ownership interest in the Trust Fund created by this Agreement.",
            "In consideration of the mutual agreements set out below, the Depositor, the Servicer and "
            "the Trustee agree as follows.",
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
                            "Whenever used in this Agreement, the following words and phrases, "
                            "unless the context otherwise requires, have the meanings set out in "
                            "this Section 1.01."
                        ],
                        definitions=defs,
                    ),
                    Sect(
                        "1.02",
                        "Interpretation",
                        paragraphs=[
                            "Headings are for convenience only and do not affect the "
                            "interpretation of this Agreement. References to an Article or a "
                            "Section are to an Article or a Section of this Agreement unless "
                            "stated otherwise."
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "words in the singular include the plural and words in the "
                                "plural include the singular; and",
                            ),
                            Clause(
                                "(b)",
                                "the word including means including without limitation, and "
                                "the words hereof, herein and hereunder refer to this Agreement as a "
                                "whole.",
                            ),
                        ],
                    ),
                ],
            ),
            Article(
                "II",
                "CONVEYANCE OF MORTGAGE LOANS",
                [
                    Sect(
                        "2.01",
                        "Conveyance of Mortgage Loans",
                        paragraphs=[
                            "The Depositor, concurrently with the execution and delivery of this "
                            "Agreement, sells, transfers, assigns and otherwise conveys to the "
                            "Trustee, for the benefit of the Certificateholders, without recourse, "
                            "all of its right, title and interest in and to the Mortgage Loans."
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "In connection with the transfer, the Depositor shall deliver "
                                "to the Trustee, on or before the Closing Date, the following documents "
                                "for each Mortgage Loan:",
                                subclauses=[
                                    (
                                        "(i)",
                                        "the original Mortgage Note, endorsed in blank or to the "
                                        "order of the Trustee, with all intervening endorsements showing a "
                                        "complete chain of endorsement from the originator;",
                                    ),
                                    (
                                        "(ii)",
                                        "the original recorded Mortgage or, if the original has "
                                        "not yet been returned by the recording office, a copy certified "
                                        "by the closing agent to be a true copy of the original submitted "
                                        "for recording; and",
                                    ),
                                    ("(iii)", "an assignment of the Mortgage to the Trustee in recordable form."),
                                ],
                            ),
                            Clause(
                                "(b)",
                                "The Depositor shall cause each assignment referred to in "
                                "clause (a)(iii) to be submitted for recording within ninety days after "
                                "the Closing Date, unless the Trustee receives an opinion of counsel "
                                "that recording is not required to protect its interest.",
                                subclauses=[
                                    ("(i)", "The cost of recording shall be borne by the Depositor."),
                                    (
                                        "(ii)",
                                        "If an assignment is lost or returned unrecorded, the "
                                        "Depositor shall promptly prepare and submit a substitute.",
                                    ),
                                ],
                            ),
                        ],
                    ),
                    Sect(
                        "2.02",
                        "Acceptance by the Trustee",
                        paragraphs=[
                            "The Trustee acknowledges receipt, subject to the review described "
                            "below, of the documents referred to in Section 2.01 and declares that "
                            "it holds and will hold those documents in trust for the exclusive use "
                            "and benefit of all present and future Certificateholders."
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "Within forty-five days after the Closing Date the Trustee "
                                "shall review each Mortgage File and deliver to the Depositor and the "
                                "Servicer a certification listing every Mortgage Loan whose file is "
                                "incomplete.",
                            ),
                            Clause(
                                "(b)",
                                "If a material defect is not cured within ninety days after "
                                "notice, the Depositor shall repurchase the affected Mortgage Loan at "
                                "the Purchase Price or substitute a qualifying loan for it.",
                                subclauses=[
                                    (
                                        "(i)",
                                        "A repurchase shall be made by deposit of the Purchase "
                                        "Price into the Collection Account.",
                                    ),
                                    (
                                        "(ii)",
                                        "A substitution shall be accompanied by a revised Mortgage Loan Schedule.",
                                    ),
                                ],
                            ),
                        ],
                    ),
                ],
            ),
            Article(
                "III",
                "ADMINISTRATION AND SERVICING",
                [
                    Sect(
                        "3.01",
                        "Servicer to Service Mortgage Loans",
                        paragraphs=[
                            "The Servicer shall service and administer the Mortgage Loans in the "
                            "best interests of the Certificateholders, in accordance with the terms "
                            "of this Agreement and the Mortgage Loans, and with the same care, "
                            "skill and diligence that prudent mortgage lenders exercise for "
                            "comparable loans held for their own account. The Servicer may take "
                            "any action that it considers necessary or desirable in connection "
                            "with that servicing and administration, subject to the limits set "
                            "out below."
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "The Servicer shall not waive, modify or vary any term of a "
                                "Mortgage Loan unless the Mortgage Loan is in default or default is "
                                "reasonably foreseeable.",
                                subclauses=[
                                    (
                                        "(i)",
                                        "No modification shall extend the maturity date beyond the "
                                        "latest maturity date of any other Mortgage Loan in the Trust.",
                                    ),
                                    (
                                        "(ii)",
                                        "No modification shall reduce the mortgage rate below "
                                        "the rate at which the Servicing Fee accrues.",
                                    ),
                                ],
                            ),
                            Clause(
                                "(b)",
                                "The Servicer may enter into subservicing agreements, but "
                                "remains liable for the servicing of the Mortgage Loans as if it alone "
                                "were servicing them.",
                            ),
                        ],
                    ),
                    Sect(
                        "3.02",
                        "Collection of Mortgage Loan Payments",
                        paragraphs=[
                            "The Servicer shall make reasonable efforts to collect all payments "
                            "called for under the Mortgage Loans and shall follow collection "
                            "procedures no less rigorous than those it applies to mortgage loans "
                            "serviced for its own account. The Servicer may waive late payment "
                            "charges in connection with a delinquent payment if, in its reasonable "
                            "judgment, the waiver will maximise recoveries."
                        ],
                    ),
                    Sect(
                        "3.03",
                        "Collection Account",
                        paragraphs=[
                            "The Servicer shall establish and maintain the Collection Account "
                            "with an eligible institution and shall deposit into it, within two "
                            "Business Days after receipt, the following amounts:"
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "all payments of principal on the Mortgage Loans, including "
                                "prepayments in full and in part;",
                            ),
                            Clause("(b)", "all payments of interest on the Mortgage Loans, net of the Servicing Fee;"),
                            Clause(
                                "(c)",
                                "all liquidation proceeds and insurance proceeds, other than "
                                "proceeds applied to the restoration of the mortgaged property; and",
                                subclauses=[
                                    ("(i)", "proceeds of any primary mortgage insurance policy; and"),
                                    ("(ii)", "proceeds of any hazard or flood insurance policy."),
                                ],
                            ),
                            Clause(
                                "(d)",
                                "any amount required to be deposited in connection with a "
                                "repurchase or substitution under Section 2.02.",
                            ),
                        ],
                    ),
                ],
            ),
            Article(
                "IV",
                "DISTRIBUTIONS",
                [
                    Sect(
                        "4.01",
                        "Distribution Account",
                        paragraphs=[
                            "The Trustee shall establish and maintain the Distribution Account. "
                            "On the Business Day before each Distribution Date the Servicer shall "
                            "withdraw from the Collection Account, and remit to the Trustee for "
                            "deposit into the Distribution Account, all amounts on deposit as of "
                            "the related Determination Date, other than amounts the Servicer is "
                            "permitted to retain under this Agreement."
                        ],
                    ),
                    Sect(
                        "4.02",
                        "Priority of Distributions",
                        paragraphs=[
                            "On each Distribution Date the Trustee shall withdraw the available "
                            "funds from the Distribution Account and apply them in the following "
                            "order of priority:"
                        ],
                        clauses=[
                            Clause("(a)", "first, to the Trustee, the trustee fee for that Distribution Date;"),
                            Clause(
                                "(b)",
                                "second, to the holders of each class of senior Certificates, "
                                "pro rata, the interest accrued during the related Accrual Period;",
                            ),
                            Clause(
                                "(c)",
                                "third, as principal, in the following order:",
                                subclauses=[
                                    (
                                        "(i)",
                                        "to the senior Certificates until their principal balance "
                                        "is reduced to zero; and",
                                    ),
                                    (
                                        "(ii)",
                                        "then to the subordinate Certificates, in order of "
                                        "seniority, until each principal balance is reduced to zero.",
                                    ),
                                ],
                            ),
                            Clause("(d)", "fourth, any remainder to the holders of the residual Certificates."),
                        ],
                    ),
                    Sect(
                        "4.03",
                        "Statements to Certificateholders",
                        paragraphs=[
                            "On each Distribution Date the Trustee shall make available to each "
                            "Certificateholder a statement showing the amount distributed as "
                            "principal and as interest, the Servicing Fee paid, the aggregate "
                            "Stated Principal Balance of the Mortgage Loans and the number and "
                            "balance of Mortgage Loans that are thirty, sixty and ninety or more "
                            "days delinquent, each as of the related Determination Date."
                        ],
                    ),
                ],
            ),
            Article(
                "V",
                "TERMINATION",
                [
                    Sect(
                        "5.01",
                        "Termination upon Purchase or Liquidation",
                        paragraphs=[
                            "The obligations and responsibilities of the Depositor, the Servicer "
                            "and the Trustee created by this Agreement terminate upon the earlier "
                            "of the following events:"
                        ],
                        clauses=[
                            Clause(
                                "(a)",
                                "the purchase by the Servicer of all Mortgage Loans remaining "
                                "in the Trust, which it may do on any Distribution Date on which the "
                                "aggregate Stated Principal Balance is less than ten percent of that "
                                "balance as of the Cut-off Date; and",
                            ),
                            Clause(
                                "(b)",
                                "the final payment or other liquidation of the last Mortgage "
                                "Loan remaining in the Trust and the distribution of all amounts due "
                                "to Certificateholders.",
                            ),
                        ],
                    ),
                    Sect(
                        "5.02",
                        "Notice of Termination",
                        paragraphs=[
                            "The Trustee shall give notice of termination to each "
                            "Certificateholder no later than the tenth day of the month of the "
                            "final distribution, specifying the Distribution Date on which the "
                            "final distribution will be made and the place at which Certificates "
                            "must be surrendered for payment."
                        ],
                    ),
                ],
            ),
        ],
    )
