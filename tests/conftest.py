"""Shared paths and fixtures. Real data is read from ../shared/data (never copied here)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CORPUS = SHARED / "corpus"
HARD = SHARED / "hard"
MINERU = SHARED / "mineru"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder; the integration tests need it and fail loudly without it."""
    if not (CORPUS / "pdfs").is_dir():
        pytest.fail(f"real test data missing: {CORPUS / 'pdfs'} (the repo expects ../shared/data beside it)")
    return SHARED
