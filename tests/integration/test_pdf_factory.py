"""The PDF factory is deterministic, its sample looks like a contract, and each hostile variant is hostile. Here,
not in tests/unit: rendering the PDFs (fpdf) takes seconds of the test tools, not of Cairn's logic; `make test`
still runs it (core)."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import replace

import pytest

from tests import pdf_factory as pf
from tests.agreement_sample import sample_spec
from tests.conftest import REPO

pytestmark = pytest.mark.core


def test_same_spec_same_bytes(tmp_path):
    a = pf.write_sample(tmp_path / "a.pdf").read_bytes()
    b = pf.write_sample(tmp_path / "b.pdf").read_bytes()
    assert a == b
    assert a.startswith(b"%PDF-") and a.rstrip().endswith(b"%%EOF")
    other = replace(sample_spec(), effective_date="July 1, 2024")
    assert pf.render(other) != a


def test_hostile_variants_are_deterministic(tmp_path):
    for write in (pf.write_encrypted, pf.write_image_only, pf.write_truncated, pf.write_corrupt, pf.write_not_a_pdf):
        assert write(tmp_path / "1.pdf").read_bytes() == write(tmp_path / "2.pdf").read_bytes(), write


def test_non_latin1_text_is_refused():
    spec = replace(sample_spec(), title="Pooling and Servicing Agreement \u2014 2024")
    with pytest.raises(ValueError, match="latin-1"):
        pf.render(spec)


def test_sample_reads_as_a_contract(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(pf.write_sample(tmp_path / "s.pdf"))
    assert 5 <= len(reader.pages) <= 7
    pages = [p.extract_text() for p in reader.pages]
    for n, text in enumerate(pages, start=1):
        lines = text.splitlines()
        assert lines[0] == "Pooling and Servicing Agreement - Confidential"
        assert lines[-1] == f"Page {n}"
    text = "\n".join(pages)
    assert (
        "This AGREEMENT is dated as of June 1, 2024 between Sample Depositor LLC and "
        "Sample Trust Company, N.A." in " ".join(text.split())
    )  # the line wraps
    assert re.search(r"^ARTICLE I\nDEFINITIONS$", text, re.M)
    assert "Section 1.01 Defined Terms." in text
    for term in ("Determination Date", "Distribution Date", "Servicer", "Trustee", "Collection Account"):
        assert f'"{term}" means' in text
    assert re.search(r"^\(a\) ", text, re.M) and re.search(r"^\(ii\) ", text, re.M)


def test_encrypted_needs_the_password(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(pf.write_encrypted(tmp_path / "e.pdf"))
    assert reader.is_encrypted
    with pytest.raises(pypdf.errors.FileNotDecryptedError):
        reader.pages[0].extract_text()
    assert reader.decrypt("secret")
    assert "Determination Date" in reader.pages[0].extract_text()


def test_image_only_has_no_text_layer(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(pf.write_image_only(tmp_path / "i.pdf"))
    assert len(reader.pages) == 1
    assert reader.pages[0].extract_text().strip() == ""


def test_truncated_corrupt_and_not_a_pdf(tmp_path):
    whole = pf.render(sample_spec())
    cut = pf.write_truncated(tmp_path / "t.pdf").read_bytes()
    assert cut.startswith(b"%PDF-") and len(cut) == int(len(whole) * 0.6) and whole.startswith(cut)
    assert b"%%EOF" not in cut

    corrupt = pf.write_corrupt(tmp_path / "c.pdf").read_bytes()
    assert corrupt.startswith(b"%PDF-1.7\n") and b"%%EOF" not in corrupt

    html = pf.write_not_a_pdf(tmp_path / "n.pdf")
    assert html.suffix == ".pdf" and not html.read_bytes().startswith(b"%PDF")

    pypdf = pytest.importorskip("pypdf")
    for path in (tmp_path / "t.pdf", tmp_path / "c.pdf", html):
        with pytest.raises(pypdf.errors.PdfReadError):
            pypdf.PdfReader(path, strict=True)


def test_committed_sample_agreements_match_the_script():
    """data/legal/*.pdf are what scripts/make_sample_agreements.py writes: rerun it after editing."""
    spec = importlib.util.spec_from_file_location(
        "make_sample_agreements", REPO / "scripts" / "make_sample_agreements.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for name, build in script.AGREEMENTS.items():
        committed = REPO / "data" / "legal" / name
        assert committed.read_bytes() == pf.render(build()), f"{name}: rerun the script"
