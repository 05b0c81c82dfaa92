"""docs/CONFIGURATION.md is what docs/gen_configuration.py writes from the settings' descriptions."""

import subprocess
import sys

from lit3r.config import descriptions
from tests.conftest import ROOT


def test_the_committed_configuration_page_is_the_generated_one():
    res = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_configuration.py")], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    page = (ROOT / "docs" / "CONFIGURATION.md").read_text()
    assert res.stdout == page, "docs/CONFIGURATION.md is stale: python docs/gen_configuration.py > docs/CONFIGURATION.md"
    for key in descriptions():  # every setting is on the page
        assert f"`{key}`" in page or f"`[{key}]`" in page, key
